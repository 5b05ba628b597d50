package org.jwarp.disni.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The memory of an allocated DiSNI region outlives its windows (RFC 5040 §2.1: a closed region's
 * memory must not be reached again through a stale window, least of all once the addresses serve
 * another, maybe remotely accessible region). Runs on the host with a stand-in mapper: the native
 * window is a plain direct buffer, as here.
 */
class WindowedMemoryTest {
    private final AtomicInteger unmaps = new AtomicInteger();
    private final AtomicInteger discards = new AtomicInteger();
    /** What the stand-in discard returns (an errno, 0 for success). */
    private int discardResult;

    private WindowedMemory memory() {
        return new WindowedMemory(0x1000, 4096, (a, len) -> ByteBuffer.allocateDirect(len), (a, len) -> {
            unmaps.incrementAndGet();
            return 0;
        }, (a, len) -> {
            assertEquals(0x1000, a);
            assertEquals(4096, len);
            discards.incrementAndGet();
            return discardResult;
        });
    }

    private static boolean gcUntil(java.util.function.BooleanSupplier done) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!done.getAsBoolean() && System.nanoTime() < until) {
            System.gc();
            Thread.sleep(20);
        }
        return done.getAsBoolean();
    }

    @Test
    void closeWithoutWindowsUnmapsAtOnce_5040_2_1() {
        WindowedMemory m = memory();
        m.close();
        assertTrue(m.unmapped());
        m.close();
        assertEquals(1, unmaps.get(), "unmapped exactly once");
        assertEquals(0, discards.get(), "unmapped memory needs no discard");
        assertFalse(m.discarded());
    }

    @Test
    void reachableWindowKeepsMemoryMappedAfterClose_5040_2_1() throws Exception {
        WindowedMemory m = memory();
        ByteBuffer w = m.window(0, 64);
        ByteBuffer slice = w.slice(8, 8);
        w = null;
        m.close();
        assertFalse(m.unmapped(), "a reachable window's memory must stay mapped after close");
        assertTrue(m.discarded(), "its pages are given back at close, not at the next GC");
        assertEquals(1, discards.get());
        assertThrows(IllegalStateException.class, () -> m.window(0, 8), "no new window after close");
        // the slice keeps its window reachable
        for (int i = 0; i < 5; i++) {
            System.gc();
            Thread.sleep(20);
        }
        assertFalse(m.unmapped(), "a slice keeps its window, and so the memory, alive");
        slice.putLong(0, 42);
        slice = null;
        assertTrue(gcUntil(m::unmapped), "unmapped once the last window is unreachable");
        assertEquals(1, unmaps.get());
        assertEquals(1, discards.get(), "discarded once, at close");
        assertEquals(0, m.windows());
    }

    @Test
    void failedDiscardIsRecordedAndTheMemoryStillUnmappedLater_5040_2_1() throws Exception {
        discardResult = 12; // ENOMEM
        WindowedMemory m = memory();
        ByteBuffer w = m.window(0, 64);
        m.close();
        m.close();
        assertEquals(1, discards.get(), "a second close does not discard again");
        assertEquals(12, m.discardErrno());
        assertFalse(m.unmapped());
        w.put(0, (byte) 1);
        w = null;
        assertTrue(gcUntil(m::unmapped), "unmapped once the last window is unreachable");
        assertEquals(0, m.unmapErrno());
    }

    @Test
    void windowsDroppedBeforeCloseDoNotDelayIt_5040_2_1() throws Exception {
        WindowedMemory m = memory();
        List<ByteBuffer> ws = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            ws.add(m.window(i * 8L, 8));
        }
        ws.clear();
        assertTrue(gcUntil(() -> m.windows() == 0), "the cleaner uncounts dropped windows");
        assertFalse(m.unmapped(), "open: never unmapped");
        m.close();
        assertTrue(m.unmapped());
        assertEquals(1, unmaps.get());
    }

    @Test
    void windowRacingCloseIsRefusedOrCounted_5040_2_1() throws Exception {
        for (int round = 0; round < 200; round++) {
            WindowedMemory m = memory();
            ByteBuffer[] got = new ByteBuffer[1];
            Thread t = new Thread(() -> {
                try {
                    got[0] = m.window(0, 8);
                } catch (IllegalStateException refused) {
                    // close won
                }
            });
            t.start();
            m.close();
            t.join();
            assertEquals(got[0] == null, m.unmapped(), "round " + round + ": a window made is counted, else unmapped");
            assertEquals(got[0] != null, m.discarded(), "round " + round + ": a counted window's pages are discarded");
            got[0] = null;
        }
    }
}
