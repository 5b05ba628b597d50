package org.jwarp.soft;

import org.jwarp.soft.cq.CqProbe;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.jwarp.soft.verbs.SoftMemoryRegion;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.QueuePair;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Receive polling (SoftCompletionQueue): a thread whose lead ended with a completion in the ring
 * keeps the CQ's streams (sticky hand-over); if another thread drains that completion first, the
 * leader finds the ring empty and must not park on the monitor while its poller still holds the
 * streams (OP_READ off at the reactor): nobody would read them until the reactor's lease ran out.
 * The race is forced with the CQ's after-lead hook.
 */
class PollerParkTest {
    private static final int SIZE = 64;

    @Test
    @DisplayName("RFC 5040 §5.5: a leader whose completion was drained by another thread re-leads instead of parking with the streams held")
    void leaderNeverParksHoldingTheStreams_5040_5_5() throws Exception {
        // Longest lease: a stream parked with its poller is taken back only after 1 s.
        SoftConfig cfg = SoftConfig.defaults().withTimeouts(Duration.ofSeconds(5), Duration.ofSeconds(5),
                Duration.ofSeconds(5)).withPolling(20, 4, 1_000_000);
        try (SoftFixture f = new SoftFixture(cfg);
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
            SoftMemoryRegion dst = f.region(f.pd, 4 * SIZE, Access.LOCAL_WRITE);
            SoftMemoryRegion src = f.region(f.pd2, SIZE, Access.LOCAL_WRITE);
            QueuePair a = p.initiator().queuePair();
            QueuePair b = p.responder().queuePair();
            for (int i = 0; i < 4; i++) {
                a.postRecv(i, dst, i * SIZE, SIZE);
            }
            SoftStream st = ((SoftConnection) p.initiator()).stream();
            CountDownLatch inHook = new CountDownLatch(1);
            CountDownLatch goOn = new CountDownLatch(1);
            AtomicInteger hooks = new AtomicInteger();
            CqProbe.afterLead(f.cq, () -> {
                if (hooks.getAndIncrement() == 0) {
                    inHook.countDown();
                    try {
                        goOn.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            });
            AtomicReference<WorkCompletion> got = new AtomicReference<>();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread leader = new Thread(() -> {
                try {
                    WorkCompletion[] out = SoftFixture.wcs(1);
                    if (f.cq.await(out, 1, SoftFixture.SETUP_SECONDS, TimeUnit.SECONDS) == 1) {
                        got.set(out[0]);
                    }
                } catch (Throwable t) {
                    failure.set(t);
                }
            });
            leader.start();
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!st.receiver.isPolled() && System.nanoTime() < end) {
                Thread.sleep(1);
            }
            assertTrue(st.receiver.isPolled(), "the awaiting thread's poller holds the stream");
            SendRequest wr = new SendRequest();
            b.postSend(wr.send(100, src, 0, SIZE));
            assertTrue(inHook.await(10, TimeUnit.SECONDS), "the leader's lead ended with the completion in the ring");
            assertTrue(st.receiver.isPolled(), "the lead kept the streams (a completion in hand, no waiter)");
            WorkCompletion[] mine = SoftFixture.wcs(1);
            assertEquals(1, f.cq.poll(mine, 1), "another thread drains the leader's completion");
            assertEquals(0, mine[0].wrId, "the first receive");
            goOn.countDown();
            // The leader now finds the ring empty: it either leads again (blocked in the CQ's
            // selector) or parks on the monitor. Parking with the streams held is the defect.
            while (!CqProbe.hasWaiters(f.cq) && !CqProbe.pollerBlocked(f.cq) && System.nanoTime() < end) {
                Thread.onSpinWait();
            }
            boolean parked = CqProbe.hasWaiters(f.cq);
            boolean polled = st.receiver.isPolled();
            boolean led = CqProbe.pollerLed(f.cq);
            assertFalse(parked && polled && !led, "the leader parked on the monitor while its poller held the stream"
                    + " (OP_READ off at the reactor, nobody reading it)");
            b.postSend(wr.send(101, src, 0, SIZE));
            leader.join(TimeUnit.SECONDS.toMillis(SoftFixture.SETUP_SECONDS));
            assertFalse(leader.isAlive());
            if (failure.get() != null) {
                throw new AssertionError(failure.get());
            }
            assertEquals(WcStatus.SUCCESS, got.get().status);
            assertEquals(1, got.get().wrId, "the second receive");
        }
    }
}
