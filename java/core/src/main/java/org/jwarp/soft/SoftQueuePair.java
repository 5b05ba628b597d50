package org.jwarp.soft;

import java.util.concurrent.atomic.AtomicInteger;

import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.QueuePair;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.SendOpcode;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkRequestException;

/**
 * A queue pair of the embedded provider: the send and receive queues of one RDMAP stream
 * (RFC 5040 §5, §8 "Work Queues"). Application threads post into fixed rings of preallocated
 * slots under a short lock and wake the reactor; the reactor takes WRs from the rings, hands them
 * to the wire engine, and completes them in posting order (ibv RC ordering). Nothing is allocated
 * per work request.
 *
 * <p>Local checks at post time (local errors, RFC 5040 §7): the QP must be in RTS (posts made
 * while the responder waits for the RTR are queued, RFC 6581 §9.2), the local range must lie in
 * the region, the region must grant LOCAL_WRITE for a Read sink or a receive, and an RDMA Read
 * beyond the negotiated ORD (RFC 6581 §9.1, RFC 5040 §6.5) is refused.
 */
public final class SoftQueuePair implements QueuePair {
    private static final AtomicInteger NEXT_QPN = new AtomicInteger(1);

    /** Send slot states. */
    static final byte FREE = 0;
    static final byte POSTED = 1;
    static final byte ISSUED = 2;
    static final byte DONE = 3;

    private final int qpNum = NEXT_QPN.getAndIncrement();
    private final QueuePairConfig config;
    private final SoftProtectionDomain pd;
    private final SoftCompletionQueue sendCq;
    private final SoftCompletionQueue recvCq;
    final Object lock = new Object();
    private volatile QpState state = QpState.INIT;
    private volatile SoftStream stream;
    private int ord;

    // Send queue: [sqDone, sqIssued) issued, [sqIssued, sqPosted) waiting.
    final long[] sWrId;
    final SendOpcode[] sOp;
    final SoftMemoryRegion[] sMr;
    final int[] sOff;
    final int[] sLen;
    final long[] sRaddr;
    final int[] sRkey;
    final int[] sInv;
    final boolean[] sSignaled;
    final boolean[] sSolicited;
    final byte[] sState;
    final WcStatus[] sStatus;
    long sqPosted;
    long sqIssued;
    long sqDone;
    int readsOutstanding;

    // Receive queue: [rqDone, rqIssued) handed to DDP, [rqIssued, rqPosted) waiting.
    final long[] rWrId;
    final SoftMemoryRegion[] rMr;
    final int[] rOff;
    final int[] rLen;
    long rqPosted;
    long rqIssued;
    long rqDone;

    SoftQueuePair(QueuePairConfig config) {
        if (!(config.pd() instanceof SoftProtectionDomain p)) {
            throw new IllegalArgumentException("pd: not a soft-provider protection domain");
        }
        if (!(config.sendCq() instanceof SoftCompletionQueue s) || !(config.recvCq() instanceof SoftCompletionQueue r)) {
            throw new IllegalArgumentException("sendCq/recvCq: not soft-provider completion queues");
        }
        if (config.maxSendWr() > SoftProvider.MAX_QP_WR || config.maxRecvWr() > SoftProvider.MAX_QP_WR) {
            throw new IllegalArgumentException("queue depth exceeds maxQpWr " + SoftProvider.MAX_QP_WR);
        }
        this.config = config;
        this.pd = p;
        this.sendCq = s;
        this.recvCq = r;
        int n = config.maxSendWr();
        sWrId = new long[n];
        sOp = new SendOpcode[n];
        sMr = new SoftMemoryRegion[n];
        sOff = new int[n];
        sLen = new int[n];
        sRaddr = new long[n];
        sRkey = new int[n];
        sInv = new int[n];
        sSignaled = new boolean[n];
        sSolicited = new boolean[n];
        sState = new byte[n];
        sStatus = new WcStatus[n];
        int m = config.maxRecvWr();
        rWrId = new long[m];
        rMr = new SoftMemoryRegion[m];
        rOff = new int[m];
        rLen = new int[m];
    }

    /** Runs the configuration's hook (posting receives before any peer message can arrive). */
    void runBeforeConnect() throws WorkRequestException {
        if (config.beforeConnect() != null) {
            try {
                config.beforeConnect().prepare(this);
            } catch (WorkRequestException e) {
                throw e;
            } catch (RdmaException | RuntimeException e) {
                throw new WorkRequestException("beforeConnect hook failed: " + e);
            }
        }
    }

    QueuePairConfig config() {
        return config;
    }

    SoftProtectionDomain pd() {
        return pd;
    }

    SoftCompletionQueue sendCq() {
        return sendCq;
    }

    SoftCompletionQueue recvCq() {
        return recvCq;
    }

    int sqSize() {
        return sWrId.length;
    }

    int rqSize() {
        return rWrId.length;
    }

    /** Attaches the stream and the negotiated ORD; the QP moves to RTS (RFC 5040 §6.1 stream initialization). */
    void attach(SoftStream s, int negotiatedOrd) {
        synchronized (lock) {
            stream = s;
            ord = negotiatedOrd;
            if (state == QpState.INIT) {
                state = QpState.RTS;
            }
        }
        sendCq.addStream(s);
        if (recvCq != sendCq) {
            recvCq.addStream(s);
        }
    }

    /** The stream closed: its CQs no longer poll it. */
    void detach(SoftStream s) {
        sendCq.removeStream(s);
        if (recvCq != sendCq) {
            recvCq.removeStream(s);
        }
    }

    /** Moves to ERR; later posts are refused. Returns false if it already was in ERR. */
    boolean toError() {
        synchronized (lock) {
            if (state == QpState.ERR) {
                return false;
            }
            state = QpState.ERR;
            return true;
        }
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
    public void postSend(SendRequest wr) throws WorkRequestException {
        SendOpcode op = wr.opcode;
        if (op == null) {
            throw new WorkRequestException("opcode: null");
        }
        int len = wr.length;
        SoftMemoryRegion mr = null;
        if (len < 0) {
            throw new WorkRequestException("length: " + len + " is negative");
        }
        if (len > 0) {
            if (!(wr.local instanceof SoftMemoryRegion m) || m.pd() != pd) {
                throw new WorkRequestException("local: region missing or not of this QP's protection domain (RFC 5041 §8.2)");
            }
            mr = m;
            checkRange(mr, wr.localOffset, len);
            if (op == SendOpcode.RDMA_READ && !mr.localWrite()) {
                throw new WorkRequestException("local: an RDMA Read sink needs LOCAL_WRITE (RFC 5040 §6.5)");
            }
        }
        SoftStream s;
        synchronized (lock) {
            if (state != QpState.RTS) {
                throw new WorkRequestException("QP " + qpNum + " is in state " + state + ", not RTS");
            }
            if (sqPosted - sqDone == sWrId.length) {
                throw new WorkRequestException("send queue full (" + sWrId.length + " WRs)");
            }
            if (op == SendOpcode.RDMA_READ) {
                if (readsOutstanding >= ord) {
                    throw new WorkRequestException("RDMA Read refused: " + readsOutstanding
                            + " Reads outstanding reach the negotiated ORD " + ord + " (RFC 6581 §9.1, RFC 5040 §6.5)");
                }
                readsOutstanding++;
            }
            int i = (int) (sqPosted % sWrId.length);
            sWrId[i] = wr.wrId;
            sOp[i] = op;
            sMr[i] = mr;
            sOff[i] = wr.localOffset;
            sLen[i] = len;
            sRaddr[i] = wr.remoteAddress;
            sRkey[i] = wr.rkey;
            sInv[i] = wr.invalidateRkey;
            sSignaled[i] = wr.signaled;
            sSolicited[i] = wr.solicited;
            sState[i] = POSTED;
            sStatus[i] = WcStatus.SUCCESS;
            sqPosted++;
            s = stream;
        }
        if (s != null) {
            s.kick();
        }
    }

    @Override
    public void postRecv(long wrId, MemoryRegion region, int offset, int length) throws WorkRequestException {
        if (length < 0) {
            throw new WorkRequestException("length: " + length + " is negative");
        }
        SoftMemoryRegion mr = null;
        if (region != null) {
            if (!(region instanceof SoftMemoryRegion m) || m.pd() != pd) {
                throw new WorkRequestException("region: not of this QP's protection domain (RFC 5041 §8.2)");
            }
            mr = m;
            checkRange(mr, offset, length);
            if (length > 0 && !mr.localWrite()) {
                throw new WorkRequestException("region: a receive buffer needs LOCAL_WRITE");
            }
        } else if (length > 0) {
            throw new WorkRequestException("region: null with length " + length);
        }
        SoftStream s;
        synchronized (lock) {
            if (state == QpState.ERR) {
                throw new WorkRequestException("QP " + qpNum + " is in state ERR");
            }
            if (rqPosted - rqDone == rWrId.length) {
                throw new WorkRequestException("receive queue full (" + rWrId.length + " WRs)");
            }
            int i = (int) (rqPosted % rWrId.length);
            rWrId[i] = wrId;
            rMr[i] = mr;
            rOff[i] = offset;
            rLen[i] = length;
            rqPosted++;
            s = stream;
        }
        if (s != null) {
            s.kick();
        }
    }

    private static void checkRange(SoftMemoryRegion mr, int off, int len) throws WorkRequestException {
        if (!mr.isValid()) {
            throw new WorkRequestException("local: region 0x" + Integer.toHexString(mr.lkey()) + " is deregistered");
        }
        if (off < 0 || off > mr.length() - len) {
            throw new WorkRequestException("local: [" + off + ", +" + len + ") outside the region of " + mr.length()
                    + " bytes");
        }
    }

    // ---- reactor side: lock held by the caller where noted ----

    /** Marks the send slot done with {@code status} and emits every completion now in order. Lock held. */
    void finishSend(int slot, WcStatus status) {
        if (sOp[slot] == SendOpcode.RDMA_READ) {
            readsOutstanding--;
        }
        sState[slot] = DONE;
        sStatus[slot] = status;
        drainSendCompletions();
    }

    /** Lock held. */
    private void drainSendCompletions() {
        while (sqDone < sqIssued) {
            int i = (int) (sqDone % sWrId.length);
            if (sState[i] != DONE) {
                return;
            }
            WcStatus st = sStatus[i];
            if (sSignaled[i] || st != WcStatus.SUCCESS) {
                sendCq.complete(sWrId[i], st, wcOpcode(sOp[i]), st == WcStatus.SUCCESS ? sLen[i] : 0, qpNum, 0, 0,
                        false, false);
            }
            sState[i] = FREE;
            sMr[i] = null;
            sqDone++;
        }
    }

    /** Completes the oldest issued receive. Lock held. */
    void finishRecv(long seq, WcStatus status, int byteLength, boolean solicited, int invalidated, boolean withInv) {
        int i = (int) (seq % rWrId.length);
        recvCq.complete(rWrId[i], status, WcOpcode.RECV, byteLength, qpNum, 0, invalidated, withInv, solicited);
        rMr[i] = null;
        rqDone = seq + 1;
    }

    /**
     * Every WR not yet completed completes with WR_FLUSH_ERR, in order (RFC 5040 §6.2.2, ibv
     * flush semantics). Safe from any thread once the reactor no longer drives the stream.
     */
    void flush() {
        synchronized (lock) {
            state = QpState.ERR;
            for (long q = sqDone; q < sqPosted; q++) {
                int i = (int) (q % sWrId.length);
                if (sState[i] != DONE) {
                    if (sOp[i] == SendOpcode.RDMA_READ) {
                        readsOutstanding--;
                    }
                    sState[i] = DONE;
                    sStatus[i] = WcStatus.WR_FLUSH_ERR;
                }
            }
            sqIssued = sqPosted;
            drainSendCompletions();
            for (long q = rqDone; q < rqPosted; q++) {
                finishRecv(q, WcStatus.WR_FLUSH_ERR, 0, false, 0, false);
            }
            rqIssued = rqPosted;
        }
    }

    static WcOpcode wcOpcode(SendOpcode op) {
        return switch (op) {
            case SEND, SEND_WITH_INVALIDATE -> WcOpcode.SEND;
            case RDMA_WRITE -> WcOpcode.RDMA_WRITE;
            case RDMA_READ -> WcOpcode.RDMA_READ;
        };
    }

    @Override
    public String toString() {
        SoftStream st = stream;
        return "SoftQueuePair[qp=" + qpNum + ", " + state + ", sq posted/issued/done=" + sqPosted + "/" + sqIssued + "/"
                + sqDone + ", reads=" + readsOutstanding + ", rq posted/issued/done=" + rqPosted + "/" + rqIssued + "/"
                + rqDone + (st != null ? ", " + st.debugState() : "") + "]";
    }
}
