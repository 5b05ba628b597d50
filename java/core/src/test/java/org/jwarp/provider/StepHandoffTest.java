package org.jwarp.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The hand-off between an await that waits in steps under a CQ's monitor and a poll waiting for
 * that monitor (RFC 5040 §5.5 completion notification, as DiSNI's and ffm's CQs wait in one native
 * call per step): ordering, not timing, on a plain monitor standing for the CQ's.
 */
class StepHandoffTest {
    private static final long TIMEOUT_S = 10;

    @Test
    @DisplayName("a poll blocked on the monitor during an await step gets in before the await's next step")
    void pollWaitingDuringAStepGoesBeforeTheNextStep() throws Exception {
        Object monitor = new Object();
        StepHandoff handoff = new StepHandoff();
        CountDownLatch inFirstStep = new CountDownLatch(1);
        CountDownLatch endFirstStep = new CountDownLatch(1);
        AtomicBoolean polled = new AtomicBoolean();
        List<Boolean> polledAtStep = new CopyOnWriteArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_S);
        Thread awaiter = started("awaiter", () -> {
            for (int step = 0; step < 3; step++) { // as the CQs' await loop: empty steps
                handoff.arriving();
                synchronized (monitor) {
                    handoff.arrived();
                    polledAtStep.add(polled.get());
                    if (step == 0) {
                        inFirstStep.countDown();
                        awaitUninterruptibly(endFirstStep); // the step's native wait, monitor held
                    }
                }
                handoff.letArrivalsIn(deadline);
            }
        });
        assertTrue(inFirstStep.await(TIMEOUT_S, TimeUnit.SECONDS));
        Thread poller = started("poller", () -> {
            handoff.arriving();
            synchronized (monitor) {
                handoff.arrived();
                polled.set(true);
            }
        });
        while (poller.getState() != Thread.State.BLOCKED) { // counted, blocked on the monitor
            assertTrue(System.nanoTime() - deadline < 0, "the poller never blocked on the monitor: " + poller.getState());
            Thread.onSpinWait();
        }
        endFirstStep.countDown();
        awaiter.join(TimeUnit.SECONDS.toMillis(TIMEOUT_S));
        poller.join(TimeUnit.SECONDS.toMillis(TIMEOUT_S));
        assertEquals(List.of(false, true, true), polledAtStep,
                "whether the poll had been in at the start of each await step (the second step took the monitor first)");
    }

    @Test
    @DisplayName("the awaiter's hand-off ends at its deadline when a counted thread never comes in")
    void handoffEndsAtTheDeadline() {
        StepHandoff handoff = new StepHandoff();
        handoff.arriving(); // never arrives
        long start = System.nanoTime();
        handoff.letArrivalsIn(start + TimeUnit.MILLISECONDS.toNanos(50));
        long took = System.nanoTime() - start;
        assertTrue(took >= TimeUnit.MILLISECONDS.toNanos(50) && took < TimeUnit.SECONDS.toNanos(TIMEOUT_S),
                "letArrivalsIn took " + took + " ns for a 50 ms deadline");
        handoff.arrived();
        start = System.nanoTime();
        handoff.letArrivalsIn(start + TimeUnit.SECONDS.toNanos(TIMEOUT_S));
        took = System.nanoTime() - start;
        assertTrue(took < TimeUnit.SECONDS.toNanos(TIMEOUT_S / 2), "with nobody counted letArrivalsIn took " + took + " ns");
    }

    private static void awaitUninterruptibly(CountDownLatch latch) {
        while (true) {
            try {
                latch.await();
                return;
            } catch (InterruptedException e) {
                // a test thread is not interrupted; keep holding the step
            }
        }
    }

    /** A daemon thread of that name running {@code body}, started. */
    static Thread started(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        t.start();
        return t;
    }
}
