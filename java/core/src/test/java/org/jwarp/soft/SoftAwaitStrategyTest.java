package org.jwarp.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;

import org.jwarp.soft.cq.CqProbe;
import org.jwarp.soft.cq.SoftCompletionQueue;
import org.jwarp.soft.verbs.SoftMemoryRegion;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.AwaitStrategy;
import org.jwarp.verbs.QueuePair;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link AwaitStrategy} on the soft provider: several threads await one CQ (and, for the first
 * half of the messages, one more polls it) while CPU hogs hold every core, with each idle phase
 * in use: a spin long enough that waiters rarely get past it, yields only, and blocking at once;
 * with receive polling on (a waiter reads the sockets) and off (the reactor delivers every
 * completion and the waiters are woken on the CQ), and with the reactors busy-polling after each
 * event instead of sleeping at once. Every Send must complete exactly once at the
 * receiver (RFC 5040 §5.5), and the stream of completions must never stop while messages are
 * owed: a lost wake-up shows as no progress for {@value #STALL_SECONDS} s with the waiters asleep
 * (their awaits are longer than that), which the test reports with the CQ's state.
 */
class SoftAwaitStrategyTest {
    private static final int SIZE = 64;
    private static final int DEPTH = 32;
    private static final int MESSAGES = 3000;
    private static final int AWAITERS = 3;
    /** Each await is longer than the stall bound, so only a wake-up ends it before the stall is seen. */
    private static final long AWAIT_SECONDS = 30;
    /** No completion for this long while Sends are owed is a stall (a passing run sees milliseconds). */
    private static final long STALL_SECONDS = 10;

    @ParameterizedTest(name = "spin {0} µs, {1} yields, receive polling {2}, reactor busy-poll {3} µs")
    @CsvSource({"200000, 0, true, 0", "0, 100000, true, 0", "0, 0, true, 0", "200000, 0, false, 0",
            "0, 100000, false, 0", "0, 0, false, 0", "2, 20, true, 50", "0, 0, false, 50"})
    @DisplayName("RFC 5040 §5.5: awaiters and a poller sharing one CQ under CPU contention lose no completion and never stall, in every idle phase")
    void everyCompletionOnceInEveryIdlePhase_5040_5_5(long spinMicros, int yields, boolean polling, int busyMicros)
            throws Exception {
        SoftConfig cfg = SoftConfig.defaults().withTimeouts(Duration.ofSeconds(10), Duration.ofSeconds(10),
                Duration.ofSeconds(10)).withPolling(polling ? 2 : 0, 4, 1000).withReactorBusyPoll(busyMicros);
        AwaitStrategy strategy = AwaitStrategy.of(spinMicros, yields);
        AtomicBoolean stopHogs = new AtomicBoolean();
        List<Thread> hogs = startHogs(stopHogs);
        try (SoftFixture f = new SoftFixture(cfg)) {
            SoftCompletionQueue cq = f.device.createCompletionQueue(4 * DEPTH, null, false, strategy);
            assertSame(strategy, cq.awaitStrategy());
            try (SoftFixture.Pair p = f.connect(new QueuePairConfig(f.pd, cq, cq, DEPTH, DEPTH), f.responderQp(),
                    SoftFixture.p2p().build(), r -> SoftFixture.p2p().build())) {
                run(f, cq, p);
            }
        } finally {
            stopHogs.set(true);
            for (Thread t : hogs) {
                t.join(2000);
            }
        }
    }

    private static void run(SoftFixture f, SoftCompletionQueue cq, SoftFixture.Pair p) throws Exception {
        // a slot per message: a Send's source must not change until it completes (zero-copy transmit)
        SoftMemoryRegion src = f.region(f.pd2, (MESSAGES + 1) * SIZE, Access.LOCAL_WRITE);
        SoftMemoryRegion dst = f.region(f.pd, DEPTH * SIZE, Access.LOCAL_WRITE);
        QueuePair a = p.initiator().queuePair();
        QueuePair b = p.responder().queuePair();
        for (int i = 0; i < DEPTH; i++) {
            a.postRecv(i, dst, i * SIZE, SIZE);
        }
        AtomicIntegerArray seen = new AtomicIntegerArray(MESSAGES);
        AtomicInteger reaped = new AtomicInteger();
        AtomicInteger nextRecvId = new AtomicInteger(DEPTH);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicBoolean done = new AtomicBoolean();
        Semaphore credits = new Semaphore(DEPTH);
        // One reap: the payload names the message; the slot gets a fresh receive, the sender a credit.
        java.util.function.Consumer<WorkCompletion> reap = wc -> {
            assertEquals(WcStatus.SUCCESS, wc.status, wc.toString());
            assertEquals(WcOpcode.RECV, wc.opcode);
            int slot = (int) (wc.wrId % DEPTH);
            int msg = dst.buffer().getInt(slot * SIZE);
            if (msg >= 0) {
                assertEquals(0, seen.getAndIncrement(msg), "message " + msg + " completed twice");
                reaped.incrementAndGet();
            }
            try {
                a.postRecv(nextRecvId.getAndIncrement() / DEPTH * DEPTH + slot, dst, slot * SIZE, SIZE);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
            credits.release();
        };
        List<Thread> consumers = new ArrayList<>();
        for (int i = 0; i < AWAITERS; i++) {
            int max = 1 + i; // one, two or three completions per await
            consumers.add(new Thread(() -> {
                WorkCompletion[] out = SoftFixture.wcs(4);
                try {
                    while (!done.get()) {
                        int n = cq.await(out, max, AWAIT_SECONDS, TimeUnit.SECONDS);
                        for (int k = 0; k < n; k++) {
                            reap.accept(out[k]);
                        }
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }, "awaiter-" + i));
        }
        // A thread that polls (spin mode) for the first half, then leaves the CQ to the awaiters.
        consumers.add(new Thread(() -> {
            WorkCompletion[] out = SoftFixture.wcs(2);
            try {
                while (!done.get() && reaped.get() < MESSAGES / 2) {
                    int n = cq.poll(out, out.length);
                    for (int k = 0; k < n; k++) {
                        reap.accept(out[k]);
                    }
                }
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
            }
        }, "poller"));
        consumers.forEach(Thread::start);
        SendRequest wr = new SendRequest();
        WorkCompletion[] sc = SoftFixture.wcs(16);
        int sent = 0;
        int lastReaped = -1;
        long lastProgress = System.nanoTime();
        try {
            // Sends paced by receive credits, with pauses so waiters run out of spin and yields and block.
            while (sent < MESSAGES && failure.get() == null) {
                if (credits.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                    src.buffer().putInt(sent * SIZE, sent);
                    b.postSend(wr.send(sent, src, sent * SIZE, SIZE));
                    sent++;
                    if (sent % 97 == 0) {
                        Thread.sleep(1);
                    }
                }
                while (f.cq2.poll(sc, sc.length) > 0) {
                    assertEquals(WcStatus.SUCCESS, sc[0].status, sc[0].toString());
                }
                int r = reaped.get();
                if (r != lastReaped) {
                    lastReaped = r;
                    lastProgress = System.nanoTime();
                } else if (System.nanoTime() - lastProgress > TimeUnit.SECONDS.toNanos(STALL_SECONDS)) {
                    throw new AssertionError("stalled (lost wake-up): " + (sent - r) + " Sends owed, none completed in "
                            + STALL_SECONDS + " s; " + CqProbe.debugState(cq));
                }
            }
            while (reaped.get() < MESSAGES && failure.get() == null) {
                int r = reaped.get();
                if (r != lastReaped) {
                    lastReaped = r;
                    lastProgress = System.nanoTime();
                } else if (System.nanoTime() - lastProgress > TimeUnit.SECONDS.toNanos(STALL_SECONDS)) {
                    throw new AssertionError("stalled (lost wake-up): " + (MESSAGES - r) + " Sends owed, none completed in "
                            + STALL_SECONDS + " s; " + CqProbe.debugState(cq));
                }
                Thread.sleep(1);
                while (f.cq2.poll(sc, sc.length) > 0) {
                    assertEquals(WcStatus.SUCCESS, sc[0].status, sc[0].toString());
                }
            }
        } finally {
            done.set(true); // on a failure, closing the provider wakes the awaiters
        }
        // every awaiter is woken by a message (payload -1), then sees done
        src.buffer().putInt(MESSAGES * SIZE, -1);
        for (int i = 0; failure.get() == null && i < 4 * consumers.size() && consumers.stream().anyMatch(Thread::isAlive); i++) {
            if (credits.tryAcquire(AWAIT_SECONDS, TimeUnit.SECONDS)) {
                b.postSend(wr.send(-1, src, MESSAGES * SIZE, SIZE));
            }
            for (Thread t : consumers) {
                t.join(50);
            }
        }
        for (Thread t : consumers) {
            t.join(failure.get() == null ? TimeUnit.SECONDS.toMillis(AWAIT_SECONDS) : 1);
        }
        assertNull(failure.get(), () -> "a consumer failed: " + failure.get());
        assertEquals(MESSAGES, reaped.get(), "every Send completed at the receiver");
        for (int i = 0; i < MESSAGES; i++) {
            assertEquals(1, seen.get(i), "message " + i);
        }
        assertEquals(0, cq.overruns());
    }

    private static List<Thread> startHogs(AtomicBoolean stop) {
        List<Thread> hogs = new ArrayList<>();
        int n = Math.max(2, 2 * Runtime.getRuntime().availableProcessors());
        for (int i = 0; i < n; i++) {
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
            t.start();
            hogs.add(t);
        }
        return hogs;
    }
}
