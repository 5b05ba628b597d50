package org.jwarp.ffm.impl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import org.jwarp.verbs.RdmaException;

/**
 * The sleep of {@link FfmCq#await} on a CQ without a consumer's channel (RFC 5040 §5.5
 * completion notification): the CQ's own non-blocking {@code ibv_comp_channel} and an eventfd
 * that close() writes, both waited on in one {@code poll(2)} of at most {@value #SLICE_MS} ms,
 * then one event taken with {@code ibv_get_cq_event}. Events are acknowledged
 * {@link FfmCq#CHANNEL_ACK_BATCH} at a time and the rest by {@link #release} before the CQ is
 * destroyed ({@code ibv_destroy_cq} waits for every event it reported). The caller arms the CQ
 * and polls it again before it sleeps here (poll, arm, poll, sleep, poll): a completion that
 * arrived before the arming is found by the second poll, one after it raises the event.
 *
 * <p>With {@link FfmNativeWait} bound ({@code -Djwarp.ffm.nativeLib}), {@link #step} makes the
 * whole sequence one downcall instead, under the CQ's monitor, and close() ends it through the
 * same eventfd before it takes that monitor.
 *
 * <p>Otherwise each step is its own downcall (FFM chains no native calls); the segments they use are
 * allocated once, so a wait allocates nothing. One thread sleeps at a time (the monitor of this
 * object); others wait for it, at most one slice, or until a completion or close ends its sleep.
 * The event that ends one sleep also disarms the CQ, so a thread that armed before that event
 * was taken does not sleep: it returns to poll and arm again (else it would sleep on a CQ that
 * raises no event, until its slice ends, with a completion waiting).
 */
final class FfmCqWait {
    private static final int SLICE_MS = 100;

    private final String device;
    /** The CQ's own {@code struct ibv_comp_channel}. */
    final MemorySegment channel;
    private final int wakeFd;
    private final Arena arena = Arena.ofShared();
    /** Two {@code struct pollfd}: the channel's fd, the wake-up eventfd. */
    private final MemorySegment pollfds = arena.allocate(2 * FfmChannel.POLLFD_SIZE, 4);
    private final MemorySegment state = arena.allocate(Ibv.CALL_STATE);
    /** {@code ibv_get_cq_event}'s out-parameters: the CQ and its context. */
    private final MemorySegment taken = arena.allocate(ADDRESS, 2);
    private final MemorySegment takenContext = taken.asSlice(ADDRESS.byteSize());
    private MemorySegment cq = MemorySegment.NULL;
    /** The one-downcall wait, or null for the Java steps. */
    private final FfmNativeWait oneCall;
    /** The uint32 count of events {@link #step} took and not yet acknowledged (the native side's). */
    private final MemorySegment nativeUnacked = arena.allocate(JAVA_INT);
    /** Set by the first {@link #wake}: the eventfd is signalled once, never after it was closed. */
    private final java.util.concurrent.atomic.AtomicBoolean woken = new java.util.concurrent.atomic.AtomicBoolean();
    /** Events taken and not yet acknowledged (guarded by this). */
    private int unacked;
    /** Events taken so far (written under this object's monitor, read without it before an arming). */
    private volatile long events;
    /** Set by close() before it wakes the sleeper (guarded by this once set). */
    private volatile boolean closed;

    private FfmCqWait(String device, MemorySegment channel, int wakeFd, FfmNativeWait oneCall) {
        this.device = device;
        this.oneCall = oneCall;
        this.channel = channel;
        this.wakeFd = wakeFd;
        pollfds.set(JAVA_INT, 0, FfmChannel.fd(channel));
        pollfds.set(JAVA_SHORT, 4, FfmChannel.POLLIN);
        pollfds.set(JAVA_INT, FfmChannel.POLLFD_SIZE, wakeFd);
        pollfds.set(JAVA_SHORT, FfmChannel.POLLFD_SIZE + 4, FfmChannel.POLLIN);
    }

    /** A channel and an eventfd for a CQ of {@code ctx} that is about to be created on {@link #channel}. */
    static FfmCqWait create(FfmContext ctx) throws RdmaException {
        MemorySegment ch = FfmChannel.createNative(ctx);
        try {
            return new FfmCqWait(ctx.name, ch, FfmChannel.eventFd(ctx.name), FfmNativeWait.configured());
        } catch (RdmaException | RuntimeException | Error e) {
            FfmChannel.destroyNative(ch, ctx.name);
            throw e;
        }
    }

    /** The CQ was created on {@link #channel}. */
    void bind(MemorySegment cq) {
        this.cq = cq;
    }

    /**
     * Sleeps until the CQ's event, close() or {@code leftNanos} (at most one slice), taking the
     * event if one came. The CQ was armed by the caller after it read {@link #taken}; when an event
     * was taken since, that event disarmed the CQ and this returns at once (the caller polls and
     * arms again).
     *
     * @param takenBeforeArming {@link #taken} as the caller read it before it armed the CQ
     * @return false when close() has begun (the caller returns)
     */
    boolean sleep(long leftNanos, long takenBeforeArming) {
        int ms = (int) Math.max(0, Math.min(SLICE_MS, TimeUnit.NANOSECONDS.toMillis(leftNanos + 999_999L)));
        synchronized (this) {
            if (closed) {
                return false;
            }
            if (events != takenBeforeArming) {
                return true;
            }
            try {
                if (!FfmChannel.waitReadable(state, pollfds, 2, ms, device) || closed) {
                    return !closed;
                }
                if (FfmChannel.takeEvent(state, channel, taken, takenContext, device) != 0) {
                    events++;
                    if (++unacked >= FfmCq.CHANNEL_ACK_BATCH) {
                        ack();
                    }
                }
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable t) {
                throw Ibv.downcallFailed("poll(2) / ibv_get_cq_event", t);
            }
            return !closed;
        }
    }

    /** The one-downcall wait in use, or null (the Java steps). */
    FfmNativeWait oneCall() {
        return oneCall;
    }

    /**
     * The whole wait in one downcall ({@link FfmNativeWait}): poll, arm, poll, sleep of at most
     * {@code nanos}, take the event, poll, into {@code wcs}. The caller holds the CQ's monitor.
     *
     * @return the completions polled, 0 (none: time up, woken by close, or a spurious event), or a
     *         negative errno
     */
    int step(int want, MemorySegment wcs, long nanos) {
        try {
            return (int) oneCall.await.invokeExact(cq, channel, wakeFd, want, wcs, nanos, nativeUnacked);
        } catch (Throwable t) {
            throw Ibv.downcallFailed(FfmNativeWait.SYMBOL, t);
        }
    }

    /** Whether close() has begun (a waiter returns 0). */
    boolean closing() {
        return closed;
    }

    private void ack() throws Throwable {
        if (unacked > 0) {
            FfmChannel.ACK_CQ_EVENTS.invokeExact(cq, unacked);
            unacked = 0;
        }
        int k = nativeUnacked.get(JAVA_INT, 0);
        if (k != 0) {
            FfmChannel.ACK_CQ_EVENTS.invokeExact(cq, k);
            nativeUnacked.set(JAVA_INT, 0, 0);
        }
    }

    /** Ends a sleep or a {@link #step} in progress and any later one (the eventfd stays readable); once. */
    void wake() {
        closed = true;
        if (woken.compareAndSet(false, true)) {
            FfmChannel.signal(wakeFd);
        }
    }

    /** Events taken and not yet acknowledged, by sleeps and by {@link #step}s (tests; the awaiting thread). */
    synchronized int unacknowledged() {
        return unacked + nativeUnacked.get(JAVA_INT, 0);
    }

    /** Events taken by sleeps so far; read before arming the CQ for {@link #sleep}, and by tests. */
    long taken() {
        return events;
    }

    /**
     * Ends a sleep in progress and any later one, waits for the sleeper to leave, and
     * acknowledges the events not yet acknowledged: then the CQ may be destroyed.
     */
    void release() {
        wake();
        synchronized (this) {
            try {
                ack();
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable t) {
                throw Ibv.downcallFailed("ibv_ack_cq_events", t);
            }
        }
    }

    /** After the CQ was destroyed (or never created): the channel and the eventfd go. */
    void destroy() {
        if (FfmChannel.destroyNative(channel, device)) {
            arena.close();
        }
        FfmChannel.closeFd(wakeFd);
    }
}
