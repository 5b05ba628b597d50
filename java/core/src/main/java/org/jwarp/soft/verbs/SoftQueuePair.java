package org.jwarp.soft.verbs;

import java.util.concurrent.atomic.AtomicInteger;

import org.jwarp.provider.WorkRequestChecks;
import org.jwarp.rdmap.SendRing;
import org.jwarp.soft.tx.TxGather;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.QueuePair;
import org.jwarp.verbs.QueuePairCaps;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.RecvRequest;
import org.jwarp.verbs.ScatterGatherList;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.SendOpcode;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkRequestException;

/**
 * A queue pair of the embedded provider: the send and receive queues of one RDMAP stream
 * (RFC 5040 §5, §8 "Work Queues"). Application threads post chains of WRs into fixed rings of
 * preallocated slots under a short lock and wake the reactor once per chain; the reactor takes
 * WRs from the rings, hands them to the wire engine (which gathers a Send or Write from its SGEs
 * while segmenting, and scatters a received Send over the receive's SGEs while placing, RFC 5041
 * §5.3), and completes them in posting order (ibv RC ordering). Nothing is allocated per work
 * request; an inline WR's payload is copied into its slot's preallocated inline buffer at post time.
 *
 * <p>Local checks at post time (local errors, RFC 5040 §7), each WR of a chain just before it
 * enters the ring, so the WRs before a refused one stay posted: the QP must be in RTS (posts made
 * while the responder waits for the RTR are queued, RFC 6581 §9.2), at most maxSendSge /
 * maxRecvSge / maxSgeRd SGEs, each inside a live region of this PD, LOCAL_WRITE for a Read sink or
 * a receive, inline data within maxInlineData, a free slot (unsignalled WRs hold theirs until a
 * later signalled one completes), and no RDMA Read at all with an ORD of 0 (RFC 6581 §9.1,
 * RFC 5040 §6.5); Reads beyond a non-zero ORD wait in the send queue, and the WRs after them
 * wait behind them, until an outstanding Read completes (as siw's fenced send queue). A fenced WR is not handed to the engine while an earlier Read is outstanding.
 *
 * <p>Thread-safe: posts from any thread are serialized by the QP lock; the reactor takes the
 * same lock to move WRs into the engine and to complete them.
 */
public final class SoftQueuePair implements QueuePair {
    private static final AtomicInteger NEXT_QPN = new AtomicInteger(1);

    final int qpNum = NEXT_QPN.getAndIncrement();
    private final QueuePairConfig config;
    final SoftProtectionDomain pd;
    private final CompletionSink sendCq;
    private final CompletionSink recvCq;
    final Object lock = new Object();
    volatile QpState state = QpState.INIT;
    private volatile QpConnection stream;
    /** The send queue: its ring, its checks and the ORD count. */
    final SoftSendQueue sq;
    private long postCalls;

    // Receive queue: [rqDone, rqIssued) handed to DDP, [rqIssued, rqPosted) waiting.
    final long[] rWrId;
    final int maxRecvSge;
    final SoftMemoryRegion[] rSgMr;
    final int[] rSgOff;
    final int[] rSgLen;
    final int[] rSgCount;
    long rqPosted;
    long rqIssued;
    long rqDone;
    private final QueuePairCaps caps;
    /** Where receive buffers come from when not posted to this QP (null: its own receive queue). */
    final SoftSharedReceiveQueue srq;
    /** The application's object for this QP (ibverbs' qp_context), or null; on every completion. */
    final Object context;
    /** This QP as the shared post-time checks see it (RFC 5040 §7); read under the QP lock. */
    final WorkRequestChecks.Target checks = new Checks();

    public SoftQueuePair(QueuePairConfig config) throws RdmaException {
        if (!(config.pd() instanceof SoftProtectionDomain p)) {
            throw new IllegalArgumentException("pd: not a soft-provider protection domain");
        }
        if (!(config.sendCq() instanceof CompletionSink s) || !(config.recvCq() instanceof CompletionSink r)) {
            throw new IllegalArgumentException("sendCq/recvCq: not soft-provider completion queues");
        }
        if (config.maxSendWr() > SoftLimits.MAX_QP_WR || config.maxRecvWr() > SoftLimits.MAX_QP_WR) {
            throw new IllegalArgumentException("queue depth exceeds maxQpWr " + SoftLimits.MAX_QP_WR);
        }
        if (config.maxSendSge() > SoftLimits.MAX_SGE || config.maxRecvSge() > SoftLimits.MAX_SGE) {
            throw new IllegalArgumentException("SGEs per WR: send " + config.maxSendSge() + " / recv "
                    + config.maxRecvSge() + " exceed the device's maxSge " + SoftLimits.MAX_SGE);
        }
        if (config.maxInlineData() > SoftLimits.MAX_INLINE_DATA) {
            throw new IllegalArgumentException("maxInlineData " + config.maxInlineData() + " exceeds the device's "
                    + SoftLimits.MAX_INLINE_DATA);
        }
        if (config.srq() != null) {
            if (!(config.srq() instanceof SoftSharedReceiveQueue q)) {
                throw new IllegalArgumentException("srq: not a soft-provider shared receive queue");
            }
            if (q.pd() != p) {
                throw new RdmaException("srq: the shared receive queue belongs to another protection domain "
                        + "(RFC 5041 §8.2: a QP and its receive buffers share one PD)");
            }
        }
        this.srq = (SoftSharedReceiveQueue) config.srq();
        this.config = config;
        this.context = config.context();
        this.pd = p;
        this.sendCq = s;
        this.recvCq = r;
        int n = config.maxSendWr();
        sq = new SoftSendQueue(this, n, config.maxSendSge(), config.maxInlineData());
        int m = config.maxRecvWr();
        maxRecvSge = srq != null ? Math.max(config.maxRecvSge(), srq.maxSge()) : config.maxRecvSge();
        rWrId = new long[m];
        rSgMr = new SoftMemoryRegion[m * maxRecvSge];
        rSgOff = new int[m * maxRecvSge];
        rSgLen = new int[m * maxRecvSge];
        rSgCount = new int[m];
        caps = new QueuePairCaps(n, m, sq.maxSge, maxRecvSge, SoftLimits.MAX_SGE_RD, sq.maxInline);
    }

    /** Runs the configuration's hook (posting receives before any peer message can arrive). */
    public void runBeforeConnect() throws WorkRequestException {
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

    @Override
    public Object context() {
        return context;
    }

    public SoftProtectionDomain pd() {
        return pd;
    }

    public CompletionSink sendCq() {
        return sendCq;
    }

    public CompletionSink recvCq() {
        return recvCq;
    }

    /** SGEs per WR the engine must take, send or receive. */
    public int maxSge() {
        return Math.max(sq.maxSge, maxRecvSge);
    }

    /** The send queue as the engine's source of work requests to segment. */
    public SendRing sendRing() {
        return sq;
    }

    /** FPDU mode begins: the send queue's completions wait for the socket through {@code g}. */
    public void useGather(TxGather g) {
        synchronized (lock) {
            sq.gather = g;
        }
    }

    /** Hands the posted send WRs to the engine (RFC 5040 §5 ordering kept by the ring). */
    public void issueSends() {
        synchronized (lock) {
            sq.issue();
        }
    }

    /** The peer terminated: the oldest outstanding send WR is the one it refused. */
    public void finishOldestSend(WcStatus status) {
        synchronized (lock) {
            sq.finishOldest(status);
        }
    }

    /** Completes the send WRs whose bytes the socket has now accepted (after a write, I/O lock held). */
    public void completeAccepted(TxGather g) {
        sq.completeAccepted(g);
    }

    /** Send WRs completed so far (progress for the listener's idle check; cold path). */
    public long sendsDone() {
        synchronized (lock) {
            return sq.done;
        }
    }

    public int sqSize() {
        return sq.size();
    }

    public int rqSize() {
        return rWrId.length;
    }

    /** Attaches the stream and the negotiated ORD; the QP moves to RTS (RFC 5040 §6.1 stream initialization). */
    public void attach(QpConnection s, int negotiatedOrd) {
        synchronized (lock) {
            stream = s;
            sq.ord = negotiatedOrd;
            if (state == QpState.INIT) {
                state = QpState.RTS;
            }
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

    /** The soft accounting behind {@link WorkRequestChecks}: one WR enters the ring at a time. */
    private final class Checks implements WorkRequestChecks.Target {
        @Override
        public int verdict(MemoryRegion region) {
            return SoftMemoryRegion.verdict(pd, region);
        }

        @Override
        public QueuePair queuePair() {
            return SoftQueuePair.this;
        }

        @Override
        public boolean sendQueueFull(int k) {
            return sq.posted - sq.freed == sq.size();
        }

        @Override
        public boolean receiveQueueFull(int k) {
            return rqPosted - rqDone == rWrId.length;
        }

        @Override
        public boolean receivesFromSharedQueue() {
            return srq != null;
        }

        @Override
        public int ord() {
            return sq.ord;
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
    public QueuePairCaps caps() {
        return caps;
    }

    @Override
    public long postCalls() {
        synchronized (lock) {
            return postCalls;
        }
    }

    /**
     * Posts the chain under the QP lock, checking each WR just before it enters the ring: the
     * WRs before a refused one stay posted, nothing of it or after it enters (ibverbs' bad_wr).
     */
    @Override
    public void postSend(SendRequest first) throws WorkRequestException {
        WorkRequestException refused = null;
        int posted = 0;
        QpConnection s;
        synchronized (lock) {
            int k = 0;
            for (SendRequest wr = first; wr != null; wr = wr.next, k++) {
                refused = sq.enqueue(wr, k);
                if (refused != null) {
                    break;
                }
                posted++;
            }
            if (posted > 0) {
                postCalls++;
            }
            s = stream;
        }
        if (posted > 0 && s != null) {
            s.kick();
        }
        if (refused != null) {
            SendRequest bad = first;
            for (int k = 0; k < posted; k++) {
                bad = bad.next;
            }
            terminateIfGone(s, bad.sgl, null, refused);
            throw refused;
        }
    }

    /**
     * A post refused because a region it names is gone (deregistered, or invalidated by the peer's
     * Send with Invalidate) cannot be answered by a completion the peer would ever learn of: the
     * stream ends with TERM 0/0/0 (RFC 5040 §4.8 local catastrophic error, §7) besides the
     * exception, never silently (issue 31). Cold path: only after a refusal.
     */
    private void terminateIfGone(QpConnection s, ScatterGatherList sgl, MemoryRegion one,
            WorkRequestException refused) {
        if (s == null) {
            return;
        }
        boolean gone = one instanceof SoftMemoryRegion m && !m.isValid();
        for (int j = 0; sgl != null && j < sgl.count() && !gone; j++) {
            gone = sgl.region(j) instanceof SoftMemoryRegion m && !m.isValid();
        }
        if (gone) {
            s.terminateLocally(org.jwarp.ground.TermCode.RDMAP_LOCAL_CATASTROPHIC,
                    new RdmaException("a work request names a region that is gone: " + refused.getMessage()));
        }
    }

    /**
     * A buffer taken from the shared receive queue becomes this QP's next receive (RFC 5041 §5.3
     * placement into it follows as for a posted one). Lock held; the ring has room (at most the
     * message being placed is outstanding).
     */
    void acceptShared(long wrId, SoftMemoryRegion[] mrs, int[] offs, int[] lens, int base, int n) {
        int i = (int) (rqPosted % rWrId.length);
        int to = i * maxRecvSge;
        rWrId[i] = wrId;
        for (int j = 0; j < n; j++) {
            rSgMr[to + j] = mrs[base + j];
            rSgOff[to + j] = offs[base + j];
            rSgLen[to + j] = lens[base + j];
        }
        rSgCount[i] = n;
        rqPosted++;
    }

    /**
     * An untagged Send begins and no buffer is posted: takes one from the shared receive queue.
     * False without an SRQ, when it is empty, or when the ring has no room. Lock held.
     */
    boolean pullShared() {
        if (srq == null || state == QpState.ERR || rqPosted - rqDone == rWrId.length) {
            return false;
        }
        return srq.takeInto(this);
    }

    @Override
    public void postRecv(RecvRequest first) throws WorkRequestException {
        WorkRequestException refused = null;
        int posted = 0;
        QpConnection s;
        synchronized (lock) {
            int k = 0;
            for (RecvRequest wr = first; wr != null; wr = wr.next, k++) {
                refused = enqueueRecv(wr.wrId, wr.sgl, null, 0, 0, k);
                if (refused != null) {
                    break;
                }
                posted++;
            }
            if (posted > 0) {
                postCalls++;
            }
            s = stream;
        }
        if (posted > 0 && s != null) {
            s.kick();
        }
        if (refused != null) {
            RecvRequest bad = first;
            for (int k = 0; k < posted; k++) {
                bad = bad.next;
            }
            terminateIfGone(s, bad.sgl, null, refused);
            throw refused;
        }
    }

    @Override
    public void postRecv(long wrId, MemoryRegion region, long offset, int length) throws WorkRequestException {
        WorkRequestException refused;
        QpConnection s;
        synchronized (lock) {
            refused = enqueueRecv(wrId, null, region, offset, length, 0);
            if (refused == null) {
                postCalls++;
            }
            s = stream;
        }
        if (refused != null) {
            terminateIfGone(s, null, region, refused);
            throw refused;
        }
        if (s != null) {
            s.kick();
        }
    }

    /** One receive WR from {@code sgl}, or (sgl null) from the single buffer given. Lock held. */
    private WorkRequestException enqueueRecv(long wrId, ScatterGatherList sgl, MemoryRegion one, long oneOff,
            int oneLen, int k) {
        WorkRequestException refused = WorkRequestChecks.recv(checks, sgl, one, oneOff, oneLen, k);
        if (refused != null) {
            return refused;
        }
        int n = sgl != null ? sgl.count() : (one == null && oneLen == 0 ? 0 : 1);
        int i = (int) (rqPosted % rWrId.length);
        int base = i * maxRecvSge;
        rWrId[i] = wrId;
        for (int j = 0; j < n; j++) {
            rSgMr[base + j] = (SoftMemoryRegion) (sgl != null ? sgl.region(j) : one);
            rSgOff[base + j] = (int) (sgl != null ? sgl.offset(j) : oneOff);
            rSgLen[base + j] = sgl != null ? sgl.length(j) : oneLen;
        }
        rSgCount[i] = n;
        rqPosted++;
        return null;
    }

    // ---- reactor side: lock held by the caller where noted ----

    /** Completes the oldest issued receive. Lock held. */
    void finishRecv(long seq, WcStatus status, int byteLength, boolean solicited, int invalidated, boolean withInv) {
        int i = (int) (seq % rWrId.length);
        recvCq.complete(rWrId[i], status, WcOpcode.RECV, byteLength, qpNum, context, 0, invalidated, withInv,
                solicited);
        int base = i * maxRecvSge;
        for (int j = 0; j < rSgCount[i]; j++) {
            rSgMr[base + j] = null;
        }
        rqDone = seq + 1;
    }

    /**
     * Every WR not yet completed completes with WR_FLUSH_ERR, in order (RFC 5040 §6.2.2, ibv
     * flush semantics). Safe from any thread once the reactor no longer drives the stream.
     */
    public void flush() {
        synchronized (lock) {
            state = QpState.ERR;
            sq.flush();
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
        QpConnection st = stream;
        return "SoftQueuePair[qp=" + qpNum + ", " + state + ", " + sq + ", rq posted/issued/done=" + rqPosted + "/" + rqIssued + "/"
                + rqDone + (st != null ? ", " + st.debugState() : "") + "]";
    }
}
