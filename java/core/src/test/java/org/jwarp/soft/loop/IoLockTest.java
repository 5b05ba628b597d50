package org.jwarp.soft.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The I/O lock's hand-over, which a stream closed from outside (RFC 5040 §6.2.2 abnormal
 * termination) uses to release its transmit path: the work runs under the lock, once, and is
 * never lost however the caller and the holders interleave.
 */
class IoLockTest {
    @Test
    @DisplayName("RFC 5040 §6.2.2: work handed to a held I/O lock runs under it as the holder lets go, not before")
    void handedWorkRunsAtTheHoldersOutermostUnlock_5040_6_2_2() {
        IoLock io = new IoLock();
        AtomicBoolean ranLocked = new AtomicBoolean();
        io.lock();
        io.lock();
        Thread[] by = new Thread[1];
        Thread t = new Thread(() -> io.runLocked(() -> {
            ranLocked.set(io.isHeldByCurrentThread());
            by[0] = Thread.currentThread();
        }));
        t.start();
        joinQuietly(t);
        assertFalse(ranLocked.get(), "ran while another thread held the lock");
        io.unlock();
        assertFalse(ranLocked.get(), "ran at an inner unlock (a frame up the stack still holds the lock)");
        io.unlock();
        assertTrue(ranLocked.get(), "not run under the lock at the holder's outermost unlock");
        assertEquals(Thread.currentThread(), by[0]);
        assertFalse(io.isLocked());
    }

    @Test
    @DisplayName("RFC 5040 §6.2.2: no hand-over is lost when the last holder lets go as the work is handed over")
    void noHandOverIsLost_5040_6_2_2() throws Exception {
        IoLock io = new IoLock();
        int rounds = 20_000;
        CyclicBarrier start = new CyclicBarrier(2);
        CyclicBarrier end = new CyclicBarrier(2);
        Thread holder = new Thread(() -> {
            try {
                for (int i = 0; i < rounds; i++) {
                    io.lock();
                    start.await();
                    busy(i % 7);
                    io.unlock(); // the last unlock of the round: nobody takes the lock after it
                    end.await();
                }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        holder.start();
        AtomicInteger ran = new AtomicInteger();
        Runnable work = () -> {
            if (!io.isHeldByCurrentThread()) {
                throw new AssertionError("hand-over ran without the lock");
            }
            ran.incrementAndGet();
        };
        try {
            for (int i = 0; i < rounds; i++) {
                start.await(5, TimeUnit.SECONDS);
                busy(i % 5);
                io.runLocked(work);
                end.await(5, TimeUnit.SECONDS);
                assertEquals(i + 1, ran.get(), "handed work lost in round " + i + " (the holder let go as it was handed)");
            }
        } finally {
            holder.interrupt();
            holder.join(5000);
        }
        assertFalse(io.isLocked());
    }

    private static int sink;

    private static void busy(int n) {
        for (int i = 0; i < n * 20; i++) {
            sink += i;
        }
    }

    private static void joinQuietly(Thread t) {
        try {
            t.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
