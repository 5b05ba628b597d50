package org.jwarp.soft;

import org.jwarp.soft.cq.CqProbe;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.jwarp.soft.cq.SoftCompletionQueue;
import org.jwarp.soft.verbs.SoftMemoryRegion;
import org.jwarp.soft.verbs.SoftProtectionDomain;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.QueuePair;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Posting threads transmit inline (they drive the engine under the stream's lock) while the
 * reactor receives and other posters race them: ordering and integrity must hold regardless.
 */
class SoftInlineTransmitTest {
    private static final int POSTERS = 2;
    private static final int MESSAGES = 5000;
    private static final int SLOT = 8192;
    private static final int SLOTS_PER_POSTER = 16;
    private static final int RECVS = 32;
    /** Set for the perturbed run: the reapers pause now and then (past the poll lease). */
    private static volatile boolean jitter;

    /** One end: its posters, and one reaper for its CQ (send completions and receives). */
    private static final class Side {
        final QueuePair qp;
        final SoftCompletionQueue cq;
        final SoftMemoryRegion src;
        final SoftMemoryRegion dst;
        final Semaphore[] slots = new Semaphore[POSTERS];
        /** Receive buffers free at the peer: a send is posted only with a credit. */
        final Semaphore peerCredits = new Semaphore(RECVS);
        final long[] nextSendDone = new long[POSTERS];
        final long[] nextRecv = new long[POSTERS];
        Side peer;
        int recvCount;
        int sendCount;

        Side(QueuePair qp, SoftCompletionQueue cq, SoftFixture f, SoftProtectionDomain pd) throws Exception {
            this.qp = qp;
            this.cq = cq;
            src = f.region(pd, POSTERS * SLOTS_PER_POSTER * SLOT, Access.LOCAL_WRITE);
            dst = f.region(pd, RECVS * SLOT, Access.LOCAL_WRITE);
            for (int i = 0; i < POSTERS; i++) {
                slots[i] = new Semaphore(SLOTS_PER_POSTER);
            }
        }

        void postAllReceives() throws Exception {
            for (int i = 0; i < RECVS; i++) {
                qp.postRecv(i, dst, i * SLOT, SLOT);
            }
        }

        static int length(long id) {
            return 8 + (int) Math.floorMod((id * 2654435761L) >>> 7, (long) (SLOT - 8));
        }

        static byte pattern(long id, int i) {
            return (byte) (id * 31 + i * 7);
        }

        void poster(int t) throws Exception {
            SendRequest wr = new SendRequest();
            for (long seq = 0; seq < MESSAGES; seq++) {
                long id = ((long) t << 32) | seq;
                assertTrue(slots[t].tryAcquire(10, TimeUnit.SECONDS), "send slot");
                assertTrue(peerCredits.tryAcquire(10, TimeUnit.SECONDS), "receive credit");
                int off = (t * SLOTS_PER_POSTER + (int) (seq % SLOTS_PER_POSTER)) * SLOT;
                int len = length(id);
                ByteBuffer b = src.buffer();
                b.putLong(off, id);
                for (int i = 8; i < len; i++) {
                    b.put(off + i, pattern(id, i));
                }
                qp.postSend(wr.send(id, src, off, len));
            }
        }

        void reaper() throws Exception {
            WorkCompletion[] out = SoftFixture.wcs(16);
            while (recvCount < POSTERS * MESSAGES || sendCount < POSTERS * MESSAGES) {
                if (jitter && java.util.concurrent.ThreadLocalRandom.current().nextInt(16) == 0) {
                    // away from the CQ longer than the poll lease: the reactor takes the stream back
                    java.util.concurrent.locks.LockSupport.parkNanos(
                            java.util.concurrent.ThreadLocalRandom.current().nextLong(3_000_000));
                }
                int n = cq.await(out, out.length, 10, TimeUnit.SECONDS);
                if (n == 0) {
                    throw new AssertionError("no completion within 10 s (recv " + recvCount + ", send " + sendCount
                            + ")\n" + stallReport(this));
                }
                for (int k = 0; k < n; k++) {
                    WorkCompletion wc = out[k];
                    assertEquals(WcStatus.SUCCESS, wc.status, wc.toString());
                    if (wc.opcode == WcOpcode.RECV) {
                        onRecv(wc);
                    } else {
                        assertEquals(WcOpcode.SEND, wc.opcode);
                        int t = (int) (wc.wrId >>> 32);
                        assertEquals(nextSendDone[t]++, wc.wrId & 0xFFFFFFFFL, "send completions in posting order");
                        sendCount++;
                        slots[t].release();
                    }
                }
            }
        }

        private void onRecv(WorkCompletion wc) throws Exception {
            int slot = (int) wc.wrId;
            int off = slot * SLOT;
            ByteBuffer b = dst.buffer();
            long id = b.getLong(off);
            int t = (int) (id >>> 32);
            assertEquals(nextRecv[t]++, id & 0xFFFFFFFFL, "a poster's messages arrive in its posting order");
            assertEquals(length(id), wc.byteLength, "length of message " + Long.toHexString(id));
            for (int i = 8; i < wc.byteLength; i++) {
                if (b.get(off + i) != pattern(id, i)) {
                    throw new AssertionError("message " + Long.toHexString(id) + " corrupt at byte " + i);
                }
            }
            recvCount++;
            qp.postRecv(slot, dst, off, SLOT);
            peer.peerCredits.release();
        }
    }

    @Test
    @DisplayName("RFC 5040 §5.5: concurrent posters transmitting inline keep per-QP order and payload integrity")
    void concurrentInlinePostersKeepOrderAndIntegrity_5040_5_5() throws Exception {
        exchange(false);
    }

    /**
     * The same exchange with every race window widened: the thread holding a stream's I/O lock is
     * delayed at random at each data-path site (posters, pollers and the reactor then find the lock
     * busy), the reapers stay away past the poll lease (the reactor takes the streams back and the
     * next wait claims them again), and an 8 KiB socket send buffer makes most gathering writes
     * partial (OP_WRITE resumes them). About 500 repetitions of these variants passed in session 13.
     */
    @Test
    @DisplayName("RFC 5040 §5.5: order and integrity hold with the lock holder delayed, lease revocations and partial writes")
    void concurrentInlinePostersUnderJitterAndPartialWrites_5040_5_5() throws Exception {
        exchange(true);
    }

    /** Delays the thread holding the stream's I/O lock now and then, at every data-path site. */
    private static void delayLockHolder(SoftStream s) throws java.io.IOException {
        s.channel().setOption(java.net.StandardSocketOptions.SO_SNDBUF, 8192);
        s.lockIo();
        try {
            s.faults(at -> {
                java.util.concurrent.ThreadLocalRandom r = java.util.concurrent.ThreadLocalRandom.current();
                int x = r.nextInt(32);
                if (x == 0) {
                    java.util.concurrent.locks.LockSupport.parkNanos(r.nextLong(2_000_000));
                } else if (x < 8) {
                    Thread.yield();
                }
            });
        } finally {
            s.io.unlock();
        }
    }

    private static void exchange(boolean perturbed) throws Exception {
        jitter = perturbed;
        try (SoftFixture f = new SoftFixture();
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
            if (perturbed) {
                delayLockHolder(SoftFixture.stream(p.initiator()));
                delayLockHolder(SoftFixture.stream(p.responder()));
            }
            Side a = new Side(p.initiator().queuePair(), f.cq, f, f.pd);
            Side b = new Side(p.responder().queuePair(), f.cq2, f, f.pd2);
            a.peer = b;
            b.peer = a;
            a.postAllReceives();
            b.postAllReceives();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> threads = new ArrayList<>();
            for (Side s : new Side[] {a, b}) {
                threads.add(new Thread(() -> run(failure, s::reaper), "reaper"));
                for (int t = 0; t < POSTERS; t++) {
                    int tt = t;
                    threads.add(new Thread(() -> run(failure, () -> s.poster(tt)), "poster-" + t));
                }
            }
            threads.forEach(Thread::start);
            for (Thread t : threads) {
                t.join(120_000);
            }
            assertNull(failure.get(), () -> "worker failed: " + stackOf(failure.get()));
            for (Thread t : threads) {
                assertTrue(!t.isAlive(), t.getName() + " still running");
            }
            for (Side s : new Side[] {a, b}) {
                assertEquals(POSTERS * MESSAGES, s.recvCount);
                assertEquals(POSTERS * MESSAGES, s.sendCount);
            }
            assertEquals(0, f.cq.overruns());
            assertEquals(0, f.cq2.overruns());
            assertTrue(p.initiator().isOpen() && p.responder().isOpen());
        }
    }

    /** Both ends, their CQs and every thread's stack: what a stall left behind. */
    private static String stallReport(Side s) {
        StringBuilder b = new StringBuilder();
        for (Side x : new Side[] {s, s.peer}) {
            b.append(x == s ? "this side: " : "peer side: ").append(x.qp).append('\n').append("  ")
                    .append(CqProbe.debugState(x.cq)).append("\n  recv ").append(x.recvCount).append(" send ")
                    .append(x.sendCount).append(" credits ").append(x.peerCredits.availablePermits()).append('\n');
        }
        for (java.util.Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            b.append('"').append(e.getKey().getName()).append("\" ").append(e.getKey().getState()).append('\n');
            for (StackTraceElement f : e.getValue()) {
                b.append("    at ").append(f).append('\n');
            }
        }
        return b.toString();
    }

    private interface Body {
        void run() throws Exception;
    }

    private static String stackOf(Throwable t) {
        java.io.StringWriter w = new java.io.StringWriter();
        t.printStackTrace(new java.io.PrintWriter(w));
        return w.toString();
    }

    private static void run(AtomicReference<Throwable> failure, Body body) {
        try {
            body.run();
        } catch (Throwable t) {
            failure.compareAndSet(null, t);
        }
    }
}
