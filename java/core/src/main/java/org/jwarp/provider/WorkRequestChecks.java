package org.jwarp.provider;

import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.QueuePair;
import org.jwarp.verbs.QueuePair.QpState;
import org.jwarp.verbs.QueuePairCaps;
import org.jwarp.verbs.ScatterGatherList;
import org.jwarp.verbs.SendOpcode;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WorkRequestException;

/**
 * The local checks a work request passes before a provider accepts it (local errors, RFC 5040 §7;
 * ibverbs' bad_wr), one set of rules for every provider: the QP state, a free slot, the SGE count
 * within the granted caps, each SGE inside a usable region (RFC 5041 §8.2) with LOCAL_WRITE where
 * it is written into (a receive buffer or RDMA Read sink, RFC 5040 §6.5), at most 2^31-1 bytes,
 * the inline size, and no RDMA Read when the negotiated ORD is 0 (RFC 6581 §9.1; Reads beyond a
 * non-zero ORD wait in the send queue, the provider's or the device's).
 *
 * <p>What differs between providers is a parameter, not a copy: the queue's depth accounting
 * ({@link Target#sendQueueFull}, {@link Target#receiveQueueFull}) and what a region is to this
 * queue ({@link Regions#verdict}). The embedded provider owns its STags and refuses a region of
 * another protection domain or a deregistered one here; a device provider leaves the lkey's
 * protection domain and liveness to the device (a local protection error completion), and its
 * shared receive queue checks the domain itself.
 *
 * <p>Each check returns the refusal, or null; nothing is allocated unless a request is refused.
 * The caller holds whatever lock guards the queue.
 */
public final class WorkRequestChecks {
    /** {@link Regions#verdict}: a region of this queue's provider and domain, live, with LOCAL_WRITE. */
    public static final int WRITABLE = 0;
    /** {@link Regions#verdict}: usable as a source only (no LOCAL_WRITE, RFC 5040 §6.5). */
    public static final int READ_ONLY = 1;
    /** {@link Regions#verdict}: not a region of this provider. */
    public static final int OTHER_PROVIDER = 2;
    /** {@link Regions#verdict}: a region of another protection domain (RFC 5041 §8.2). */
    public static final int OTHER_DOMAIN = 3;
    /** {@link Regions#verdict}: deregistered (RFC 5041 §8.2, immediate revocation). */
    public static final int DEREGISTERED = 4;

    private WorkRequestChecks() {
    }

    /** What a region named in an SGE is to one work queue: the provider's part of the SGE check. */
    @FunctionalInterface
    public interface Regions {
        /**
         * One of {@link #WRITABLE}, {@link #READ_ONLY}, {@link #OTHER_PROVIDER}, {@link #OTHER_DOMAIN},
         * {@link #DEREGISTERED}, for a non-null region; must not allocate.
         */
        int verdict(MemoryRegion region);
    }

    /** A queue pair as the checks see it; the provider's accounting behind each answer. */
    public interface Target extends Regions {
        /** The QP being posted to: its number, state and granted caps (SGE limits, inline size). */
        QueuePair queuePair();

        /** Whether WR {@code k} of the chain being posted finds no free send slot. */
        boolean sendQueueFull(int k);

        /** Whether receive WR {@code k} of the chain being posted finds no free slot. */
        boolean receiveQueueFull(int k);

        /** Whether the QP takes its receive buffers from a shared receive queue. */
        boolean receivesFromSharedQueue();

        /** The negotiated ORD (RFC 6581 §9.1); 0 forbids any RDMA Read. */
        int ord();
    }

    /** A send-queue WR, {@code k}-th of its chain. */
    public static WorkRequestException send(Target qp, SendRequest wr, int k) {
        SendOpcode op = wr.opcode;
        if (op == null) {
            return new WorkRequestException("opcode: null", k, "opcode");
        }
        QueuePair q = qp.queuePair();
        QpState state = q.state();
        if (state != QpState.RTS) {
            return new WorkRequestException("QP " + q.qpNum() + " is in state " + state + ", not RTS", k, null);
        }
        QueuePairCaps caps = q.caps();
        if (qp.sendQueueFull(k)) {
            return new WorkRequestException("send queue of QP " + q.qpNum() + " is full: " + caps.maxSendWr()
                    + " slots held (maxSendWr; an unsignalled WR holds its slot until a later signalled one completes)",
                    k, null);
        }
        boolean read = op == SendOpcode.RDMA_READ;
        int n = wr.sgl.count();
        int limit = read ? caps.maxSgeRd() : caps.maxSendSge();
        if (n > limit) {
            return new WorkRequestException("num_sge " + n + " exceeds the QP's " + (read ? "maxSgeRd " : "maxSendSge ")
                    + limit, k, "num_sge");
        }
        long total = 0;
        for (int j = 0; j < n; j++) {
            WorkRequestException e = sge(qp, wr.sgl.region(j), wr.sgl.offset(j), wr.sgl.length(j), read, k, j);
            if (e != null) {
                return e;
            }
            total += wr.sgl.length(j);
        }
        if (total > Integer.MAX_VALUE) {
            return tooLong(total, k);
        }
        if (wr.inline) {
            if (read) {
                return new WorkRequestException("inline: an RDMA Read cannot be inline", k, "inline");
            }
            if (total > caps.maxInlineData()) {
                return new WorkRequestException("inline: " + total + " bytes exceed the QP's maxInlineData "
                        + caps.maxInlineData(), k, "inline");
            }
        }
        if (read && qp.ord() == 0) {
            return new WorkRequestException("RDMA Read refused: the negotiated ORD is 0, no Read may be issued "
                    + "(RFC 6581 §9.1, RFC 5040 §6.5)", k, "opcode");
        }
        return null;
    }

    /** A receive WR of a QP's own receive queue from {@code sgl}, or (sgl null) from the single buffer given. */
    public static WorkRequestException recv(Target qp, ScatterGatherList sgl, MemoryRegion one, long oneOff, int oneLen,
            int k) {
        QueuePair q = qp.queuePair();
        if (qp.receivesFromSharedQueue()) {
            return new WorkRequestException("QP " + q.qpNum() + " takes its receive buffers from a shared receive queue: "
                    + "post them there", k, null);
        }
        if (q.state() == QpState.ERR) {
            return new WorkRequestException("QP " + q.qpNum() + " is in state ERR", k, null);
        }
        if (qp.receiveQueueFull(k)) {
            return new WorkRequestException("receive queue of QP " + q.qpNum() + " is full (" + q.caps().maxRecvWr()
                    + " WRs, maxRecvWr)", k, null);
        }
        return receiveBuffers(qp, q.caps().maxRecvSge(), false, sgl, one, oneOff, oneLen, k);
    }

    /**
     * A receive WR of a shared receive queue (RFC 5041 §5.1 untagged buffers for several QPs):
     * open, a free slot, at most {@code maxSge} SGEs each a writable region of the queue's domain.
     */
    public static WorkRequestException sharedRecv(Regions srq, boolean closed, boolean full, int capacity, int maxSge,
            ScatterGatherList sgl, MemoryRegion one, long oneOff, int oneLen, int k) {
        if (closed) {
            return new WorkRequestException("shared receive queue is closed", k, null);
        }
        if (full) {
            return new WorkRequestException("shared receive queue full (" + capacity + " WRs, max_wr)", k, null);
        }
        return receiveBuffers(srq, maxSge, true, sgl, one, oneOff, oneLen, k);
    }

    /** The buffers of one receive WR: their count, each SGE as a sink, the total length. */
    private static WorkRequestException receiveBuffers(Regions regions, int maxSge, boolean shared,
            ScatterGatherList sgl, MemoryRegion one, long oneOff, int oneLen, int k) {
        int n = sgl != null ? sgl.count() : (one == null && oneLen == 0 ? 0 : 1);
        if (n > maxSge) {
            return new WorkRequestException("num_sge " + n + " exceeds the " + (shared ? "SRQ's max_sge " : "QP's maxRecvSge ")
                    + maxSge, k, "num_sge");
        }
        long total = 0;
        for (int j = 0; j < n; j++) {
            MemoryRegion r = sgl != null ? sgl.region(j) : one;
            long off = sgl != null ? sgl.offset(j) : oneOff;
            int len = sgl != null ? sgl.length(j) : oneLen;
            WorkRequestException e = sge(regions, r, off, len, true, k, j);
            if (e != null) {
                return e;
            }
            total += len;
        }
        if (total > Integer.MAX_VALUE) {
            return tooLong(total, k);
        }
        return null;
    }

    private static WorkRequestException tooLong(long total, int k) {
        return new WorkRequestException("length " + total + " exceeds the 2^31-1 bytes of one message", k, "length");
    }

    /**
     * One SGE ({@code j}-th of WR {@code k}): a usable region, the bytes inside it, LOCAL_WRITE
     * when written into ({@code sink}: a receive buffer or an RDMA Read sink).
     */
    public static WorkRequestException sge(Regions regions, MemoryRegion region, long off, int len, boolean sink, int k,
            int j) {
        if (len < 0) {
            return refuse(k, j, ".length", ".length " + len + " is negative");
        }
        if (region == null) {
            return len == 0 ? null : refuse(k, j, ".lkey", ": no region for " + len + " bytes");
        }
        int v = regions.verdict(region);
        switch (v) {
            case WRITABLE:
            case READ_ONLY:
                break;
            case OTHER_PROVIDER:
                return refuse(k, j, ".lkey", ": not a region of this provider");
            case OTHER_DOMAIN:
                return refuse(k, j, ".lkey", ": region of another protection domain (RFC 5041 §8.2)");
            case DEREGISTERED:
                return refuse(k, j, ".lkey", ": region 0x" + Integer.toHexString(region.lkey()) + " is deregistered");
            default:
                throw new IllegalStateException("region verdict " + v);
        }
        if (off < 0 || off > region.length() - len) {
            return refuse(k, j, ".addr", ": [" + off + ", +" + len + ") outside the region of " + region.length()
                    + " bytes");
        }
        if (sink && len > 0 && v != WRITABLE) {
            return refuse(k, j, ".lkey", ": a receive buffer or RDMA Read sink needs LOCAL_WRITE (RFC 5040 §6.5)");
        }
        return null;
    }

    /** Refusal path only: the field name is built here. */
    private static WorkRequestException refuse(int k, int j, String part, String why) {
        String f = "sg_list[" + j + "]";
        return new WorkRequestException(f + why, k, f + part);
    }
}
