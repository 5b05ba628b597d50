package org.jwarp.provider;

import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.jwarp.ground.SnapshotArrays;
import org.jwarp.verbs.CompletionChannel;
import org.jwarp.verbs.CompletionQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The consumer side that the rdma_cm providers' completion channels share (RFC 5040 §5.5
 * completion notification over one {@code ibv_comp_channel} for many CQs): the channel's CQs in a
 * copy-on-write array, {@link #next} taking one event per call in slices of at most
 * {@value #SLICE_MS} ms (so a close or an interrupt is seen within one slice) and mapping the
 * {@code ibv_cq} back to its CQ by a scan (no allocation per event), the event count, the
 * callback form ({@link ChannelDispatcher}) and a close that lets the waiters leave (at most 2 s)
 * before the subclass destroys the native channel. The subclass takes the events
 * ({@link #takeEvent}); its CQs count and acknowledge them ({@link #eventTaken}).
 *
 * <p>Thread-safe: several threads may wait; an event another thread took makes the loser wait again.
 *
 * @param <C> the provider's CQ
 */
public abstract class ConsumerChannel<C extends CompletionQueue> implements CompletionChannel {
    private static final Logger LOG = LoggerFactory.getLogger(ConsumerChannel.class);
    /** The longest wait of one {@link #takeEvent} call. */
    protected static final int SLICE_MS = 100;
    private static final long CLOSE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(2);

    private final C[] none;
    private volatile C[] cqs;
    private volatile boolean open = true;
    /** Threads inside {@link #next}: close waits for them before the native channel goes. */
    private final AtomicInteger inside = new AtomicInteger();
    private final AtomicLong events = new AtomicLong();
    private final ChannelDispatcher.Listeners listeners = new ChannelDispatcher.Listeners();

    /** @param none the provider's shared empty array of CQs */
    protected ConsumerChannel(C[] none) {
        this.none = none;
        this.cqs = none;
    }

    /** {@code cq} was created on this channel: its events map back to it. */
    public final synchronized void add(C cq) {
        cqs = SnapshotArrays.with(cqs, cq);
    }

    /** {@code cq} closed: its events (none should come) are acknowledged as unknown. */
    public final synchronized void forget(C cq) {
        cqs = SnapshotArrays.without(cqs, cq, none);
    }

    /** {@return whether close() has not begun} */
    public final boolean isOpen() {
        return open;
    }

    @Override
    public final CompletionQueue next(long timeout, TimeUnit unit) throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        inside.incrementAndGet();
        try {
            while (open) {
                long left = deadline - System.nanoTime();
                int ms = (int) Math.max(0, Math.min(SLICE_MS, TimeUnit.NANOSECONDS.toMillis(left + 999_999L)));
                long cq = takeEvent(ms);
                if (cq != 0) {
                    events.incrementAndGet();
                    for (C c : cqs) {
                        if (address(c) == cq) {
                            eventTaken(c);
                            return c;
                        }
                    }
                    LOG.debug("completion event of an unknown CQ 0x{}: acknowledged", Long.toHexString(cq));
                    ackUnknown(cq);
                }
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                if (System.nanoTime() - deadline >= 0) {
                    return null;
                }
            }
            return null;
        } finally {
            inside.decrementAndGet();
        }
    }

    /**
     * Waits up to {@code ms} for one event and takes it ({@code ibv_get_cq_event} on the
     * non-blocking channel); returns at once, with 0, once close() has begun ({@link #isOpen}).
     *
     * @return the address of the {@code ibv_cq} that raised the event, or 0 when none came
     *         (or another waiter took it)
     * @throws IllegalStateException when the native calls fail
     */
    protected abstract long takeEvent(int ms);

    /** {@return the address of {@code cq}'s {@code ibv_cq}} */
    protected abstract long address(C cq);

    /** {@code cq}'s event was taken: it counts it and acknowledges in batches. */
    protected abstract void eventTaken(C cq);

    /** Acknowledges at once one event of a CQ this channel does not know (any more). */
    protected abstract void ackUnknown(long cq);

    @Override
    public final AutoCloseable listen(CompletionHandler handler, Executor executor) {
        return listeners.listen(this, handler, executor);
    }

    @Override
    public final long events() {
        return events.get();
    }

    /**
     * The first step of close(): stops the listeners and waits (at most 2 s) for the threads in
     * {@link #next} to leave.
     *
     * @return false when close() had begun before (the caller returns), else true
     */
    protected final boolean beginClose() {
        synchronized (this) {
            if (!open) {
                return false;
            }
            open = false;
        }
        listeners.closeAll();
        long until = System.nanoTime() + CLOSE_WAIT_NANOS;
        while (inside.get() > 0 && System.nanoTime() - until < 0) {
            LockSupport.parkNanos(1_000_000L); // a waiter leaves within one slice
        }
        return true;
    }

    /** {@return whether no thread is inside {@link #next}} (after {@link #beginClose}: the wait did not time out) */
    protected final boolean noWaiters() {
        return inside.get() == 0;
    }
}
