package org.jwarp.soft.verbs;

import org.jwarp.provider.WorkRequestChecks;
import org.jwarp.verbs.AsyncEvent;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RecvRequest;
import org.jwarp.verbs.ScatterGatherList;
import org.jwarp.verbs.SharedReceiveQueue;
import org.jwarp.verbs.WorkRequestException;

/**
 * The embedded provider's shared receive queue ({@code ibv_srq}; untagged buffers of RFC 5041
 * §5.1 shared by streams). Buffers wait here in posting order; when an untagged Send begins on any
 * attached queue pair and that QP holds no buffer, its data path takes the oldest one from here
 * into the QP's receive ring (under the QP's lock, then this queue's: that order only), so
 * messages consume buffers in the order they start arriving, across all QPs, and complete on the
 * QP's receive CQ with its qp_num. A buffer taken by a QP that then fails completes as flushed on
 * that QP; buffers still here stay posted.
 *
 * <p>The limit (IBV_SRQ_LIMIT) raises {@link AsyncEvent.Type#SRQ_LIMIT_REACHED} once the posted
 * count drops below it, then disarms. Fixed preallocated rings: posting and taking allocate
 * nothing.
 *
 * <p>Thread-safe: every method takes this queue's lock.
 */
public final class SoftSharedReceiveQueue implements SharedReceiveQueue {
    private final SoftProtectionDomain pd;
    /** What a region is to this queue for the post-time checks (RFC 5041 §8.2: this domain's, live). */
    private final WorkRequestChecks.Regions regions;
    private final int capacity;
    private final int maxSge;
    private final long[] wrIds;
    private final SoftMemoryRegion[] sgMr;
    private final int[] sgOff;
    private final int[] sgLen;
    private final int[] sgCount;
    private long head;
    private long tail;
    private int limit;
    private boolean closed;

    SoftSharedReceiveQueue(SoftProtectionDomain pd, int maxWr, int maxSge) {
        if (maxWr < 1 || maxWr > SoftLimits.MAX_QP_WR) {
            throw new IllegalArgumentException("maxWr " + maxWr + " outside 1.." + SoftLimits.MAX_QP_WR);
        }
        if (maxSge < 1 || maxSge > SoftLimits.MAX_SGE) {
            throw new IllegalArgumentException("maxSge " + maxSge + " outside 1.." + SoftLimits.MAX_SGE);
        }
        this.pd = pd;
        this.regions = r -> SoftMemoryRegion.verdict(pd, r);
        this.capacity = maxWr;
        this.maxSge = maxSge;
        wrIds = new long[maxWr];
        sgMr = new SoftMemoryRegion[maxWr * maxSge];
        sgOff = new int[maxWr * maxSge];
        sgLen = new int[maxWr * maxSge];
        sgCount = new int[maxWr];
    }

    SoftProtectionDomain pd() {
        return pd;
    }

    @Override
    public int capacity() {
        return capacity;
    }

    @Override
    public int maxSge() {
        return maxSge;
    }

    /** Posted buffers not yet taken by a Send (a buffer counts out when a message starts consuming it). */
    @Override
    public synchronized int posted() {
        return (int) (tail - head);
    }

    @Override
    public synchronized int limit() {
        return limit;
    }

    @Override
    public synchronized void armLimit(int l) throws RdmaException {
        if (l < 0 || l >= capacity) {
            throw new RdmaException("srq_limit " + l + " outside 0.." + (capacity - 1) + " (max_wr " + capacity + ")");
        }
        if (closed) {
            throw new RdmaException("armLimit: shared receive queue is closed");
        }
        limit = l;
    }

    @Override
    public void postRecv(RecvRequest first) throws WorkRequestException {
        synchronized (this) {
            int k = 0;
            for (RecvRequest wr = first; wr != null; wr = wr.next, k++) {
                WorkRequestException e = enqueue(wr.wrId, wr.sgl, null, 0, 0, k);
                if (e != null) {
                    throw e;
                }
            }
        }
    }

    @Override
    public synchronized void postRecv(long wrId, MemoryRegion mr, long offset, int length) throws WorkRequestException {
        WorkRequestException e = enqueue(wrId, null, mr, offset, length, 0);
        if (e != null) {
            throw e;
        }
    }

    private WorkRequestException enqueue(long wrId, ScatterGatherList sgl, MemoryRegion one, long oneOff, int oneLen,
            int k) {
        WorkRequestException refused = WorkRequestChecks.sharedRecv(regions, closed, tail - head == capacity, capacity,
                maxSge, sgl, one, oneOff, oneLen, k);
        if (refused != null) {
            return refused;
        }
        int n = sgl != null ? sgl.count() : (one == null && oneLen == 0 ? 0 : 1);
        int i = (int) (tail % capacity);
        int base = i * maxSge;
        wrIds[i] = wrId;
        for (int j = 0; j < n; j++) {
            sgMr[base + j] = (SoftMemoryRegion) (sgl != null ? sgl.region(j) : one);
            sgOff[base + j] = (int) (sgl != null ? sgl.offset(j) : oneOff);
            sgLen[base + j] = sgl != null ? sgl.length(j) : oneLen;
        }
        sgCount[i] = n;
        tail++;
        return null;
    }

    /**
     * Moves the oldest buffer into {@code qp}'s receive ring (the QP's lock is held). False when
     * none is posted. Raises the limit event when the count drops below the armed limit.
     */
    boolean takeInto(SoftQueuePair qp) {
        boolean raise;
        int left;
        synchronized (this) {
            if (head == tail || closed) {
                return false;
            }
            int i = (int) (head % capacity);
            int base = i * maxSge;
            qp.acceptShared(wrIds[i], sgMr, sgOff, sgLen, base, sgCount[i]);
            for (int j = 0; j < sgCount[i]; j++) {
                sgMr[base + j] = null;
            }
            head++;
            left = (int) (tail - head);
            raise = limit > 0 && left < limit;
            if (raise) {
                limit = 0;
            }
        }
        if (raise) {
            pd.device().events().raise(new AsyncEvent(AsyncEvent.Type.SRQ_LIMIT_REACHED, qp.qpNum(), null, null, this,
                    left + " buffers posted, below the armed limit"));
        }
        return true;
    }

    /** Drops the posted buffers and refuses later posts; also done by its protection domain's close. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            for (int i = 0; i < sgMr.length; i++) {
                sgMr[i] = null;
            }
            head = tail;
        }
        pd.forget(this);
    }
}
