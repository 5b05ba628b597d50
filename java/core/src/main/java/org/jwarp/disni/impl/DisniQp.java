package org.jwarp.disni.impl;

import com.ibm.disni.util.MemoryUtils;
import com.ibm.disni.verbs.IbvQP;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.jwarp.disni.natives.JwarpNative;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.QueuePair;
import org.jwarp.verbs.SendOpcode;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WorkCompletion;
import org.jwarp.verbs.WorkRequestException;

/**
 * A connected RC queue pair created by rdma_cm through DiSNI. Work requests are written as
 * {@code struct ibv_send_wr}/{@code ibv_recv_wr} with one SGE into preallocated direct buffers
 * (offsets probed from rdma-core) and posted without allocation. RDMA Reads beyond the
 * negotiated ORD are refused locally (RFC 6581 section 9.1; RFC 5040 section 6.5 Read Request
 * queue depth), as are posts on a QP that is not in RTS. Outstanding WRs of both queues are kept
 * in {@link WrRing}s: the device sees a ring token as wr_id and completions retire by ring
 * position, so repeated caller wrIds and unsignalled WRs never leak a slot.
 */
final class DisniQp implements QueuePair {
    static final int SEND_WR_SIZE = JwarpNative.probe(JwarpNative.PROBE_SEND_WR_SIZE);
    static final int RECV_WR_SIZE = JwarpNative.probe(JwarpNative.PROBE_RECV_WR_SIZE);
    static final int SGE_SIZE = JwarpNative.probe(JwarpNative.PROBE_SGE_SIZE);
    static final int WR_NEXT = JwarpNative.probe(JwarpNative.PROBE_SEND_WR_NEXT);
    static final int WR_SG_LIST = JwarpNative.probe(JwarpNative.PROBE_SEND_WR_SG_LIST);
    static final int WR_NUM_SGE = JwarpNative.probe(JwarpNative.PROBE_SEND_WR_NUM_SGE);
    static final int WR_OPCODE = JwarpNative.probe(JwarpNative.PROBE_SEND_WR_OPCODE);
    static final int WR_FLAGS = JwarpNative.probe(JwarpNative.PROBE_SEND_WR_FLAGS);
    static final int WR_IMM = JwarpNative.probe(JwarpNative.PROBE_SEND_WR_IMM);
    static final int WR_REMOTE_ADDR = JwarpNative.probe(JwarpNative.PROBE_SEND_WR_REMOTE_ADDR);
    static final int WR_RKEY = JwarpNative.probe(JwarpNative.PROBE_SEND_WR_RKEY);
    /** ibv_recv_wr shares the wr_id/next/sg_list/num_sge prefix of ibv_send_wr. */
    static final int SGE_ADDR = 0;
    static final int SGE_LENGTH = 8;
    static final int SGE_LKEY = 12;
    static final int IBV_SEND_SIGNALED = 1 << 1;
    static final int IBV_SEND_SOLICITED = 1 << 2;

    /** Generations of the WR tokens: QP numbers are reused, tokens of a closed QP must not match its successor. */
    private static final java.util.concurrent.atomic.AtomicInteger GENERATIONS = new java.util.concurrent.atomic.AtomicInteger();
    private final IbvQP qp;
    private final long qpPtr;
    private final int qpNum;
    private final ByteBuffer sendWr;
    private final long sendWrAddr;
    private final ByteBuffer recvWr;
    private final long recvWrAddr;
    /** Posted, not yet retired send WRs, retired by ring position (the SQ completes in order). */
    private final WrRing sq;
    /** Posted, not yet completed receive WRs (the RQ completes in order). */
    private final WrRing rq;
    private volatile int ord;
    private volatile QpState state = QpState.INIT;

    DisniQp(IbvQP qp, int maxSendWr, int maxRecvWr) throws java.io.IOException {
        this.qp = qp;
        this.qpPtr = CmDispatcher.ptr(qp);
        this.qpNum = qp.getQp_num();
        sendWr = ByteBuffer.allocateDirect(SEND_WR_SIZE + SGE_SIZE).order(ByteOrder.nativeOrder());
        sendWrAddr = MemoryUtils.getAddress(sendWr);
        recvWr = ByteBuffer.allocateDirect(RECV_WR_SIZE + SGE_SIZE).order(ByteOrder.nativeOrder());
        recvWrAddr = MemoryUtils.getAddress(recvWr);
        sendWr.putLong(WR_NEXT, 0L).putLong(WR_SG_LIST, sendWrAddr + SEND_WR_SIZE);
        recvWr.putLong(WR_NEXT, 0L).putLong(WR_SG_LIST, recvWrAddr + RECV_WR_SIZE);
        int gen = GENERATIONS.incrementAndGet();
        sq = new WrRing(WrRing.SEND_TAG, maxSendWr, gen);
        rq = new WrRing(WrRing.RECV_TAG, maxRecvWr, gen);
    }

    void established(int negotiatedOrd) {
        this.ord = negotiatedOrd;
        this.state = QpState.RTS;
    }

    void failed() {
        this.state = QpState.ERR;
    }

    int ord() {
        return ord;
    }

    @Override
    public int qpNum() {
        return qpNum;
    }

    @Override
    public QpState state() {
        return state;
    }

    @Override
    public synchronized void postSend(SendRequest wr) throws WorkRequestException {
        if (state != QpState.RTS) {
            throw new WorkRequestException("postSend: QP " + qpNum + " is " + state + ", not RTS");
        }
        if (sq.full()) {
            throw new WorkRequestException("postSend: send queue of QP " + qpNum + " is full ("
                    + sq.capacity() + " outstanding)");
        }
        boolean isRead = wr.opcode == SendOpcode.RDMA_READ;
        if (isRead && sq.readsOutstanding() >= ord) {
            throw new WorkRequestException("postSend: RDMA Read refused, " + sq.readsOutstanding()
                    + " Reads outstanding and the negotiated ORD is " + ord + " (RFC 6581 section 9.1)");
        }
        int numSge = 0;
        if (wr.length > 0) {
            MemoryRegion mr = wr.local;
            if (mr == null) {
                throw new WorkRequestException("postSend: local region missing for " + wr.length + " bytes");
            }
            if (wr.localOffset < 0 || (long) wr.localOffset + wr.length > mr.length()) {
                throw new WorkRequestException("postSend: [" + wr.localOffset + ", +" + wr.length
                        + ") outside the local region of " + mr.length() + " bytes");
            }
            sendWr.putLong(SEND_WR_SIZE + SGE_ADDR, mr.address() + wr.localOffset);
            sendWr.putInt(SEND_WR_SIZE + SGE_LENGTH, wr.length);
            sendWr.putInt(SEND_WR_SIZE + SGE_LKEY, mr.lkey());
            numSge = 1;
        } else if (wr.length < 0) {
            throw new WorkRequestException("postSend: negative length " + wr.length);
        }
        sendWr.putLong(0, sq.nextToken()); // the caller's wrId stays in the ring slot
        sendWr.putInt(WR_NUM_SGE, numSge);
        sendWr.putInt(WR_OPCODE, wr.opcode.ibvCode);
        sendWr.putInt(WR_FLAGS, (wr.signaled ? IBV_SEND_SIGNALED : 0) | (wr.solicited ? IBV_SEND_SOLICITED : 0));
        sendWr.putInt(WR_IMM, wr.opcode == SendOpcode.SEND_WITH_INVALIDATE ? wr.invalidateRkey : 0);
        sendWr.putLong(WR_REMOTE_ADDR, wr.remoteAddress);
        sendWr.putInt(WR_RKEY, wr.rkey);
        int rc = JwarpNative.postSend(qpPtr, sendWrAddr);
        if (rc != 0) {
            throw new WorkRequestException("postSend: ibv_post_send on QP " + qpNum + " failed with errno " + rc);
        }
        sq.posted(wr.wrId, wcOpcodeOf(wr.opcode));
    }

    private static WcOpcode wcOpcodeOf(SendOpcode op) {
        switch (op) {
            case RDMA_WRITE: return WcOpcode.RDMA_WRITE;
            case RDMA_READ: return WcOpcode.RDMA_READ;
            default: return WcOpcode.SEND;
        }
    }

    /**
     * A successful completion of this QP: its device wr_id (a ring token) becomes the caller's
     * wrId. A send completion retires its WR and every older unsignalled one (RFC 5040 §5.5).
     * Returns false for a token this QP does not know (the wrId is then left as the device's).
     */
    /** Whether WRs of either queue still await a completion (flushed ones arrive after close). */
    synchronized boolean hasOutstanding() {
        return sq.outstanding() > 0 || rq.outstanding() > 0;
    }

    synchronized boolean completed(WorkCompletion wc, boolean send) {
        WrRing ring = send ? sq : rq;
        if (!ring.retireThrough(wc.wrId)) {
            return false;
        }
        wc.wrId = ring.retiredWrId();
        return true;
    }

    /**
     * An error completion (only wr_id, status, qp_num and vendor_err are defined): the token's
     * tag says which queue it came from; the caller's wrId and the posted opcode (RECV for a
     * receive) are filled in. Returns false for a token this QP does not know.
     */
    synchronized boolean completedOnError(WorkCompletion wc) {
        WrRing ring = sq.owns(wc.wrId) ? sq : rq;
        if (!ring.retireThrough(wc.wrId)) {
            return false;
        }
        wc.wrId = ring.retiredWrId();
        wc.opcode = ring.retiredOp();
        return true;
    }

    @Override
    public synchronized void postRecv(long wrId, MemoryRegion mr, int offset, int length) throws WorkRequestException {
        if (state == QpState.ERR) {
            throw new WorkRequestException("postRecv: QP " + qpNum + " is in ERR");
        }
        if (mr == null || offset < 0 || length < 0 || (long) offset + length > mr.length()) {
            throw new WorkRequestException("postRecv: [" + offset + ", +" + length + ") outside the region");
        }
        if (rq.full()) {
            throw new WorkRequestException("postRecv: receive queue of QP " + qpNum + " is full (" + rq.capacity()
                    + " outstanding)");
        }
        recvWr.putLong(0, rq.nextToken()); // the caller's wrId stays in the ring slot
        recvWr.putInt(WR_NUM_SGE, length > 0 ? 1 : 0);
        recvWr.putLong(RECV_WR_SIZE + SGE_ADDR, mr.address() + offset);
        recvWr.putInt(RECV_WR_SIZE + SGE_LENGTH, length);
        recvWr.putInt(RECV_WR_SIZE + SGE_LKEY, mr.lkey());
        int rc = JwarpNative.postRecv(qpPtr, recvWrAddr);
        if (rc != 0) {
            throw new WorkRequestException("postRecv: ibv_post_recv on QP " + qpNum + " failed with errno " + rc);
        }
        rq.posted(wrId, WcOpcode.RECV);
    }

    IbvQP ibvQp() {
        return qp;
    }
}
