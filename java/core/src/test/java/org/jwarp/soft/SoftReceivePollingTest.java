package org.jwarp.soft;

import org.jwarp.soft.cq.CqProbe;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.jwarp.soft.SoftFixture.stream;
import static org.jwarp.soft.SoftFixture.waitUntil;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.jwarp.soft.verbs.SoftMemoryRegion;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.QueuePair;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Receive polling (SoftCompletionQueue's leader/follower scheme): a thread awaiting a CQ reads its
 * streams' sockets itself, while the reactor stays responsible for everything nobody polls.
 * Ordering (RFC 5040 §5.5), flush on teardown (RFC 5040 §6.2.2) and liveness must hold either way.
 */
class SoftReceivePollingTest {
    private static final int SIZE = 512;

    private static SoftConfig config(int spinMicros, int leaseMicros) {
        return SoftConfig.defaults().withTimeouts(Duration.ofSeconds(5), Duration.ofSeconds(5), Duration.ofSeconds(5))
                .withPolling(spinMicros, 4, leaseMicros);
    }


    @Test
    @DisplayName("RFC 5040 §5.5: a polling thread reaps its own Send completions in order while the reactor serves the peer")
    void pollerReapsInOrderWhileReactorRuns_5040_5_5() throws Exception {
        try (SoftFixture f = new SoftFixture(config(20, 1000));
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
            SoftMemoryRegion src = f.region(f.pd, SIZE, Access.LOCAL_WRITE);
            SoftMemoryRegion dst = f.region(f.pd, 8 * SIZE, Access.LOCAL_WRITE);
            SoftMemoryRegion echoBuf = f.region(f.pd2, 8 * SIZE, Access.LOCAL_WRITE);
            QueuePair a = p.initiator().queuePair();
            QueuePair b = p.responder().queuePair();
            int rounds = 3000;
            for (int i = 0; i < 8; i++) {
                a.postRecv(i, dst, i * SIZE, SIZE);
                b.postRecv(i, echoBuf, i * SIZE, SIZE);
            }
            AtomicReference<Throwable> failure = new AtomicReference<>();
            // The responder side echoes from a thread that only polls (never awaits): its stream
            // is read by the reactor unless a poller already holds it.
            Thread echo = new Thread(() -> {
                try {
                    WorkCompletion[] out = SoftFixture.wcs(8);
                    SendRequest wr = new SendRequest();
                    long expect = 0;
                    int echoed = 0;
                    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                    while (echoed < rounds && System.nanoTime() < end) {
                        int n = f.cq2.poll(out, out.length);
                        for (int k = 0; k < n; k++) {
                            WorkCompletion wc = out[k];
                            assertEquals(WcStatus.SUCCESS, wc.status, wc.toString());
                            if (wc.opcode != WcOpcode.RECV) {
                                continue;
                            }
                            int slot = (int) (wc.wrId % 8);
                            assertEquals(expect++ % 8, slot, "receives complete in posting order");
                            long v = echoBuf.buffer().getLong(slot * SIZE);
                            b.postRecv(wc.wrId, echoBuf, slot * SIZE, SIZE);
                            b.postSend(wr.send(v, echoBuf, slot * SIZE, SIZE));
                            echoed++;
                        }
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }, "echo");
            echo.start();
            WorkCompletion[] out = SoftFixture.wcs(8);
            SendRequest wr = new SendRequest();
            ByteBuffer s = src.buffer();
            long nextSend = 0;
            long nextRecv = 0;
            boolean sawPolled = false;
            for (long r = 0; r < rounds; r++) {
                s.putLong(0, r * 31);
                a.postSend(wr.send(r, src, 0, SIZE));
                boolean gotRecv = false;
                while (!gotRecv) {
                    int n = f.cq.await(out, out.length, 5, TimeUnit.SECONDS);
                    assertTrue(n > 0, "completion within 5 s at round " + r + ": " + a);
                    for (int k = 0; k < n; k++) {
                        WorkCompletion wc = out[k];
                        assertEquals(WcStatus.SUCCESS, wc.status, wc.toString());
                        if (wc.opcode == WcOpcode.SEND) {
                            assertEquals(nextSend++, wc.wrId, "send completions in posting order");
                        } else {
                            assertEquals(WcOpcode.RECV, wc.opcode);
                            assertEquals(nextRecv++ % 8, wc.wrId % 8, "receives in posting order");
                            int slot = (int) (wc.wrId % 8);
                            assertEquals(r * 31, dst.buffer().getLong(slot * SIZE), "echoed payload of round " + r);
                            a.postRecv(wc.wrId + 8, dst, slot * SIZE, SIZE);
                            gotRecv = true;
                        }
                    }
                }
                sawPolled |= stream(p.initiator()).receiver.isPolled();
            }
            echo.join(10_000);
            assertNull(failure.get(), () -> "echo failed: " + failure.get());
            assertEquals(rounds, nextRecv);
            assertTrue(sawPolled, "the awaiting thread took the initiator's stream over from the reactor");
            assertTrue(p.initiator().isOpen() && p.responder().isOpen());
        }
    }

    @Test
    @DisplayName("RFC 5040 §5.5: a leader and a follower awaiting one CQ together get every completion exactly once")
    void leaderAndFollowerShareOneCq_5040_5_5() throws Exception {
        try (SoftFixture f = new SoftFixture(config(5, 1000));
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
            SoftMemoryRegion src = f.region(f.pd2, SIZE, Access.LOCAL_WRITE);
            SoftMemoryRegion dst = f.region(f.pd, 32 * SIZE, Access.LOCAL_WRITE);
            QueuePair a = p.initiator().queuePair();
            QueuePair b = p.responder().queuePair();
            int total = 4000;
            for (int i = 0; i < 32; i++) {
                a.postRecv(i, dst, i * SIZE, SIZE);
            }
            AtomicInteger reaped = new AtomicInteger();
            AtomicInteger reposted = new AtomicInteger(32);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            java.util.concurrent.Semaphore credits = new java.util.concurrent.Semaphore(32);
            Runnable reaper = () -> {
                try {
                    WorkCompletion[] out = SoftFixture.wcs(4);
                    while (reaped.get() < total) {
                        int n = f.cq.await(out, out.length, 200, TimeUnit.MILLISECONDS);
                        for (int k = 0; k < n; k++) {
                            assertEquals(WcStatus.SUCCESS, out[k].status, out[k].toString());
                            assertEquals(WcOpcode.RECV, out[k].opcode);
                            reaped.incrementAndGet();
                            int id = reposted.getAndIncrement();
                            a.postRecv(id, dst, (int) (out[k].wrId % 32) * SIZE, SIZE);
                            credits.release();
                        }
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            };
            Thread t1 = new Thread(reaper, "reaper-1");
            Thread t2 = new Thread(reaper, "reaper-2");
            t1.start();
            t2.start();
            SendRequest wr = new SendRequest();
            WorkCompletion[] sc = SoftFixture.wcs(16);
            for (int i = 0; i < total; i++) {
                assertTrue(credits.tryAcquire(10, TimeUnit.SECONDS), "receive credit at " + i + ": " + a);
                b.postSend(wr.send(i, src, 0, SIZE));
                while (f.cq2.poll(sc, sc.length) > 0) {
                    assertEquals(WcStatus.SUCCESS, sc[0].status);
                }
            }
            t1.join(20_000);
            t2.join(20_000);
            assertNull(failure.get(), () -> "reaper failed: " + failure.get());
            assertEquals(total, reaped.get(), "every receive completed exactly once");
            assertEquals(0, f.cq.size(), "nothing left over");
            assertEquals(0, f.cq.overruns());
        }
    }

    @Test
    @DisplayName("RFC 5040 §4.3: after the poller goes away the reactor takes the stream back and answers the peer's RDMA Reads")
    void leaseHandsStreamBackToReactor_5040_4_3() throws Exception {
        try (SoftFixture f = new SoftFixture(config(5, 500));
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
            SoftMemoryRegion src = f.region(f.pd, SIZE, Access.LOCAL_WRITE);
            SoftMemoryRegion exposed = f.region(f.pd, SIZE, Access.LOCAL_WRITE, Access.REMOTE_READ);
            SoftMemoryRegion sink = f.region(f.pd2, SIZE, Access.LOCAL_WRITE);
            SoftMemoryRegion rbuf = f.region(f.pd2, SIZE, Access.LOCAL_WRITE);
            QueuePair a = p.initiator().queuePair();
            QueuePair b = p.responder().queuePair();
            // The initiator's thread awaits once: it becomes the leader and keeps the stream.
            b.postRecv(1, rbuf, 0, SIZE);
            a.postSend(new SendRequest().send(1, src, 0, 64));
            WorkCompletion wc = SoftFixture.one(f.cq);
            assertEquals(WcOpcode.SEND, wc.opcode);
            assertEquals(WcOpcode.RECV, SoftFixture.one(f.cq2).opcode);
            SoftStream s = stream(p.initiator());
            // The thread now never comes back to the CQ; the lease runs out and the reactor reads.
            waitUntil("the reactor took the stream back", () -> !s.receiver.isPolled());
            for (int i = 0; i < SIZE; i++) {
                exposed.buffer().put(i, (byte) (i * 7));
            }
            for (int r = 0; r < 20; r++) {
                b.postSend(new SendRequest().read(100 + r, sink, 0, SIZE, exposed.address(), exposed.rkey()));
                WorkCompletion rc = SoftFixture.one(f.cq2);
                assertEquals(WcStatus.SUCCESS, rc.status, rc.toString());
                assertEquals(WcOpcode.RDMA_READ, rc.opcode);
            }
            for (int i = 0; i < SIZE; i++) {
                assertEquals((byte) (i * 7), sink.buffer().get(i), "Read Response byte " + i);
            }
            assertFalse(s.receiver.isPolled(), "nobody polled the initiator's CQ meanwhile");
        }
    }

    @Test
    @DisplayName("RFC 5040 §5.5: after the lease took a CQ's streams back, the next awaiting thread takes all of them over again, not only those it reads")
    void leaderReclaimsEveryStreamAfterLease_5040_5_5() throws Exception {
        // A lease of 300 ms, to wait out twice.
        int n = 4;
        try (SoftFixture f = new SoftFixture(config(5, 300_000))) {
            SoftFixture.Pair[] pairs = new SoftFixture.Pair[n];
            SoftStream[] streams = new SoftStream[n];
            try {
                for (int i = 0; i < n; i++) {
                    pairs[i] = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build());
                    streams[i] = stream(pairs[i].initiator());
                }
                SoftMemoryRegion src = f.region(f.pd2, SIZE, Access.LOCAL_WRITE);
                SoftMemoryRegion dst = f.region(f.pd, 4 * SIZE, Access.LOCAL_WRITE);
                QueuePair a = pairs[0].initiator().queuePair();
                QueuePair b = pairs[0].responder().queuePair();
                for (int round = 0; round < 2; round++) {
                    a.postRecv(round, dst, round * SIZE, SIZE);
                    CompletableFuture<WorkCompletion> got = CompletableFuture.supplyAsync(() -> {
                        try {
                            return SoftFixture.one(f.cq);
                        } catch (InterruptedException e) {
                            throw new IllegalStateException(e);
                        }
                    });
                    // The awaiting thread leads with no completion in sight; the lease does not run meanwhile.
                    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
                    while (!allPolled(streams) && System.nanoTime() < end) {
                        Thread.sleep(1);
                    }
                    for (int i = 0; i < n; i++) {
                        assertTrue(streams[i].receiver.isPolled(), "round " + round + ": the awaiting thread holds stream "
                                + i + " (else its reactor reads it and has to wake the thread for every message)");
                    }
                    b.postSend(new SendRequest().send(round, src, 0, SIZE)); // traffic on the first stream only
                    WorkCompletion wc = got.get(SoftFixture.SETUP_SECONDS, TimeUnit.SECONDS);
                    assertEquals(WcOpcode.RECV, wc.opcode, wc.toString());
                    // The thread stays away from the CQ: the reactor takes every stream back.
                    for (SoftStream s : streams) {
                        waitUntil("the reactor took the stream back", () -> !s.receiver.isPolled());
                    }
                }
            } finally {
                for (SoftFixture.Pair p : pairs) {
                    if (p != null) {
                        p.close();
                    }
                }
            }
        }
    }

    private static boolean allPolled(SoftStream[] streams) {
        for (SoftStream s : streams) {
            if (!s.receiver.isPolled()) {
                return false;
            }
        }
        return true;
    }

    @Test
    @DisplayName("RFC 5040 §4.3: CompletionQueue.progress places a peer's RDMA Write on a stream the spinning thread holds, not the reactor after the lease")
    void progressPlacesWriteOnHeldStream_5040_4_3() throws Exception {
        // A lease of 1 s: the reactor cannot take the stream back while the test looks
        try (SoftFixture f = new SoftFixture(config(5, 1_000_000));
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
            SoftMemoryRegion sink = f.region(f.pd, SIZE, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
            SoftMemoryRegion src = f.region(f.pd2, SIZE, Access.LOCAL_WRITE);
            QueuePair b = p.responder().queuePair();
            SoftStream s = stream(p.initiator());
            WorkCompletion[] out = SoftFixture.wcs(4);
            // ib_write_lat's thread: an empty poll of its CQ takes its stream over from the reactor
            assertEquals(0, f.cq.poll(out, out.length));
            waitUntil("the polling thread holds the stream", () -> {
                f.cq.poll(out, out.length);
                return s.receiver.isPolled();
            });
            for (int round = 1; round <= 20; round++) {
                for (int i = 0; i < SIZE; i++) {
                    src.buffer().put(i, (byte) (round * 7 + i)); // last byte 7r - 1: new each round, never 0
                }
                b.postSend(new SendRequest().write(round, src, 0, SIZE, sink.address(), sink.rkey()));
                WorkCompletion wc = SoftFixture.one(f.cq2); // the peer's socket took the Write
                assertEquals(WcStatus.SUCCESS, wc.status, wc.toString());
                long reads = s.receiver.pollReads;
                long start = System.nanoTime();
                // spin on the last byte as ib_write_lat does, driving progress
                while (sink.buffer().get(SIZE - 1) != (byte) (round * 7 + SIZE - 1)) {
                    f.cq.progress();
                    assertTrue(System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(900),
                            "Write of round " + round + " placed by progress() within the lease: " + s);
                }
                assertTrue(s.receiver.isPolled(), "the spinning thread, not the reactor, read round " + round);
                assertTrue(s.receiver.pollReads > reads, "progress() read the socket in round " + round);
                for (int i = 0; i < SIZE; i++) {
                    assertEquals((byte) (round * 7 + i), sink.buffer().get(i), "byte " + i + " of round " + round);
                }
            }
            assertEquals(0, f.cq.poll(out, out.length), "progress() took no completion: a Write makes none here");
        }
    }

    @Test
    @DisplayName("RFC 5040 §6.2.2: a peer close met by a thread blocked on the sockets flushes its receives to it")
    void peerCloseWhileLeaderBlocksFlushes_5040_6_2_2() throws Exception {
        try (SoftFixture f = new SoftFixture(config(5, 1000));
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
            SoftMemoryRegion dst = f.region(f.pd, 4 * SIZE, Access.LOCAL_WRITE);
            QueuePair a = p.initiator().queuePair();
            for (int i = 0; i < 4; i++) {
                a.postRecv(i, dst, i * SIZE, SIZE);
            }
            AtomicReference<Throwable> failure = new AtomicReference<>();
            AtomicInteger flushed = new AtomicInteger();
            CountDownLatch waiting = new CountDownLatch(1);
            Thread leader = new Thread(() -> {
                try {
                    WorkCompletion[] out = SoftFixture.wcs(4);
                    waiting.countDown();
                    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                    while (flushed.get() < 4 && System.nanoTime() < end) {
                        int n = f.cq.await(out, out.length, 10, TimeUnit.SECONDS);
                        for (int k = 0; k < n; k++) {
                            assertEquals(WcStatus.WR_FLUSH_ERR, out[k].status, out[k].toString());
                            assertEquals(flushed.getAndIncrement(), out[k].wrId, "flushed in posting order");
                        }
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }, "leader");
            leader.start();
            waiting.await();
            waitUntil("the leader holds the stream", () -> stream(p.initiator()).receiver.isPolled());
            Thread.sleep(20); // let it block on the socket
            long t0 = System.nanoTime();
            p.responder().close();
            leader.join(30_000);
            assertFalse(leader.isAlive(), "the blocked leader returned");
            assertNull(failure.get(), () -> "leader failed: " + failure.get());
            assertEquals(4, flushed.get(), "every receive flushed");
            // "no hang": the flush follows the peer's close at once; 15 s tolerates a loaded CI machine
            assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(15), "flushed promptly");
            waitUntil("the stream is closed", () -> !p.initiator().isOpen());
        }
    }

    @Test
    @DisplayName("Closing the CQ or the connection while a thread spins or blocks in await never hangs it")
    void closeWhilePolling() throws Exception {
        try (SoftFixture f = new SoftFixture(config(1000, 1000));
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
            SoftMemoryRegion dst = f.region(f.pd, SIZE, Access.LOCAL_WRITE);
            p.initiator().queuePair().postRecv(7, dst, 0, SIZE);
            AtomicReference<Object> result = new AtomicReference<>();
            Thread t = new Thread(() -> {
                try {
                    WorkCompletion[] out = SoftFixture.wcs(1);
                    int n = f.cq.await(out, 1, 30, TimeUnit.SECONDS);
                    result.set(n == 1 ? out[0].status : "none");
                } catch (Throwable e) {
                    result.set(e);
                }
            }, "spinner");
            t.start();
            waitUntil("the awaiting thread holds the stream", () -> stream(p.initiator()).receiver.isPolled());
            p.initiator().close();
            t.join(30_000);
            assertFalse(t.isAlive(), "await returned after the local close");
            assertEquals(WcStatus.WR_FLUSH_ERR, result.get(), "the posted receive flushed (RFC 5040 §6.2.2)");
            assertEquals(0, CqProbe.streamCount(f.cq), "the closed stream left the CQ");

            Thread u = new Thread(() -> {
                try {
                    result.set(f.cq2.await(SoftFixture.wcs(1), 1, 30, TimeUnit.SECONDS));
                } catch (Throwable e) {
                    result.set(e);
                }
            }, "blocked");
            u.start();
            Thread.sleep(50);
            f.cq2.close();
            u.join(30_000);
            assertFalse(u.isAlive(), "await returned after the CQ closed");
        }
    }

    @Test
    @DisplayName("jwarp.soft.pollSpinMicros=0 keeps every stream on the reactor")
    void pollingOff() throws Exception {
        try (SoftFixture f = new SoftFixture(config(0, 1000));
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
            SoftMemoryRegion src = f.region(f.pd, SIZE, Access.LOCAL_WRITE);
            SoftMemoryRegion dst = f.region(f.pd2, SIZE, Access.LOCAL_WRITE);
            for (int i = 0; i < 50; i++) {
                p.responder().queuePair().postRecv(i, dst, 0, SIZE);
                p.initiator().queuePair().postSend(new SendRequest().send(i, src, 0, SIZE));
                assertEquals(WcStatus.SUCCESS, SoftFixture.one(f.cq).status);
                assertEquals(WcStatus.SUCCESS, SoftFixture.one(f.cq2).status);
                assertFalse(stream(p.initiator()).receiver.isPolled());
                assertFalse(stream(p.responder()).receiver.isPolled());
            }
        }
    }
}
