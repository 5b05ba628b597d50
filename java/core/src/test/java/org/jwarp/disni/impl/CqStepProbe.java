package org.jwarp.disni.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.ibm.disni.verbs.RdmaCmId;
import java.net.InetAddress;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.jwarp.verbs.ProtectionDomain;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.WorkCompletion;

/**
 * Test helper defined by the DiSNI loader: a CQ with its own channel, awaited by one thread whose
 * native step ({@code cqAwait}, under the CQ's monitor) the test holds through {@link DisniCq#stepHook};
 * meanwhile a QP is made and closed on that CQ, and a poll from another thread blocks on the
 * monitor and must get in before the awaiter's next step (org.jwarp.disni.DisniCqStepDeviceTest
 * runs it on a device's address). Assertions are JUnit's (the parent loader's classes).
 */
public final class CqStepProbe implements Consumer<String> {
    private static final long TIMEOUT_MS = 20_000;

    @Override
    public void accept(String address) {
        try (DisniProviderImpl provider = new DisniProviderImpl()) {
            InetAddress local = InetAddress.getByName(address);
            try (DisniDevice dev = (DisniDevice) provider.open(local); ProtectionDomain pd = dev.allocateProtectionDomain()) {
                DisniCq cq = (DisniCq) dev.createCompletionQueue(16);
                try {
                    run(dev, pd, cq, local);
                } finally {
                    cq.close();
                }
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("on " + address + ": " + e, e);
        }
    }

    private static void run(DisniDevice dev, ProtectionDomain pd, DisniCq cq, InetAddress local) throws Exception {
        Semaphore inFirstStep = new Semaphore(0);
        Semaphore endFirstStep = new Semaphore(0);
        Thread[] poller = new Thread[1]; // blocked on the CQ's monitor until it is in, then never again
        List<Boolean> polledAtStep = new CopyOnWriteArrayList<>();
        cq.stepHook = () -> {
            Thread p = poller[0];
            polledAtStep.add(p != null && p.getState() != Thread.State.BLOCKED); // the poll has been in
            if (polledAtStep.size() == 1) {
                inFirstStep.release();
                endFirstStep.acquireUninterruptibly(); // the step holds the CQ's monitor until the test lets it go
            }
        };
        BlockingQueue<Object> returned = new LinkedBlockingQueue<>();
        Thread awaiter = daemon("awaiter", () -> {
            try {
                returned.add(cq.await(wcs(1), 1, 60, TimeUnit.SECONDS));
            } catch (Throwable t) {
                returned.add(t);
            }
        });
        CompletableFuture<Void> qp = null;
        try {
            assertTrue(inFirstStep.tryAcquire(TIMEOUT_MS, TimeUnit.MILLISECONDS), "the awaiter never reached its step");

            // (a) a QP made and closed on the CQ whose monitor the await step holds
            qp = CompletableFuture.runAsync(() -> {
                try {
                    RdmaCmId id = QpSetupProbe.boundId(dev, local);
                    QueuePairConfig c = QueuePairConfig.of(pd, cq, 8);
                    DisniQp q = dev.createQp(id, c);
                    DisniDevice.detach(q, c);
                    dev.dispatcher.destroy(id, true);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            try {
                qp.get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                fail("creating and closing a QP on the CQ waited for the await step holding its monitor");
            }

            // (b) a poll from another thread, blocked on the monitor during the step, goes before the next step
            AtomicInteger got = new AtomicInteger(-1);
            WorkCompletion[] out = wcs(1);
            poller[0] = daemon("poller", () -> {
                got.set(cq.poll(out, 1));
            });
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
            while (poller[0].getState() != Thread.State.BLOCKED) { // counted in the hand-off, blocked on the monitor
                assertTrue(System.nanoTime() - deadline < 0, "the poller never blocked on the CQ: " + poller[0].getState());
                Thread.onSpinWait();
            }
            endFirstStep.release(); // the step's native wait runs now (nothing arrives: its full slice)
            poller[0].join(TIMEOUT_MS);
            assertEquals(0, got.get(), "the poll of an empty CQ");
            while (polledAtStep.size() < 2) {
                assertTrue(System.nanoTime() - deadline < 0, "the awaiter never took its second step");
                Thread.sleep(1);
            }
            assertEquals(List.of(false, true), List.copyOf(polledAtStep).subList(0, 2), // a copy: the awaiter goes on adding
                    "whether the poll had been in at the start of each await step (it must go before the second, "
                    + "within one step of " + TimeUnit.NANOSECONDS.toMillis(DisniCq.AWAIT_SLICE_NANOS) + " ms)");
            assertNull(returned.peek(), "the await (60 s, nothing arrives) returned early");
        } finally {
            endFirstStep.release();
            if (qp != null) {
                qp.handle((v, t) -> null).get(TIMEOUT_MS, TimeUnit.MILLISECONDS); // a QP held up by the step is gone first
            }
            cq.close(); // ends the await at once
            Object r = returned.poll(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            awaiter.join(TIMEOUT_MS);
            if (!(r instanceof Integer) || (Integer) r != 0) {
                fail("the await ended by close returned " + r);
            }
        }
    }

    private static WorkCompletion[] wcs(int n) {
        WorkCompletion[] w = new WorkCompletion[n];
        for (int i = 0; i < n; i++) {
            w[i] = new WorkCompletion();
        }
        return w;
    }

    private static Thread daemon(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        t.start();
        return t;
    }
}
