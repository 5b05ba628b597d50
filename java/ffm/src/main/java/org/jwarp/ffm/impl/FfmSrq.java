package org.jwarp.ffm.impl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.jwarp.provider.SrqBase;
import org.jwarp.provider.SrqSlots;
import org.jwarp.provider.WorkRequestChecks;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RecvRequest;
import org.jwarp.verbs.ScatterGatherList;
import org.jwarp.verbs.WorkRequestException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A shared receive queue ({@code ibv_create_srq}, {@code ibv_modify_srq} for the limit, {@code
 * ibv_destroy_srq}): untagged buffers (RFC 5041 §5.1) for every QP attached to it. A post is one
 * downcall to the context's {@code ops.post_srq_recv} with the whole chain written into
 * preallocated {@code ibv_recv_wr} and {@code ibv_sge} arrays; nothing is allocated unless a WR is
 * refused. The device sees a {@link SrqSlots} token per buffer, mapped back to the caller's wrId at
 * the completion (by the QP that polled it).
 *
 * <p>Thread-safe: posts, completion mapping and close are serialized on this object.
 */
final class FfmSrq extends SrqBase {
    private static final Logger LOG = LoggerFactory.getLogger(FfmSrq.class);
    private static final long RECV_WR_SIZE = IbvLayouts.RECV_WR.byteSize();
    private static final long SGE_SIZE = IbvLayouts.SGE.byteSize();

    final FfmPd pd;
    final MemorySegment srq;
    private final MemorySegment postSrqRecvFn;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment wrs;
    private final MemorySegment sges;
    private final MemorySegment badWr;
    private final MemorySegment limitAttr;
    private final WorkRequestChecks.Regions regions;
    /** What the last refused post returned (an errno). */
    private int lastPostError;

    private FfmSrq(FfmPd pd, MemorySegment srq, int capacity, int maxSge) {
        super(capacity, maxSge);
        this.pd = pd;
        this.srq = srq;
        this.postSrqRecvFn = pd.device.postSrqRecv;
        this.wrs = arena.allocate(IbvLayouts.RECV_WR, capacity);
        this.sges = arena.allocate(IbvLayouts.SGE, (long) capacity * maxSge);
        this.badWr = arena.allocate(ADDRESS);
        this.limitAttr = arena.allocate(IbvLayouts.SRQ_ATTR);
        for (int k = 0; k < capacity; k++) {
            wrs.set(JAVA_LONG, k * RECV_WR_SIZE + IbvLayouts.RWR_SG_LIST, sges.address() + (long) k * maxSge * SGE_SIZE);
        }
        this.regions = r -> !(r instanceof FfmMr m) ? WorkRequestChecks.OTHER_PROVIDER
                : m.pd != pd ? WorkRequestChecks.OTHER_DOMAIN
                : m.access().contains(Access.LOCAL_WRITE) ? WorkRequestChecks.WRITABLE : WorkRequestChecks.READ_ONLY;
    }

    /** Creates an SRQ in {@code pd} with at least {@code maxWr} buffers of up to {@code maxSge} SGEs. */
    static FfmSrq create(FfmPd pd, int maxWr, int maxSge) throws RdmaException {
        if (pd.device.postSrqRecv.equals(MemorySegment.NULL)) {
            throw new RdmaException(pd.device.name + " has no shared receive queues (ops.post_srq_recv is NULL)");
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment state = a.allocate(Ibv.CALL_STATE);
            MemorySegment attr = a.allocate(IbvLayouts.SRQ_INIT_ATTR);
            attr.set(JAVA_INT, IbvLayouts.SRQ_INIT_MAX_WR, maxWr);
            attr.set(JAVA_INT, IbvLayouts.SRQ_INIT_MAX_SGE, maxSge);
            MemorySegment s = (MemorySegment) Ibv.CREATE_SRQ.invokeExact(state, pd.pd, attr);
            if (s.equals(MemorySegment.NULL)) {
                throw new RdmaException("ibv_create_srq(max_wr " + maxWr + ", max_sge " + maxSge + ") on " + pd.device.name
                        + " failed with " + Ibv.describe(Ibv.errno(state)));
            }
            s = s.reinterpret(IbvLayouts.SRQ.byteSize());
            List<String> wrong = new ArrayList<>();
            if (!s.get(ADDRESS, IbvLayouts.SRQ_CONTEXT).equals(pd.device.ctx)) {
                wrong.add("ibv_srq.context is " + FfmContext.hex(s.get(ADDRESS, IbvLayouts.SRQ_CONTEXT)) + ", not the context");
            }
            if (!s.get(ADDRESS, IbvLayouts.SRQ_PD).equals(pd.pd)) {
                wrong.add("ibv_srq.pd is " + FfmContext.hex(s.get(ADDRESS, IbvLayouts.SRQ_PD)) + ", not the domain");
            }
            if (!wrong.isEmpty()) {
                int rc = (int) Ibv.DESTROY_SRQ.invokeExact(s);
                if (rc != 0) {
                    wrong.add("ibv_destroy_srq: " + Ibv.describe(rc));
                }
                FfmContext.layoutCheck("ibv_srq", wrong);
            }
            // ibv_create_srq writes back what the device granted, at least what was asked for
            int cap = Math.min(Math.max(maxWr, attr.get(JAVA_INT, IbvLayouts.SRQ_INIT_MAX_WR)), SrqSlots.MAX_SLOTS);
            int sge = Math.max(1, Math.min(maxSge, attr.get(JAVA_INT, IbvLayouts.SRQ_INIT_MAX_SGE)));
            LOG.debug("SRQ {} on {}: max_wr {} max_sge {}", FfmContext.hex(s), pd.device.name, cap, sge);
            return new FfmSrq(pd, s, cap, sge);
        } catch (RdmaException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Ibv.downcallFailed("ibv_create_srq", t);
        }
    }

    /** {@code ibv_modify_srq(IBV_SRQ_LIMIT)}, under the monitor (serialized with {@link #close()}). */
    @Override
    protected String arm(int limit) {
        limitAttr.set(JAVA_INT, IbvLayouts.SRQ_ATTR_LIMIT, limit);
        int rc;
        try {
            rc = (int) Ibv.MODIFY_SRQ.invokeExact(srq, limitAttr, IbvLayouts.SRQ_LIMIT_MASK);
        } catch (Throwable t) {
            throw Ibv.downcallFailed("ibv_modify_srq", t);
        }
        return rc == 0 ? null : Ibv.describe(rc);
    }

    @Override
    public synchronized void postRecv(long wrId, MemoryRegion mr, long offset, int length) throws WorkRequestException {
        WorkRequestException e = write(0, wrId, null, mr, offset, length);
        if (e != null) {
            throw e;
        }
        post(1);
    }

    @Override
    public synchronized void postRecv(RecvRequest first) throws WorkRequestException {
        WorkRequestException refused = null;
        int k = 0;
        for (RecvRequest r = first; r != null; r = r.next, k++) {
            refused = write(k, r.wrId, r.sgl, null, 0, 0);
            if (refused != null) {
                break;
            }
        }
        if (k > 0) {
            post(k);
        }
        if (refused != null) {
            throw refused;
        }
    }

    /** Writes WR {@code k} of a chain, taking a free slot; or returns why it is refused. */
    private WorkRequestException write(int k, long wrId, ScatterGatherList sgl, MemoryRegion one, long oneOff, int oneLen) {
        WorkRequestException refused = WorkRequestChecks.sharedRecv(regions, !isOpen(), slots.full(), capacity, maxSge, sgl,
                one, oneOff, oneLen, k);
        if (refused != null) {
            return refused;
        }
        long base = (long) k * maxSge * SGE_SIZE;
        int n;
        if (sgl != null) {
            n = FfmQp.writeSges(sgl, sges, base);
        } else if (oneLen > 0) {
            sges.set(JAVA_LONG, base + IbvLayouts.SGE_ADDR, one.address() + oneOff);
            sges.set(JAVA_INT, base + IbvLayouts.SGE_LENGTH, oneLen);
            sges.set(JAVA_INT, base + IbvLayouts.SGE_LKEY, one.lkey());
            n = 1;
        } else {
            n = 0;
        }
        long w = k * RECV_WR_SIZE;
        wrs.set(JAVA_LONG, w + IbvLayouts.RWR_WR_ID, slots.take(k, wrId));
        wrs.set(JAVA_INT, w + IbvLayouts.RWR_NUM_SGE, n);
        return null;
    }

    /** Links WRs 0..k-1 and posts them in one downcall to {@code ops.post_srq_recv}; refused ones free their slots. */
    private void post(int k) throws WorkRequestException {
        for (int i = 0; i < k; i++) {
            wrs.set(JAVA_LONG, i * RECV_WR_SIZE + IbvLayouts.RWR_NEXT, i + 1 < k ? wrs.address() + (i + 1) * RECV_WR_SIZE : 0L);
        }
        badWr.set(JAVA_LONG, 0, 0L);
        int rc;
        try {
            rc = (int) Ibv.POST_SRQ_RECV.invokeExact(postSrqRecvFn, srq, wrs, badWr);
        } catch (Throwable t) {
            throw Ibv.downcallFailed("ops.post_srq_recv", t);
        }
        if (rc == 0) {
            return;
        }
        lastPostError = rc;
        long bad = badWr.get(JAVA_LONG, 0);
        long at = (bad - wrs.address()) / RECV_WR_SIZE;
        int posted = bad >= wrs.address() && at < k ? (int) at : 0;
        slots.refused(posted, k);
        throw new WorkRequestException("ibv_post_srq_recv refused WR " + posted + " of " + k + " with "
                + Ibv.describe(lastPostError), posted, null);
    }

    /** Destroys the SRQ ({@code ibv_destroy_srq}); a second call does nothing. */
    @Override
    public void close() {
        synchronized (this) {
            if (!markClosed()) {
                return;
            }
            try {
                int rc = (int) Ibv.DESTROY_SRQ.invokeExact(srq);
                if (rc != 0) {
                    LOG.warn("ibv_destroy_srq on {} failed with {} (a QP still uses it?): the SRQ leaked", pd.device.name,
                            Ibv.describe(rc));
                }
            } catch (Throwable t) {
                throw Ibv.downcallFailed("ibv_destroy_srq", t);
            }
            arena.close(); // the device copied every posted WR at its post; posts are refused from now on
        }
        pd.forget(this);
    }
}
