package org.jwarp.soft;

import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.QueuePair.QpState;
import org.jwarp.verbs.ScatterGatherList;
import org.jwarp.verbs.SendOpcode;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WorkRequestException;

/**
 * The local checks a work request passes before it enters a {@link SoftQueuePair}'s ring (local
 * errors, RFC 5040 §7; ibverbs' bad_wr): the QP state, a free slot, the SGE count, each SGE
 * inside a live region of the QP's protection domain (RFC 5041 §8.2) with LOCAL_WRITE where it
 * is written into (RFC 5040 §6.5), the inline size, and no RDMA Read when the negotiated ORD is 0
 * (RFC 6581 §9.1; Reads beyond a non-zero ORD wait in the send queue). Each returns the refusal, or null; the QP lock is held by the caller.
 */
final class WorkRequestChecks {
    private WorkRequestChecks() {
    }

    /** A send-queue WR, {@code k}-th of its chain. */
    static WorkRequestException send(SoftQueuePair qp, SendRequest wr, int k) {
        SendOpcode op = wr.opcode;
        if (op == null) {
            return new WorkRequestException("opcode: null", k, "opcode");
        }
        if (qp.state != QpState.RTS) {
            return new WorkRequestException("QP " + qp.qpNum + " is in qp.state " + qp.state + ", not RTS", k, null);
        }
        if (qp.sq.posted - qp.sq.freed == qp.sq.size()) {
            return new WorkRequestException("send queue full: " + qp.sq.size() + " slots held (maxSendWr; an "
                    + "unsignalled WR holds its slot until a later signalled one completes)", k, null);
        }
        boolean read = op == SendOpcode.RDMA_READ;
        int n = wr.sgl.count();
        int limit = read ? SoftProvider.MAX_SGE_RD : qp.sq.maxSge;
        if (n > limit) {
            return new WorkRequestException("num_sge " + n + " exceeds the QP's " + (read ? "maxSgeRd " : "maxSendSge ")
                    + limit, k, "num_sge");
        }
        long total = 0;
        for (int j = 0; j < n; j++) {
            WorkRequestException e = sge(qp.pd, wr.sgl.region(j), wr.sgl.offset(j), wr.sgl.length(j), read, k, j);
            if (e != null) {
                return e;
            }
            total += wr.sgl.length(j);
        }
        if (total > Integer.MAX_VALUE) {
            return new WorkRequestException("length " + total + " exceeds the 2^31-1 bytes of one message", k, "length");
        }
        if (wr.inline) {
            if (read) {
                return new WorkRequestException("inline: an RDMA Read cannot be inline", k, "inline");
            }
            if (total > qp.sq.maxInline) {
                return new WorkRequestException("inline: " + total + " bytes exceed the QP's maxInlineData " + qp.sq.maxInline,
                        k, "inline");
            }
        }
        if (read && qp.sq.ord == 0) {
            // Reads beyond a non-zero ORD wait in the send queue (SoftSendQueue#issue); at ORD 0 none ever could go
            return new WorkRequestException("RDMA Read refused: the negotiated ORD is 0, no Read may be issued "
                    + "(RFC 6581 §9.1, RFC 5040 §6.5)", k, "opcode");
        }
        return null;
    }

    /** A receive WR from {@code sgl}, or (sgl null) from the single buffer given. */
    static WorkRequestException recv(SoftQueuePair qp, ScatterGatherList sgl, MemoryRegion one, long oneOff,
            int oneLen, int k) {
        if (qp.srq != null) {
            return new WorkRequestException("QP " + qp.qpNum + " takes its receive buffers from a shared receive queue: "
                    + "post them there", k, null);
        }
        if (qp.state == QpState.ERR) {
            return new WorkRequestException("QP " + qp.qpNum + " is in qp.state ERR", k, null);
        }
        if (qp.rqPosted - qp.rqDone == qp.rWrId.length) {
            return new WorkRequestException("receive queue full (" + qp.rWrId.length + " WRs, maxRecvWr)", k, null);
        }
        int n = sgl != null ? sgl.count() : (one == null && oneLen == 0 ? 0 : 1);
        if (n > qp.maxRecvSge) {
            return new WorkRequestException("num_sge " + n + " exceeds the QP's qp.maxRecvSge " + qp.maxRecvSge, k, "num_sge");
        }
        long total = 0;
        for (int j = 0; j < n; j++) {
            MemoryRegion r = sgl != null ? sgl.region(j) : one;
            long off = sgl != null ? sgl.offset(j) : oneOff;
            int len = sgl != null ? sgl.length(j) : oneLen;
            WorkRequestException e = sge(qp.pd, r, off, len, true, k, j);
            if (e != null) {
                return e;
            }
            total += len;
        }
        if (total > Integer.MAX_VALUE) {
            return new WorkRequestException("length " + total + " exceeds the 2^31-1 bytes of one message", k, "length");
        }
        return null;
    }

    /** One SGE: a live region of {@code pd}, inside it, LOCAL_WRITE when written into. */
    static WorkRequestException sge(SoftProtectionDomain pd, MemoryRegion region, long off, int len, boolean sink, int k, int j) {
        if (len < 0) {
            return new WorkRequestException("sg_list[" + j + "].length " + len + " is negative", k,
                    "sg_list[" + j + "].length");
        }
        if (region == null) {
            return len == 0 ? null : new WorkRequestException("sg_list[" + j + "]: no region for " + len + " bytes", k,
                    "sg_list[" + j + "].lkey");
        }
        if (!(region instanceof SoftMemoryRegion m) || m.pd() != pd) {
            return new WorkRequestException("sg_list[" + j + "]: region not of this QP's protection domain (RFC 5041 §8.2)",
                    k, "sg_list[" + j + "].lkey");
        }
        if (!m.isValid()) {
            return new WorkRequestException("sg_list[" + j + "]: region 0x" + Integer.toHexString(m.lkey())
                    + " is deregistered", k, "sg_list[" + j + "].lkey");
        }
        if (off < 0 || off > (long) m.length() - len) {
            return new WorkRequestException("sg_list[" + j + "]: [" + off + ", +" + len + ") outside the region of "
                    + m.length() + " bytes", k, "sg_list[" + j + "].addr");
        }
        if (sink && len > 0 && !m.localWrite()) {
            return new WorkRequestException("sg_list[" + j + "]: a receive buffer or RDMA Read sink needs LOCAL_WRITE "
                    + "(RFC 5040 §6.5)", k, "sg_list[" + j + "].lkey");
        }
        return null;
    }
}
