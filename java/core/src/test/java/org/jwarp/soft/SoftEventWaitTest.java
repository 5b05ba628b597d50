package org.jwarp.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.jwarp.soft.SoftFixture.stream;
import static org.jwarp.soft.SoftFixture.waitUntil;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.jwarp.soft.cq.SoftCompletionQueue;
import org.jwarp.soft.verbs.SoftMemoryRegion;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.CompletionChannel;
import org.jwarp.verbs.CompletionQueue;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Event-driven waiting with receive polling on: a thread that sleeps on a completion channel, or
 * in {@code await}, must not keep its CQ's streams from the reactor, and no data may be left
 * unread when a stream changes hands while it arrives. The providers here have a 60 s poll lease
 * and a 60 s reactor sleep, so only the hand-back paths can move a stream back to the reactor in
 * time: a lost wake-up shows as a wait that runs out, not as a slow test.
 */
class SoftEventWaitTest {
    private static final int SIZE = 64;
    private static final long LONG = TimeUnit.SECONDS.toNanos(60);

    private static SoftConfig config() {
        return SoftConfig.defaults().withTimeouts(Duration.ofSeconds(5), Duration.ofSeconds(5), Duration.ofSeconds(5));
    }

    /** The defaults, but a lease and an idle reactor sleep of 60 s. */
    private static SoftFixture fixture() throws Exception {
        return new SoftFixture(new SoftProvider(config(), 60_000, LONG));
    }


    /** Connects an initiator on {@code a} to a responder on {@code b}. */
    private static Connection[] connect(SoftFixture f, QueuePairConfig a, QueuePairConfig b) throws Exception {
        if (f.listener == null) {
            f.listen(16);
        }
        CompletableFuture<Connection> acc = CompletableFuture.supplyAsync(() -> {
            try {
                return f.listener.next(Duration.ofSeconds(SoftFixture.SETUP_SECONDS)).accept(b, SoftFixture.p2p().build());
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        Connection c = f.device.connectionManager().connect(f.address(), a, SoftFixture.p2p().build(),
                Duration.ofSeconds(SoftFixture.SETUP_SECONDS));
        return new Connection[] {c, acc.get(SoftFixture.SETUP_SECONDS, TimeUnit.SECONDS)};
    }

    /** Polls {@code cq} until its poller holds {@code s}: a spinning thread takes the stream over. */
    private static void spinUntilHeld(CompletionQueue cq, SoftStream s, WorkCompletion[] out) {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!s.receiver.isPolled()) {
            assertEquals(0, cq.poll(out, out.length), "nothing to take while spinning");
            assertTrue(System.nanoTime() < end, "a spinning poll took the stream over");
        }
    }

    /** Two threads that keep both cores busy until closed. */
    private static final class CpuHogs implements AutoCloseable {
        private final AtomicBoolean stop = new AtomicBoolean();
        private final List<Thread> threads = new ArrayList<>();
        volatile long sink;

        CpuHogs() {
            for (int i = 0; i < 2; i++) {
                Thread t = new Thread(() -> {
                    long x = 1;
                    while (!stop.get()) {
                        for (int k = 0; k < 10_000; k++) {
                            x = x * 6364136223846793005L + 1442695040888963407L;
                        }
                        sink = x;
                    }
                }, "cpu-hog-" + i);
                t.setDaemon(true);
                t.start();
                threads.add(t);
            }
        }

        @Override
        public void close() throws InterruptedException {
            stop.set(true);
            for (Thread t : threads) {
                t.join(5_000);
            }
        }
    }

    @Test
    @DisplayName("RFC 5040 §5.5: one empty poll before arming leaves the stream with the reactor")
    void singleEmptyPollClaimsNothing_5040_5_5() throws Exception {
        try (SoftFixture f = new SoftFixture(config());
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
            WorkCompletion[] out = SoftFixture.wcs(4);
            assertEquals(0, f.cq.poll(out, out.length));
            assertEquals(0, f.cq.poll(out, out.length));
            assertFalse(stream(p.initiator()).receiver.isPolled(),
                    "a poll-arm-poll thread does not take the stream from the reactor");
            spinUntilHeld(f.cq, stream(p.initiator()), out);
        }
    }

    @Test
    @DisplayName("RFC 5040 §4.3: a thread that sleeps on a completion channel hands its streams back; the reactor answers RDMA Reads meanwhile")
    void channelSleeperHandsStreamsBack_5040_4_3() throws Exception {
        try (SoftFixture f = fixture()) {
            CompletionChannel ch = f.device.createCompletionChannel();
            SoftCompletionQueue cq = f.device.createCompletionQueue(64, ch);
            Connection[] c = connect(f, QueuePairConfig.of(f.pd, cq, 16), QueuePairConfig.of(f.pd2, f.cq2, 16));
            SoftMemoryRegion exposed = f.region(f.pd, SIZE, Access.LOCAL_WRITE, Access.REMOTE_READ);
            SoftMemoryRegion sink = f.region(f.pd2, SIZE, Access.LOCAL_WRITE);
            SoftStream s = stream(c[0]);
            WorkCompletion[] out = SoftFixture.wcs(4);
            spinUntilHeld(cq, s, out);
            AtomicReference<Object> woke = new AtomicReference<>();
            Thread sleeper = new Thread(() -> {
                try {
                    cq.requestNotify(false);
                    woke.set(ch.next(SoftFixture.SETUP_SECONDS, TimeUnit.SECONDS));
                } catch (Throwable t) {
                    woke.set(t);
                }
            }, "channel-sleeper");
            sleeper.start();
            waitUntil("the thread sleeps on the channel",
                    () -> sleeper.getState() == Thread.State.TIMED_WAITING || !sleeper.isAlive());
            assertFalse(s.receiver.isPolled(), "the sleeping thread's poller handed the stream back");
            for (int i = 0; i < SIZE; i++) {
                exposed.buffer().put(i, (byte) (i * 3));
            }
            for (int r = 0; r < 20; r++) {
                c[1].queuePair().postSend(new SendRequest().read(r, sink, 0, SIZE, exposed.address(), exposed.rkey()));
                WorkCompletion wc = SoftFixture.one(f.cq2);
                assertEquals(WcStatus.SUCCESS, wc.status, wc.toString());
                assertEquals(WcOpcode.RDMA_READ, wc.opcode);
            }
            assertEquals((byte) (5 * 3), sink.buffer().get(5));
            sleeper.interrupt();
            sleeper.join(10_000);
            c[0].close();
            c[1].close();
        }
    }

    @Test
    @DisplayName("No lost wake-up: a Send that races a channel sleeper's hand-back is always delivered (2 CPU hogs)")
    void noLostWakeupWhenChannelSleeperHandsBack() throws Exception {
        int rounds = 3000;
        try (SoftFixture f = fixture(); CpuHogs hogs = new CpuHogs()) {
            CompletionChannel ch = f.device.createCompletionChannel();
            SoftCompletionQueue cq = f.device.createCompletionQueue(64, ch);
            Connection[] c = connect(f, QueuePairConfig.of(f.pd, cq, 16), QueuePairConfig.of(f.pd2, f.cq2, 16));
            SoftMemoryRegion dst = f.region(f.pd, SIZE, Access.LOCAL_WRITE);
            SoftMemoryRegion src = f.region(f.pd2, SIZE, Access.LOCAL_WRITE);
            SoftStream s = stream(c[0]);
            WorkCompletion[] out = SoftFixture.wcs(4);
            WorkCompletion[] sent = SoftFixture.wcs(4);
            SendRequest wr = new SendRequest();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            java.util.concurrent.Semaphore go = new java.util.concurrent.Semaphore(0);
            Thread sender = new Thread(() -> {
                try {
                    for (int r = 0; r < rounds; r++) {
                        go.acquire();
                        int spin = ThreadLocalRandom.current().nextInt(0, 4000);
                        for (int k = 0; k < spin; k++) {
                            Thread.onSpinWait(); // lands before, during or after the hand-back
                        }
                        c[1].queuePair().postSend(wr.send(r, src, 0, SIZE));
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }, "sender");
            sender.start();
            int heldRounds = 0;
            for (int r = 0; r < rounds; r++) {
                c[0].queuePair().postRecv(r, dst, 0, SIZE);
                spinUntilHeld(cq, s, out);
                heldRounds++;
                go.release();
                // the poll, arm, poll, wait rule
                int got = cq.poll(out, out.length);
                if (got == 0) {
                    cq.requestNotify(false);
                    got = cq.poll(out, out.length);
                }
                // An event is only a hint (CompletionChannel): one raised in an earlier round by a
                // completion that its second poll found may still wait in the channel, so the
                // consumer re-arms and waits again until a poll finds the completion. A lost
                // wake-up shows as a wait that times out.
                for (int waits = 0; got == 0; waits++) {
                    assertTrue(waits < 3, "round " + r + ": " + waits + " events, none announcing the Send: " + s);
                    CompletionQueue ev = ch.next(SoftFixture.SETUP_SECONDS, TimeUnit.SECONDS);
                    assertNotNull(ev, "round " + r + ": the Send arrived during the hand-back and was never delivered: " + s);
                    assertSame(cq, ev);
                    got = cq.poll(out, out.length);
                    if (got == 0) {
                        cq.requestNotify(false);
                        got = cq.poll(out, out.length);
                    }
                }
                assertEquals(1, got, "round " + r + ": one receive completion");
                assertEquals(WcStatus.SUCCESS, out[0].status, out[0].toString());
                assertEquals(r, out[0].wrId);
                WorkCompletion sc = SoftFixture.one(f.cq2);
                assertEquals(WcStatus.SUCCESS, sc.status, sc.toString());
            }
            sender.join(30_000);
            assertNull(failure.get(), () -> "sender failed: " + failure.get());
            assertEquals(rounds, heldRounds);
            assertEquals(0, f.cq2.poll(sent, sent.length));
            c[0].close();
            c[1].close();
        }
    }

    @Test
    @DisplayName("No lost wake-up: threads awaiting several CQs, and two threads on one CQ, get every Send (2 CPU hogs)")
    void awaitersOnSeveralCqsGetEverySend() throws Exception {
        int conns = 4;
        int perConn = 5000;
        try (SoftFixture f = fixture(); CpuHogs hogs = new CpuHogs()) {
            SoftCompletionQueue shared = f.device.createCompletionQueue(256);
            SoftCompletionQueue[] cqs = new SoftCompletionQueue[conns];
            Connection[][] c = new Connection[conns][];
            for (int i = 0; i < conns; i++) {
                // the last two connections share one CQ, awaited by two threads
                cqs[i] = i >= conns - 2 ? shared : f.device.createCompletionQueue(256);
                c[i] = connect(f, QueuePairConfig.of(f.pd, cqs[i], 64), QueuePairConfig.of(f.pd2, f.cq2, 64));
            }
            SoftMemoryRegion dst = f.region(f.pd, 64 * SIZE, Access.LOCAL_WRITE);
            SoftMemoryRegion src = f.region(f.pd2, SIZE, Access.LOCAL_WRITE);
            java.util.concurrent.atomic.AtomicInteger[] got = new java.util.concurrent.atomic.AtomicInteger[conns];
            for (int i = 0; i < conns; i++) {
                got[i] = new java.util.concurrent.atomic.AtomicInteger();
                for (int k = 0; k < 32; k++) {
                    c[i][0].queuePair().postRecv(k, dst, 0, SIZE);
                }
            }
            java.util.concurrent.Semaphore[] credits = new java.util.concurrent.Semaphore[conns];
            for (int i = 0; i < conns; i++) {
                credits[i] = new java.util.concurrent.Semaphore(32);
            }
            AtomicReference<Throwable> failure = new AtomicReference<>();
            AtomicBoolean done = new AtomicBoolean();
            List<Thread> waiters = new ArrayList<>();
            int[] owners = {0, 1, 2, 2}; // one thread per own CQ, two on the shared one
            for (int w = 0; w < owners.length; w++) {
                SoftCompletionQueue q = cqs[owners[w]];
                Thread t = new Thread(() -> {
                    try {
                        WorkCompletion[] out = SoftFixture.wcs(4);
                        while (!done.get()) {
                            int n = q.await(out, out.length, 100, TimeUnit.MILLISECONDS);
                            for (int k = 0; k < n; k++) {
                                assertEquals(WcStatus.SUCCESS, out[k].status, out[k].toString());
                                assertEquals(WcOpcode.RECV, out[k].opcode);
                                int i = connOf(c, out[k].qpNum);
                                got[i].incrementAndGet();
                                c[i][0].queuePair().postRecv(out[k].wrId, dst, 0, SIZE);
                                credits[i].release();
                            }
                        }
                    } catch (Throwable t2) {
                        failure.compareAndSet(null, t2);
                    }
                }, "awaiter-" + w);
                t.start();
                waiters.add(t);
            }
            SendRequest wr = new SendRequest();
            WorkCompletion[] sc = SoftFixture.wcs(16);
            for (int m = 0; m < perConn; m++) {
                for (int i = 0; i < conns; i++) {
                    assertTrue(credits[i].tryAcquire(SoftFixture.SETUP_SECONDS, TimeUnit.SECONDS),
                            "connection " + i + " message " + m + " was received: " + stream(c[i][0]));
                    c[i][1].queuePair().postSend(wr.send(m, src, 0, SIZE));
                }
                while (f.cq2.poll(sc, sc.length) > 0) {
                    assertEquals(WcStatus.SUCCESS, sc[0].status, sc[0].toString());
                }
                if ((m & 63) == 0) {
                    Thread.sleep(1); // let the awaiters block between bursts
                }
            }
            for (int i = 0; i < conns; i++) {
                assertTrue(credits[i].tryAcquire(32, SoftFixture.SETUP_SECONDS, TimeUnit.SECONDS),
                        "every Send of connection " + i + " was received: " + stream(c[i][0]));
            }
            done.set(true);
            for (Thread t : waiters) {
                t.join(10_000);
            }
            assertNull(failure.get(), () -> "awaiter failed: " + failure.get());
            for (int i = 0; i < conns; i++) {
                assertEquals(perConn, got[i].get(), "receives of connection " + i);
            }
        }
    }

    private static int connOf(Connection[][] c, int qpNum) {
        for (int i = 0; i < c.length; i++) {
            if (c[i][0].queuePair().qpNum() == qpNum) {
                return i;
            }
        }
        throw new AssertionError("unknown QP " + qpNum);
    }

    @Test
    @DisplayName("RFC 5040 §4.3: the lease never runs while a thread keeps polling, and runs once it stops")
    void leaseHoldsWhileSpinning_5040_4_3() throws Exception {
        // 200 ms lease (longer than a loaded host keeps a runnable thread waiting); the reactor checks
        // it at least once a lease. A thread spinning on progress() for 5 leases must keep the stream
        // all along: a leave time not stamped by the passes (a spin that skips the clock read) would
        // let the lease run out under a spinning poller.
        long lease = TimeUnit.MILLISECONDS.toNanos(200);
        try (SoftFixture f = new SoftFixture(new SoftProvider(config(), 60_000, lease));
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
            SoftStream s = stream(p.initiator());
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (!s.receiver.isPolled()) { // established, RTR exchanged: progress() takes it over
                f.cq.progress();
                assertTrue(System.nanoTime() < end, "progress() took the stream over");
            }
            long before = s.receiver.leaseRevocations;
            end = System.nanoTime() + 5 * lease;
            while (System.nanoTime() - end < 0) {
                f.cq.progress();
            }
            assertEquals(before, s.receiver.leaseRevocations, "the reactor took the stream from a spinning poller");
            waitUntil("the lease runs out once the thread stops", () -> !s.receiver.isPolled());
            assertEquals(before + 1, s.receiver.leaseRevocations, "taken back once, after the spin");
        }
    }

    @Test
    @DisplayName("RFC 5040 §4.3: a stream taken over while the reactor slept long goes back after the lease, with nothing else to wake the reactor")
    void leaseRunsWhileReactorSleptLong_5040_4_3() throws Exception {
        // 1 ms lease, 60 s idle reactor sleep: the reactor must shorten its sleep once a poller holds a stream
        try (SoftFixture f = new SoftFixture(new SoftProvider(config(), 60_000, TimeUnit.MILLISECONDS.toNanos(1)));
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
            SoftStream s = stream(p.initiator());
            Thread.sleep(200); // the reactor is idle: asleep in select for up to 60 s
            f.cq.progress(); // a thread takes the stream over, then goes off without coming back
            assertTrue(s.receiver.isPolled(), "progress() took the stream over");
            waitUntil("the reactor took the stream back after the lease", () -> !s.receiver.isPolled());
        }
    }
}
