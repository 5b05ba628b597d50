package org.jwarp.disni.impl;

import com.ibm.disni.util.MemoryUtils;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.jwarp.disni.natives.JwarpNative;
import org.jwarp.provider.SrqBase;
import org.jwarp.provider.SrqSlots;
import org.jwarp.provider.WorkRequestChecks;
import org.jwarp.provider.WrRing;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RecvRequest;
import org.jwarp.verbs.ScatterGatherList;
import org.jwarp.verbs.WorkCompletion;
import org.jwarp.verbs.WorkRequestException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A shared receive queue through jwarp's libdisni ({@code ibv_create_srq}, {@code
 * ibv_post_srq_recv}, {@code ibv_modify_srq} for the limit, {@code ibv_destroy_srq}): untagged
 * buffers (RFC 5041 §5.1) for every QP attached to it. A chain is written as linked {@code
 * ibv_recv_wr}s with their SGE arrays into a preallocated direct buffer and posted in one JNI
 * crossing, without allocation.
 *
 * <p>The device never sees the caller's wr_id: each buffer holds a slot of its own, named by the
 * token it carries ({@link SrqSlots}, shared with the ffm provider's SRQ); a completion retires
 * exactly its slot.
 *
 * <p>Thread-safe: posts and completion mapping are serialized on this object.
 */
final class DisniSrq extends SrqBase {
    private static final Logger LOG = LoggerFactory.getLogger(DisniSrq.class);
    static final long TAG = SrqSlots.TAG;
    static final long TAG_MASK = 0b11L << 62;

    private final DisniDevice device;
    final DisniPd pd;
    /** What a region is to this queue for the post-time checks: its buffers serve QPs of this domain (RFC 5041 §8.2). */
    private final WorkRequestChecks.Regions regions;
    final long srqPtr;
    private final ByteBuffer wr;
    private final long wrAddr;

    private DisniSrq(DisniDevice device, DisniPd pd, long srqPtr, int capacity, int maxSge) {
        super(capacity, maxSge);
        this.device = device;
        this.pd = pd;
        this.regions = r -> DisniQp.verdict(pd, r);
        this.srqPtr = srqPtr;
        int stride = DisniQp.RECV_WR_SIZE + maxSge * DisniQp.SGE_SIZE;
        wr = ByteBuffer.allocateDirect(capacity * stride).order(ByteOrder.nativeOrder());
        wrAddr = MemoryUtils.getAddress(wr);
        for (int i = 0; i < capacity; i++) {
            wr.putLong(i * DisniQp.RECV_WR_SIZE + DisniQp.WR_NEXT,
                    i + 1 < capacity ? wrAddr + (long) (i + 1) * DisniQp.RECV_WR_SIZE : 0L);
            wr.putLong(i * DisniQp.RECV_WR_SIZE + DisniQp.WR_SG_LIST, wrAddr + sge(i, 0));
        }
        LOG.debug("SRQ 0x{} max_wr {} max_sge {}", Long.toHexString(srqPtr), capacity, maxSge);
    }

    /** Creates an SRQ in {@code pd} with at least {@code maxWr} buffers of up to {@code maxSge} SGEs. */
    static DisniSrq create(DisniDevice device, DisniPd pd, int maxWr, int maxSge) throws RdmaException {
        ByteBuffer granted = ByteBuffer.allocateDirect(JwarpNative.SRQ_SIZE).order(ByteOrder.nativeOrder());
        long ptr;
        try {
            ptr = JwarpNative.srqCreate(CmDispatcher.ptr(pd.pd), maxWr, maxSge, granted);
        } catch (IOException e) {
            throw new RdmaException("ibv_create_srq(max_wr " + maxWr + ", max_sge " + maxSge + "): " + e.getMessage(), e);
        }
        // more than the tokens can name: use no more than that many
        int cap = Math.min(Math.max(maxWr, granted.getInt(JwarpNative.SRQ_MAX_WR)), SrqSlots.MAX_SLOTS);
        int sge = Math.max(1, Math.min(maxSge, granted.getInt(JwarpNative.SRQ_MAX_SGE)));
        return new DisniSrq(device, pd, ptr, cap, sge);
    }

    private int sge(int w, int j) {
        return capacity * DisniQp.RECV_WR_SIZE + (w * maxSge + j) * DisniQp.SGE_SIZE;
    }

    @Override
    protected String arm(int limit) {
        int rc = JwarpNative.srqArm(srqPtr, limit);
        return rc == 0 ? null : "errno " + rc;
    }

    @Override
    public void postRecv(long wrId, MemoryRegion mr, long offset, int length) throws WorkRequestException {
        synchronized (this) {
            WorkRequestException e = write(0, wrId, null, mr, offset, length);
            if (e != null) {
                throw e;
            }
            post(1);
        }
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

    /** Posts the k prepared WRs (entries 0..k-1 of the buffer); the slots of the ones taken stay held. */
    private void post(int k) throws WorkRequestException {
        int stride = DisniQp.RECV_WR_SIZE;
        int last = (k - 1) * stride + DisniQp.WR_NEXT;
        wr.putLong(last, 0L);
        long r = JwarpNative.srqPostRecvList(srqPtr, wrAddr);
        wr.putLong(last, k < capacity ? wrAddr + (long) k * stride : 0L);
        int ok = WrRing.postedOf(r, k);
        slots.refused(ok == WorkRequestException.INDEX_UNKNOWN ? k : ok, k);
        if (r != 0) {
            throw new WorkRequestException("ibv_post_srq_recv refused it with errno " + (int) r
                    + (ok == WorkRequestException.INDEX_UNKNOWN ? " without naming the WR (any of the " + k
                    + " may have been posted)" : ""), ok, null);
        }
    }

    /** Writes WR k of a chain into entry k, taking a free slot; or returns why it is refused. */
    private WorkRequestException write(int k, long wrId, ScatterGatherList sgl, MemoryRegion one, long oneOff, int oneLen) {
        WorkRequestException refused = WorkRequestChecks.sharedRecv(regions, !isOpen(), slots.full(), capacity, maxSge, sgl,
                one, oneOff, oneLen, k);
        if (refused != null) {
            return refused;
        }
        int written = DisniQp.putRecvSges(wr, sge(k, 0), sgl, one, oneOff, oneLen);
        int w = k * DisniQp.RECV_WR_SIZE;
        wr.putLong(w, slots.take(k, wrId));
        wr.putInt(w + DisniQp.WR_NUM_SGE, written);
        return null;
    }

    @Override
    public synchronized void close() {
        if (!markClosed()) {
            return;
        }
        int rc = JwarpNative.srqDestroy(srqPtr);
        if (rc != 0) {
            LOG.warn("ibv_destroy_srq returned errno {} (a QP still uses it?): the native SRQ leaked", rc);
        }
        device.forget(this);
        pd.forget(this);
    }
}
