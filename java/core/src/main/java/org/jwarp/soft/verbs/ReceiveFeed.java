package org.jwarp.soft.verbs;

import java.nio.ByteBuffer;
import java.util.Arrays;

import org.jwarp.memory.StagRegion;
import org.jwarp.rdmap.RdmapEndpoint;
import org.jwarp.rdmap.RdmapOpcode;
import org.jwarp.verbs.WcStatus;

/**
 * The receive side of one stream's FPDU mode ({@code SoftDataPath}): the QP's posted receives
 * handed to the wire engine as the untagged buffers of queue 0 (RFC 5041 §5.1.2, RFC 5040 §5.3
 * Send), in posting order, and their completions back to the QP. No allocation per receive: a
 * multi-piece receive goes through a scratch scatter list the engine copies.
 */
public final class ReceiveFeed {
    static final ByteBuffer EMPTY = ByteBuffer.allocateDirect(0);
    /** Internal receive buffer consumed by a Send RTR (RFC 6581 §9.2). */
    private static final long RTR_RECV_ID = Long.MIN_VALUE + 1;

    private final SoftQueuePair qp;
    private final RdmapEndpoint ep;
    /** Scratch scatter list handed to the engine for a multi-piece receive (it copies the entries). */
    private final ByteBuffer[] sgBuf;
    private final StagRegion[] sgRegion;
    private final int[] sgOff;
    private final int[] sgLen;

    public ReceiveFeed(SoftQueuePair qp, RdmapEndpoint ep, int maxSge) {
        this.qp = qp;
        this.ep = ep;
        sgBuf = new ByteBuffer[maxSge];
        sgRegion = new StagRegion[maxSge];
        sgOff = new int[maxSge];
        sgLen = new int[maxSge];
    }

    /** The responder's zero-length buffer a Send RTR consumes (it takes MSN 1). */
    public void postRtrBuffer() {
        ep.postReceive(RTR_RECV_ID, EMPTY, 0, 0);
    }

    /** Hands the QP's posted receives to the engine. */
    public void feed() {
        synchronized (qp.lock) {
            issue();
        }
    }

    /**
     * An untagged Send begins with no buffer in the engine: a QP on a shared receive queue takes
     * the next shared buffer now (in arrival order across the SRQ's QPs); without one the engine
     * reports RFC 5041 §7.2 error 2/2 as before.
     */
    public void pullShared() {
        synchronized (qp.lock) {
            if (qp.pullShared()) {
                issue();
            }
        }
    }

    /** Hands the QP's posted receives to the engine. QP lock held. */
    private void issue() {
        while (qp.rqIssued < qp.rqPosted) {
            int i = (int) (qp.rqIssued % qp.rqSize());
            int n = qp.rSgCount[i];
            int base = i * qp.maxRecvSge;
            if (n == 0) {
                ep.postReceive(qp.rqIssued, EMPTY, 0, 0);
            } else if (n == 1) {
                SoftMemoryRegion mr = qp.rSgMr[base];
                ep.postReceive(qp.rqIssued, mr == null ? null : mr.engineRegion(), mr == null ? EMPTY : mr.raw(),
                        mr == null ? 0 : qp.rSgOff[base], qp.rSgLen[base]);
            } else {
                for (int j = 0; j < n; j++) {
                    SoftMemoryRegion mr = qp.rSgMr[base + j];
                    sgRegion[j] = mr == null ? null : mr.engineRegion();
                    sgBuf[j] = mr == null ? EMPTY : mr.raw();
                    sgOff[j] = mr == null ? 0 : qp.rSgOff[base + j];
                    sgLen[j] = qp.rSgLen[base + j];
                }
                ep.postReceive(qp.rqIssued, sgRegion, sgBuf, sgOff, sgLen, n);
                Arrays.fill(sgBuf, 0, n, null);
                Arrays.fill(sgRegion, 0, n, null);
            }
            qp.rqIssued++;
        }
    }

    /** A receive completed (the RTR's internal buffer completes nothing). */
    public void completed(long wrId, int opcode, int byteLength, int invalidatedStag) {
        if (wrId == RTR_RECV_ID) {
            return;
        }
        synchronized (qp.lock) {
            qp.finishRecv(wrId, WcStatus.SUCCESS, byteLength, RdmapOpcode.isSolicited(opcode), invalidatedStag,
                    invalidatedStag != 0);
        }
    }

    /**
     * RFC 5041 §8.3.1 (6): a Send arrived for a receive whose region was closed after it was posted;
     * nothing was placed. It completes with LOC_PROT_ERR (what siw reports for a receive whose
     * memory fails its check) and the stream terminates (DDP 0/0), flushing the rest.
     */
    public void revoked(long wrId) {
        synchronized (qp.lock) {
            qp.finishRecv(wrId, WcStatus.LOC_PROT_ERR, 0, false, 0, false);
        }
    }

    /**
     * RFC 5041 §7.1 check 2.2: the Send arriving for this receive is longer than its buffer. It
     * completes with LOC_LEN_ERR (as siw and ibverbs report a receive too short) and the stream
     * terminates (TERM DDP 2/5, RFC 5041 §7.2), flushing the rest. The RTR's internal buffer
     * completes nothing.
     */
    public void tooShort(long wrId) {
        if (wrId == RTR_RECV_ID) {
            return;
        }
        synchronized (qp.lock) {
            qp.finishRecv(wrId, WcStatus.LOC_LEN_ERR, 0, false, 0, false);
        }
    }
}
