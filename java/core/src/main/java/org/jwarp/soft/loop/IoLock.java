package org.jwarp.soft.loop;

import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A stream's I/O lock (the stream's {@code io}): held for engine work and non-blocking socket calls
 * only. Names its holder in the stream's {@code debugState} (a stall report shows who holds it).
 *
 * <p>Work a thread may not wait for, such as the release of a stream closed from outside
 * (RFC 5040 §6.2.2 abnormal termination, {@code StreamClose.closeFromOutside}), is
 * {@linkplain #runLocked handed to the lock}: it runs under the lock now when the lock is free,
 * else the holder runs it as it lets go (its outermost unlock), so it neither waits for nor races
 * a reactor or posting thread inside the stream. Not lost: the caller publishes the work, then
 * tries the lock; a holder lets go, then looks for work, and takes the lock again to run what it
 * finds, so one of the two sees the other. The unlock costs one volatile read when nothing is
 * handed over.
 */
public final class IoLock extends ReentrantLock {
    private static final long serialVersionUID = 1L;

    /** Work handed over by {@link #runLocked}, run once under the lock. */
    private final AtomicReference<Runnable> handed = new AtomicReference<>();

    public Thread owner() {
        return getOwner();
    }

    /**
     * Runs {@code work} under this lock: now when the lock is free (or held by the calling thread,
     * whose outermost unlock then runs it), else by the holder as it lets go. Work handed over
     * while earlier work waits runs after it. Cold path (allocates only to chain two).
     */
    public void runLocked(Runnable work) {
        handed.getAndUpdate(prev -> prev == null ? work : () -> {
            prev.run();
            work.run();
        });
        if (tryLock()) {
            unlock();
        }
    }

    @Override
    public void unlock() {
        if (handed.get() != null && getHoldCount() == 1) {
            Runnable r = handed.getAndSet(null);
            if (r != null) {
                try {
                    r.run();
                } finally {
                    super.unlock();
                }
                return;
            }
        }
        super.unlock();
        if (handed.get() != null && !isHeldByCurrentThread() && tryLock()) {
            unlock(); // handed over while this thread held the lock and after it looked: run it now
        }
    }
}
