package org.jwarp.provider;

import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.SharedReceiveQueue;
import org.jwarp.verbs.WorkCompletion;

/**
 * What the rdma_cm providers' shared receive queues (untagged buffers for many QPs, RFC 5041 §5.1)
 * share: the granted size, the {@link SrqSlots} that map a buffer's token back to the caller's
 * wrId, the open state, and the limit ({@code ibv_modify_srq(IBV_SRQ_LIMIT)}) with its checks and
 * its bookkeeping. The subclass posts and destroys the native SRQ, and arms it ({@link #arm}).
 *
 * <p>Thread-safe: the slots, the arming and the open state are guarded by this object's monitor,
 * which the subclass's posts and close hold too.
 */
public abstract class SrqBase implements SharedReceiveQueue {
    /** The buffers the SRQ holds at most (granted, never more than the tokens can name). */
    protected final int capacity;
    /** The SGEs one buffer may have (granted). */
    protected final int maxSge;
    /** The slot of each posted buffer, named by the token the device sees as its wr_id. */
    protected final SrqSlots slots;
    private volatile boolean open = true;
    /** The armed limit as this side knows it; 0 once the limit event disarmed it. */
    private volatile int armedLimit;

    /**
     * @param capacity the granted number of buffers (at most {@link SrqSlots#MAX_SLOTS})
     * @param maxSge   the granted SGEs per buffer
     */
    protected SrqBase(int capacity, int maxSge) {
        this.capacity = capacity;
        this.maxSge = maxSge;
        this.slots = new SrqSlots(capacity);
    }

    @Override
    public final int capacity() {
        return capacity;
    }

    @Override
    public final int maxSge() {
        return maxSge;
    }

    /** Posted buffers whose completion has not been polled yet (a slot is freed at the poll). */
    @Override
    public final synchronized int posted() {
        return slots.posted();
    }

    /**
     * Checks the limit (0..capacity-1) and the open state, then arms; serialized with close. The
     * limit is recorded before the device is told, so a limit event raised right after arming (which
     * disarms it) is not overwritten; a refused arm restores the previous value.
     */
    @Override
    public final synchronized void armLimit(int limit) throws RdmaException {
        if (limit < 0 || limit >= capacity) {
            throw new RdmaException("srq_limit " + limit + " outside 0.." + (capacity - 1) + " (max_wr " + capacity + ")");
        }
        if (!open) {
            throw new RdmaException("armLimit: shared receive queue is closed");
        }
        int before = armedLimit;
        armedLimit = limit;
        String refused = arm(limit);
        if (refused != null) {
            armedLimit = before;
            throw new RdmaException("ibv_modify_srq(IBV_SRQ_LIMIT " + limit + ") failed with " + refused);
        }
    }

    /**
     * Tells the device the limit ({@code ibv_modify_srq}), under the monitor, the SRQ open.
     *
     * @return null when armed, else the failure (an errno, described)
     */
    protected abstract String arm(int limit);

    /** The armed limit; 0 once the limit event arrived (the device disarms it). */
    @Override
    public final int limit() {
        return armedLimit;
    }

    /** The device raised the limit event (IBV_EVENT_SRQ_LIMIT_REACHED): it disarmed the limit. */
    public final void limitReached() {
        armedLimit = 0;
    }

    /** {@return whether close() has not begun} */
    public final boolean isOpen() {
        return open;
    }

    /**
     * The first step of close(), under the monitor: marks the SRQ closed.
     *
     * @return false when it was closed before (the caller returns)
     */
    protected final synchronized boolean markClosed() {
        if (!open) {
            return false;
        }
        open = false;
        return true;
    }

    /** Whether {@code token} is one of this SRQ's (by tag and generation; no lock: both are fixed). */
    public final boolean owns(long token) {
        return slots.owns(token);
    }

    /**
     * A receive completion (success or error) with one of this SRQ's tokens: its slot retires and
     * the caller's wrId replaces the token. False for a stale or foreign token.
     */
    public final synchronized boolean completed(WorkCompletion wc) {
        return slots.completed(wc);
    }
}
