package org.jwarp.ffm.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.Set;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RegionSizeException;
import org.jwarp.verbs.WorkCompletion;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Device, protection domain, regions and completion queues through {@code java.lang.foreign} on
 * the kernel's siw0 and rxe0 (guest only: scripts/guest-tests runs it on JDK 25; fails when the
 * device is missing). Opening runs the layout self-check against the live libibverbs.
 */
@Tag("device")
class FfmVerbsOnDevicesTest {
    private static final Set<Access> ALL = EnumSet.allOf(Access.class);

    @ParameterizedTest
    @ValueSource(strings = {"siw0", "rxe0"})
    void regionsAreRegisteredWhereTheirMemoryIs(String name) throws RdmaException {
        try (FfmContext dev = FfmContext.open(name); FfmPd pd = dev.allocatePd()) {
            assertEquals(name, dev.name());
            ByteBuffer buf = ByteBuffer.allocateDirect(4096);
            MemoryRegion mr = pd.register(buf, ALL);
            assertEquals(java.lang.foreign.MemorySegment.ofBuffer(buf).address(), mr.address());
            assertEquals(4096, mr.length());
            assertEquals(ALL, mr.access());
            mr.close();

            MemoryRegion owned = pd.allocate(1 << 20, EnumSet.of(Access.LOCAL_WRITE));
            assertEquals(1 << 20, owned.length());
            owned.buffer(4096, 8).putLong(0, 0x1122334455667788L);
            assertEquals(0x1122334455667788L, owned.buffer().getLong(4096));
            MemoryRegion second = pd.register(ByteBuffer.allocateDirect(64), ALL);
            assertTrue(second.lkey() != owned.lkey(), "two regions, two STags");
            owned.close();
            // second is left open: closing the domain deregisters it
            if (dev.maxMrSize() < Long.MAX_VALUE) {
                RegionSizeException e = assertThrows(RegionSizeException.class, () -> pd.allocate(dev.maxMrSize() + 1, ALL));
                assertEquals(dev.maxMrSize(), e.limit());
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"siw0", "rxe0"})
    void anEmptyCompletionQueuePollsNothingAndAllocatesNothing(String name) throws RdmaException {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (FfmContext dev = FfmContext.open(name)) {
            FfmCq cq = dev.createCq(64);
            assertTrue(cq.capacity() >= 64, "capacity " + cq.capacity());
            WorkCompletion[] wcs = new WorkCompletion[16];
            for (int i = 0; i < wcs.length; i++) {
                wcs[i] = new WorkCompletion();
            }
            // Warm the measured method itself (compiled whole, not only on-stack replaced), then measure rounds:
            // an allocation per poll shows in every round, a one-off (a tier change mid-round) in one at most.
            int got = 0;
            for (int i = 0; i < 8; i++) {
                got += pollMany(cq, wcs, 25_000);
            }
            long[] rounds = new long[3];
            for (int r = 0; r < rounds.length; r++) {
                long before = threads.getCurrentThreadAllocatedBytes();
                got += pollMany(cq, wcs, 100_000);
                rounds[r] = threads.getCurrentThreadAllocatedBytes() - before;
            }
            assertEquals(0, got, "completions on a CQ nothing posted to");
            assertEquals(0, java.util.Arrays.stream(rounds).min().getAsLong(),
                    "bytes allocated by 100,000 polls through ops.poll_cq, per round: " + java.util.Arrays.toString(rounds));
            assertThrows(IllegalStateException.class, () -> cq.requestNotify(false));
            dev.close();
            IllegalStateException closed = assertThrows(IllegalStateException.class, () -> cq.poll(wcs, 1));
            assertEquals("completion queue is closed", closed.getMessage());
        }
    }

    private static int pollMany(FfmCq cq, WorkCompletion[] wcs, int polls) {
        int got = 0;
        for (int i = 0; i < polls; i++) {
            got += cq.poll(wcs, wcs.length);
        }
        return got;
    }

    @ParameterizedTest
    @ValueSource(strings = {"siw0", "rxe0"})
    void aCompletionQueueLargerThanTheDeviceIsRefusedBeforeTheCall(String name) throws RdmaException {
        try (FfmContext dev = FfmContext.open(name)) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> dev.createCq(Integer.MAX_VALUE));
            assertTrue(e.getMessage().contains("max_cqe of " + name), e.getMessage());
        }
    }

    @org.junit.jupiter.api.Test
    void aMissingDeviceNamesTheOnesThere() {
        RdmaException e = assertThrows(RdmaException.class, () -> FfmContext.open("nosuchdev0"));
        assertTrue(e.getMessage().contains("siw0") && e.getMessage().contains("rxe0"), e.getMessage());
    }

    /**
     * Twenty threads wait in a consumer's completion channel's {@code next} (one in poll(2), the
     * others queued behind its slice); close() lets them all leave within about one 100 ms slice
     * and well inside its own 2 s wait for them: a queued waiter no longer takes a slice of its own.
     */
    @ParameterizedTest
    @ValueSource(strings = {"siw0"})
    void aChannelClosedUnderTwentyWaitersLetsThemLeaveWithinASlice(String name) throws Exception {
        try (FfmContext dev = FfmContext.open(name)) {
            FfmChannel ch = dev.createChannel();
            int waiters = 20;
            java.util.concurrent.CountDownLatch left = new java.util.concurrent.CountDownLatch(waiters);
            java.util.concurrent.atomic.AtomicInteger events = new java.util.concurrent.atomic.AtomicInteger();
            for (int i = 0; i < waiters; i++) {
                Thread.ofPlatform().daemon().name("waiter-" + i).start(() -> {
                    try {
                        if (ch.next(30, java.util.concurrent.TimeUnit.SECONDS) != null) {
                            events.incrementAndGet();
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } finally {
                        left.countDown();
                    }
                });
            }
            Thread.sleep(500); // all inside next by now
            long start = System.nanoTime();
            ch.close();
            long closeMs = (System.nanoTime() - start) / 1_000_000;
            assertTrue(left.await(5, java.util.concurrent.TimeUnit.SECONDS), "waiters still in next 5 s after close");
            long allMs = (System.nanoTime() - start) / 1_000_000;
            assertEquals(0, events.get());
            assertTrue(closeMs < 1_000 && allMs < 1_000, "close took " + closeMs + " ms, the last waiter left after "
                    + allMs + " ms (a queued waiter took a 100 ms slice of its own after the close)");
        }
    }
}
