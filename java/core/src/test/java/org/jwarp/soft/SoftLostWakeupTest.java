package org.jwarp.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jwarp.soft.cm.SoftListener;
import org.jwarp.soft.cq.SoftCompletionQueue;
import org.jwarp.soft.verbs.SoftMemoryRegion;
import org.jwarp.soft.verbs.SoftProtectionDomain;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * No lost wake-up in the transmit path: posted RDMA Writes and Reads (RFC 5040 §5.1, §5.2) must
 * always reach the wire, whichever thread (poster, CQ poller, reactor) last touched the stream.
 * Two providers (two reactors, like two processes) exchange 1 MiB Writes 32 deep and 1 MiB Reads
 * 16 deep in both directions at once while busy threads compete for every core, so threads are
 * descheduled at arbitrary points of the hand-over between them. A stall shows as a missing
 * completion; the failure names the stuck QP's state and the provider threads' stacks.
 */
class SoftLostWakeupTest {
    private static final int SIZE = 1 << 20;
    private static final int WRITE_DEPTH = 32;
    private static final int READ_DEPTH = 16;
    /** Operations per phase before the driver switches between Writes and Reads. */
    private static final int PHASE_OPS = 192;
    /** Writes are signaled every this many (as perftest's --cq-mod); a multiple of it fills a phase. */
    private static final int SIGNAL_EVERY = 8;
    /** Traffic time; the whole test stays well under a minute. */
    private static final long RUN_NANOS = TimeUnit.SECONDS.toNanos(20);
    /** A completion that has not come after this is a stall (a passing run sees milliseconds). */
    private static final long STALL_SECONDS = 8;

    /** One end: its provider, connection, CQ and regions. */
    private static final class End {
        SoftProvider provider;
        SoftCompletionQueue cq;
        Connection c;
        SoftMemoryRegion src;
        SoftMemoryRegion sink;
        SoftMemoryRegion exposed;
        final WorkCompletion[] wcs = SoftFixture.wcs(64);
        long ops;
    }

    @Test
    @DisplayName("RFC 5040 §5.1/§5.2: 1 MiB Writes 32 deep and Reads 16 deep both ways under CPU contention never stall")
    void noLostWakeupUnderCpuContention_5040_5() throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> hogs = new ArrayList<>();
        int nHogs = Math.max(2, 2 * Runtime.getRuntime().availableProcessors());
        for (int i = 0; i < nHogs; i++) {
            Thread t = new Thread(() -> {
                long x = 0;
                while (!stop.get()) {
                    x += System.nanoTime() & 1; // keeps the core busy; no sleep, no yield
                }
                if (x == 42) {
                    System.out.print("");
                }
            }, "cpu-hog-" + i);
            t.setDaemon(true);
            hogs.add(t);
        }
        End a = new End();
        End b = new End();
        SoftConfig cfg = SoftConfig.defaults().withTimeouts(Duration.ofSeconds(20), Duration.ofSeconds(20),
                Duration.ofSeconds(20));
        try (SoftProvider pa = new SoftProvider(cfg); SoftProvider pb = new SoftProvider(cfg)) {
            a.provider = pa;
            b.provider = pb;
            connect(a, b);
            hogs.forEach(Thread::start);
            // one side drives while the other is passive (its reactor alone answers), then both at once
            runPhase(a, b, false, RUN_NANOS / 4);
            runPhase(b, a, false, RUN_NANOS / 4);
            runPhase(a, b, true, RUN_NANOS / 2);
            stop.set(true);
            // the data still arrives intact afterwards
            checkedWrite(a, b, 7);
            checkedWrite(b, a, 9);
            System.out.printf("lost wake-up check: %d ops from A, %d ops from B under %d CPU hogs%n", a.ops, b.ops,
                    nHogs);
        } finally {
            stop.set(true);
            for (Thread t : hogs) {
                t.join(2000);
            }
        }
    }

    private static void runPhase(End a, End b, boolean both, long nanos) throws Exception {
        long end = System.nanoTime() + nanos;
        CompletableFuture<Void> fa = CompletableFuture.runAsync(() -> drive(a, b, end));
        CompletableFuture<Void> fb = both ? CompletableFuture.runAsync(() -> drive(b, a, end))
                : CompletableFuture.completedFuture(null);
        try {
            fa.get(nanos / 1_000_000_000L + 3 * STALL_SECONDS, TimeUnit.SECONDS);
            fb.get(3 * STALL_SECONDS, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new AssertionError(e.getCause().getMessage(), e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("the drivers did not finish: " + state(a, b));
        }
    }

    private static void connect(End a, End b) throws Exception {
        SoftDevice da = a.provider.open(SoftFixture.LOOPBACK);
        SoftDevice db = b.provider.open(SoftFixture.LOOPBACK);
        SoftProtectionDomain pdA = da.allocateProtectionDomain();
        SoftProtectionDomain pdB = db.allocateProtectionDomain();
        a.cq = da.createCompletionQueue(512);
        b.cq = db.createCompletionQueue(512);
        for (End e : new End[] {a, b}) {
            SoftProtectionDomain pd = e == a ? pdA : pdB;
            e.src = pd.register(ByteBuffer.allocateDirect(SIZE), EnumSet.of(Access.LOCAL_WRITE));
            e.sink = pd.register(ByteBuffer.allocateDirect(SIZE), EnumSet.of(Access.LOCAL_WRITE));
            e.exposed = pd.register(ByteBuffer.allocateDirect(SIZE),
                    EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ));
        }
        SoftListener l = (SoftListener) db.connectionManager().listen(new InetSocketAddress(SoftFixture.LOOPBACK, 0), 4);
        ConnectionParameters params = SoftFixture.p2p().ird(READ_DEPTH).ord(READ_DEPTH).build();
        CompletableFuture<Connection> acc = CompletableFuture.supplyAsync(() -> {
            try {
                return l.next(Duration.ofSeconds(20)).accept(new QueuePairConfig(pdB, b.cq, b.cq, 128, 8), params);
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        a.c = da.connectionManager().connect(l.localAddress(), new QueuePairConfig(pdA, a.cq, a.cq, 128, 8), params,
                Duration.ofSeconds(20));
        b.c = acc.get(20, TimeUnit.SECONDS);
    }

    /**
     * Keeps a window of Writes (then of Reads, alternating every {@value #PHASE_OPS} operations)
     * outstanding from {@code me} to {@code peer} until {@code end}, posting a chain whenever
     * completions make room (as ib_write_bw / ib_read_bw do).
     */
    private static void drive(End me, End peer, long end) {
        SendRequest[] chain = new SendRequest[WRITE_DEPTH];
        for (int i = 0; i < chain.length; i++) {
            chain[i] = new SendRequest();
        }
        long id = 0;
        try {
            for (long round = 0; System.nanoTime() < end; round++) {
                boolean reads = (round & 1) == 1;
                int window = reads ? READ_DEPTH : WRITE_DEPTH;
                int posted = 0;
                int done = 0;
                while (done < PHASE_OPS) {
                    int room = Math.min(PHASE_OPS - posted, window - (posted - done));
                    if (!reads) {
                        room -= room % SIGNAL_EVERY; // whole signaling groups, so every Write is retired by a completion
                    }
                    if (room > 0) {
                        for (int i = 0; i < room; i++) {
                            if (reads) {
                                chain[i].read(++id, me.sink, 0, SIZE, peer.exposed.address(), peer.exposed.rkey());
                            } else {
                                chain[i].write(++id, me.src, 0, SIZE, peer.exposed.address(), peer.exposed.rkey());
                            }
                            // Writes: every 8th signaled (the others complete with it); Reads: each
                            chain[i].signaled = reads || (posted + i) % SIGNAL_EVERY == SIGNAL_EVERY - 1;
                            chain[i].next = i + 1 < room ? chain[i + 1] : null;
                        }
                        me.c.queuePair().postSend(chain[0]);
                        posted += room;
                    }
                    int n = me.cq.await(me.wcs, me.wcs.length, STALL_SECONDS, TimeUnit.SECONDS);
                    if (n == 0) {
                        throw new AssertionError("stalled: " + (posted - done) + " 1 MiB " + (reads ? "Reads" : "Writes")
                                + " outstanding had no completion within " + STALL_SECONDS + " s (lost wake-up): "
                                + state(me, peer));
                    }
                    for (int k = 0; k < n; k++) {
                        if (me.wcs[k].status != WcStatus.SUCCESS) {
                            throw new AssertionError(me.wcs[k] + " (" + me.c.failure() + "; peer: " + peer.c.failure()
                                    + ")" + state(me, peer));
                        }
                        assertEquals(reads ? WcOpcode.RDMA_READ : WcOpcode.RDMA_WRITE, me.wcs[k].opcode);
                    }
                    int retired = reads ? n : n * SIGNAL_EVERY;
                    done += retired;
                    me.ops += retired;
                }
            }
        } catch (AssertionError e) {
            throw e;
        } catch (Exception e) {
            throw new AssertionError("driver failed: " + e + " " + state(me, peer), e);
        }
    }

    private static void checkedWrite(End me, End peer, int seed) throws Exception {
        ByteBuffer s = me.src.buffer();
        for (int i = 0; i < SIZE; i++) {
            s.put(i, (byte) (i * 31 + seed));
        }
        SendRequest wr = new SendRequest();
        me.c.queuePair().postSend(wr.write(1, me.src, 0, SIZE, peer.exposed.address(), peer.exposed.rkey()));
        WorkCompletion wc = SoftFixture.one(me.cq);
        assertEquals(WcStatus.SUCCESS, wc.status, wc.toString());
        // a Read back from the peer returns what the Write placed (the Read follows the Write)
        me.c.queuePair().postSend(wr.read(2, me.sink, 0, SIZE, peer.exposed.address(), peer.exposed.rkey()));
        wc = SoftFixture.one(me.cq);
        assertEquals(WcStatus.SUCCESS, wc.status, wc.toString());
        ByteBuffer k = me.sink.buffer();
        for (int i = 0; i < SIZE; i++) {
            if (k.get(i) != (byte) (i * 31 + seed)) {
                throw new AssertionError("byte " + i + " read back differs after the run");
            }
        }
    }

    /**
     * Both QPs and every thread's stack but the CPU hogs' (drivers of CompletableFuture.runAsync
     * are plain Thread-N threads on a small machine): where a stall stands. A thread blocked on a
     * lock names the lock's owner, so the holder of a stream's I/O lock shows whatever its name.
     */
    private static String state(End a, End b) {
        StringBuilder sb = new StringBuilder();
        sb.append("\n  A: ").append(a.c.queuePair()).append("\n  B: ").append(b.c.queuePair());
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        for (java.lang.management.ThreadInfo ti : mx.dumpAllThreads(true, true)) {
            if (ti == null || ti.getThreadName().startsWith("cpu-hog")) {
                continue;
            }
            sb.append("\n  thread \"").append(ti.getThreadName()).append("\" #").append(ti.getThreadId()).append(' ')
                    .append(ti.getThreadState());
            if (ti.getLockName() != null) {
                sb.append(" on ").append(ti.getLockName());
            }
            if (ti.getLockOwnerName() != null) {
                sb.append(" owned by \"").append(ti.getLockOwnerName()).append("\" #").append(ti.getLockOwnerId());
            }
            for (java.lang.management.LockInfo li : ti.getLockedSynchronizers()) {
                sb.append("\n      holds ").append(li);
            }
            StackTraceElement[] st = ti.getStackTrace();
            for (int i = 0; i < Math.min(24, st.length); i++) {
                sb.append("\n      at ").append(st[i]);
            }
        }
        return sb.toString();
    }
}
