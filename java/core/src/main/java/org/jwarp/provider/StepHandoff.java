package org.jwarp.provider;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Lets the threads waiting for a completion queue's monitor in before the next step of an await
 * that waits in one native call per step under that monitor (DiSNI's {@code cqAwait}, ffm's
 * {@code jw_cq_await}, steps of up to 100 ms; RFC 5040 §5.5 completion notification). A monitor is
 * not fair: the awaiter would take it again at once after an empty step, and a poll waiting for it
 * could wait for several steps. A thread counts itself in {@link #arriving} before it blocks on the
 * monitor and out in {@link #arrived} once in; after an empty step the awaiter naps in
 * {@link #letArrivalsIn} while any is counted, so a poll waits for one step's end at most.
 * Allocates nothing.
 */
public final class StepHandoff {
    /** The awaiter's nap between steps while counted threads take the monitor. */
    static final long NAP_NANOS = TimeUnit.MICROSECONDS.toNanos(20);

    private final AtomicInteger entering = new AtomicInteger();

    /** Before blocking on the monitor (a poll, a spin, an await step). */
    public void arriving() {
        entering.getAndIncrement();
    }

    /** First thing once inside the monitor. */
    public void arrived() {
        entering.getAndDecrement();
    }

    /**
     * After an empty step, outside the monitor: naps until every thread counted by
     * {@link #arriving} has been in, or until {@code deadline} ({@link System#nanoTime}).
     */
    public void letArrivalsIn(long deadline) {
        while (entering.get() > 0 && deadline - System.nanoTime() > 0) {
            LockSupport.parkNanos(NAP_NANOS);
        }
    }
}
