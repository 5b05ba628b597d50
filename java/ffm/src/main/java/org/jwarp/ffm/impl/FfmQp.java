package org.jwarp.ffm.impl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.jwarp.provider.OwnerCheck;
import org.jwarp.provider.WorkRequestChecks;
import org.jwarp.provider.WrRing;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.QueuePair;
import org.jwarp.verbs.QueuePairCaps;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RecvRequest;
import org.jwarp.verbs.ScatterGatherList;
import org.jwarp.verbs.SendOpcode;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WorkCompletion;
import org.jwarp.verbs.WorkRequestException;

/**
 * A reliable connected queue pair made by {@code rdma_create_qp} on an rdma_cm id. A post is one
 * downcall to the context's {@code ops.post_send} / {@code ops.post_recv} with the whole chain
 * written into preallocated {@code struct ibv_send_wr} / {@code ibv_recv_wr} and {@code ibv_sge}
 * arrays; each WR passes the shared checks of {@link WorkRequestChecks} first (RFC 5040 §7), and
 * nothing is allocated unless one is refused. The device sees a token per WR (a {@link WrRing}
 * token: queue tag, QP generation, sequence number); the completion maps it back to the caller's
 * wrId, and a signalled Read that siw completes after a later Send keeps its slot until then.
 *
 * <p>Re-posting a shape: a send WR written into a slot that already holds the same shape (the same
 * opcode, one SGE at the same address with the same lkey, the same remote address, rkey and
 * immediate), as every single-WR post of a reused request into slot 0 does, rewrites only wr_id,
 * the SGE's length and the flags: the rest is compared, not written again. The device only reads
 * the WR memory, so what was written stays there.
 *
 * <p>Thread-safe: posts and completion mapping are serialized on this object. A single-consumer QP
 * ({@link #single}) takes no monitor for them: its one owner thread is the application's promise
 * (the contract of {@link org.jwarp.verbs.CompletionQueue}), checked under {@code -ea} by
 * {@link OwnerCheck}.
 */
public final class FfmQp implements QueuePair {
    /** Tells apart the tokens of a closed QP whose qp_num the device reuses. */
    private static final AtomicInteger GENERATIONS = new AtomicInteger();
    private static final long SEND_WR_SIZE = IbvLayouts.SEND_WR.byteSize();
    private static final long RECV_WR_SIZE = IbvLayouts.RECV_WR.byteSize();
    private static final long SGE_SIZE = IbvLayouts.SGE.byteSize();

    private final FfmPd pd;
    /** The rdma_cm id the QP belongs to ({@code rdma_destroy_qp} takes the id). */
    private final MemorySegment cmId;
    private final FfmCq sendCq;
    private final FfmCq recvCq;
    /** The shared receive queue the QP takes its receives from, or null (its own receive queue). */
    private final FfmSrq srq;
    final MemorySegment qp;
    private final int qpNum;
    private final QueuePairCaps caps;
    private final MemorySegment postSendFn;
    private final MemorySegment postRecvFn;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment sendWrs;
    private final MemorySegment sendSges;
    private final MemorySegment recvWrs;
    private final MemorySegment recvSges;
    private final MemorySegment badWr;
    /** The outstanding WRs of each queue: the caller's wrIds and opcodes behind the device's tokens. */
    private final WrRing sq;
    private final WrRing rq;
    private long postCalls;
    /** What the last refused post returned (an errno). */
    private int lastPostError;
    private volatile QpState state = QpState.INIT;
    private int ord;
    private Object context;
    /** The connection the QP serves, named in its asynchronous events. */
    private volatile org.jwarp.verbs.Connection connection;
    /** Written under the QP's monitor; read without it by its CQs per completion. */
    private volatile boolean open = true;
    /** Set by {@link #abandoned}: posts are refused before the QP is destroyed. */
    private volatile boolean abandoned;
    private final Checks checks = new Checks();
    /** Bytes between two send WRs' SGE arrays. */
    private final long sendSgeStride;
    /** Single-consumer mode: posts and completion mapping take no monitor. */
    private final boolean single;
    private final OwnerCheck owner = new OwnerCheck("queue pair");

    private FfmQp(FfmPd pd, MemorySegment cmId, FfmCq sendCq, FfmCq recvCq, FfmSrq srq, MemorySegment qp,
            QueuePairCaps caps, boolean single) {
        this.pd = pd;
        this.single = single;
        this.srq = srq;
        this.cmId = cmId;
        this.sendCq = sendCq;
        this.recvCq = recvCq;
        this.qp = qp;
        this.qpNum = qp.get(JAVA_INT, IbvLayouts.QP_NUM);
        this.caps = caps;
        this.postSendFn = pd.device.postSend;
        this.postRecvFn = pd.device.postRecv;
        int sw = caps.maxSendWr();
        int rw = Math.max(1, caps.maxRecvWr()); // on an SRQ the device may grant none
        this.sendWrs = arena.allocate(IbvLayouts.SEND_WR, sw);
        this.sendSges = arena.allocate(IbvLayouts.SGE, (long) sw * Math.max(caps.maxSendSge(), 1));
        this.sendSgeStride = Math.max(caps.maxSendSge(), 1) * SGE_SIZE;
        this.recvWrs = arena.allocate(IbvLayouts.RECV_WR, rw);
        this.recvSges = arena.allocate(IbvLayouts.SGE, (long) rw * Math.max(caps.maxRecvSge(), 1));
        this.badWr = arena.allocate(ADDRESS);
        for (int k = 0; k < sw; k++) {
            sendWrs.set(JAVA_LONG, k * SEND_WR_SIZE + IbvLayouts.SWR_SG_LIST,
                    sendSges.address() + (long) k * Math.max(caps.maxSendSge(), 1) * SGE_SIZE);
        }
        for (int k = 0; k < rw; k++) {
            recvWrs.set(JAVA_LONG, k * RECV_WR_SIZE + IbvLayouts.RWR_SG_LIST,
                    recvSges.address() + (long) k * Math.max(caps.maxRecvSge(), 1) * SGE_SIZE);
        }
        int gen = GENERATIONS.incrementAndGet();
        this.sq = new WrRing(WrRing.SEND_TAG, sw, gen);
        this.rq = new WrRing(WrRing.RECV_TAG, rw, gen);
    }

    /**
     * Creates the QP of {@code id} in {@code pd} ({@code rdma_create_qp}) with at least the given
     * capacities; the caps the device granted are {@link #caps()}.
     */
    static FfmQp create(FfmCmId id, FfmPd pd, FfmCq sendCq, FfmCq recvCq, FfmSrq srq, int maxSendWr, int maxRecvWr,
            int maxSendSge, int maxRecvSge, int maxInlineData) throws RdmaException {
        return create(id, pd, sendCq, recvCq, srq, maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, maxInlineData, false);
    }

    /** As the thread-safe {@code create}, single-consumer when {@code single} (posts and completions take no monitor). */
    static FfmQp create(FfmCmId id, FfmPd pd, FfmCq sendCq, FfmCq recvCq, FfmSrq srq, int maxSendWr, int maxRecvWr,
            int maxSendSge, int maxRecvSge, int maxInlineData, boolean single) throws RdmaException {
        if (maxSendWr < 1 || maxRecvWr < 1 || maxSendSge < 1 || maxRecvSge < 1 || maxInlineData < 0) {
            throw new IllegalArgumentException("QP capacities: maxSendWr " + maxSendWr + ", maxRecvWr " + maxRecvWr
                    + ", maxSendSge " + maxSendSge + ", maxRecvSge " + maxRecvSge + " must be >= 1, maxInlineData >= 0");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Ibv.CALL_STATE);
            MemorySegment attr = arena.allocate(IbvLayouts.QP_INIT_ATTR);
            attr.set(ADDRESS, IbvLayouts.INIT_SEND_CQ, sendCq.cq);
            attr.set(ADDRESS, IbvLayouts.INIT_RECV_CQ, recvCq.cq);
            attr.set(ADDRESS, IbvLayouts.INIT_SRQ, srq == null ? MemorySegment.NULL : srq.srq);
            attr.set(JAVA_INT, IbvLayouts.INIT_MAX_SEND_WR, maxSendWr);
            attr.set(JAVA_INT, IbvLayouts.INIT_MAX_RECV_WR, maxRecvWr);
            attr.set(JAVA_INT, IbvLayouts.INIT_MAX_SEND_SGE, maxSendSge);
            attr.set(JAVA_INT, IbvLayouts.INIT_MAX_RECV_SGE, maxRecvSge);
            attr.set(JAVA_INT, IbvLayouts.INIT_MAX_INLINE, maxInlineData);
            attr.set(JAVA_INT, IbvLayouts.INIT_QP_TYPE, IbvLayouts.QPT_RC);
            int rc = (int) RdmaCm.CREATE_QP.invokeExact(state, id.id, pd.pd, attr);
            if (rc != 0) {
                throw new RdmaException("rdma_create_qp on " + pd.device.name + " failed with " + Ibv.describe(Ibv.errno(state)));
            }
            MemorySegment qp = id.id.get(ADDRESS, IbvLayouts.CM_ID_QP).reinterpret(IbvLayouts.QP.byteSize());
            List<String> wrong = new ArrayList<>();
            if (!qp.get(ADDRESS, IbvLayouts.QP_CONTEXT).equals(pd.device.ctx)) {
                wrong.add("ibv_qp.context is not the id's context");
            }
            if (!qp.get(ADDRESS, IbvLayouts.QP_PD).equals(pd.pd)) {
                wrong.add("ibv_qp.pd is not the protection domain");
            }
            if (!qp.get(ADDRESS, IbvLayouts.QP_SEND_CQ).equals(sendCq.cq) || !qp.get(ADDRESS, IbvLayouts.QP_RECV_CQ)
                    .equals(recvCq.cq)) {
                wrong.add("ibv_qp.send_cq/recv_cq are not the completion queues");
            }
            // ibv_query_qp's answer against the same fields read through the layouts: it fills init_attr's CQs
            // from the QP and stores the state it reports in qp->state, the word after qp_num
            MemorySegment queried = arena.allocate(IbvLayouts.QP_ATTR);
            MemorySegment queriedInit = arena.allocate(IbvLayouts.QP_INIT_ATTR);
            int qrc = (int) Ibv.QUERY_QP.invokeExact(qp, queried, IbvLayouts.QP_ATTR_MASK_STATE, queriedInit);
            if (qrc != 0) {
                wrong.add("ibv_query_qp failed with " + Ibv.describe(qrc));
            } else {
                int qpState = qp.get(JAVA_INT, IbvLayouts.QP_STATE);
                if (qpState != queried.get(JAVA_INT, IbvLayouts.QP_ATTR_QP_STATE)) {
                    wrong.add("ibv_qp.state reads " + qpState + ", ibv_query_qp answers "
                            + queried.get(JAVA_INT, IbvLayouts.QP_ATTR_QP_STATE));
                }
                if (!queriedInit.get(ADDRESS, IbvLayouts.INIT_SEND_CQ).equals(qp.get(ADDRESS, IbvLayouts.QP_SEND_CQ))) {
                    wrong.add("ibv_query_qp's send_cq differs from ibv_qp.send_cq");
                }
            }
            if (!wrong.isEmpty()) {
                RdmaCm.DESTROY_QP.invokeExact(id.id);
                FfmContext.layoutCheck("ibv_qp", wrong);
            }
            // ibv_create_qp writes back the capacities granted, at least those asked for
            QueuePairCaps caps = new QueuePairCaps(attr.get(JAVA_INT, IbvLayouts.INIT_MAX_SEND_WR),
                    attr.get(JAVA_INT, IbvLayouts.INIT_MAX_RECV_WR), attr.get(JAVA_INT, IbvLayouts.INIT_MAX_SEND_SGE),
                    attr.get(JAVA_INT, IbvLayouts.INIT_MAX_RECV_SGE),
                    Math.min(attr.get(JAVA_INT, IbvLayouts.INIT_MAX_SEND_SGE), pd.device.maxSgeRd),
                    attr.get(JAVA_INT, IbvLayouts.INIT_MAX_INLINE));
            FfmQp q = new FfmQp(pd, id.id, sendCq, recvCq, srq, qp, caps, single);
            pd.attach(q);
            id.attach(q);
            sendCq.attach(q);
            if (recvCq != sendCq) {
                recvCq.attach(q);
            }
            return q;
        } catch (RdmaException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Ibv.downcallFailed("rdma_create_qp", t);
        }
    }

    /** The connection is up: sends may be posted; {@code ord} is the negotiated ORD (RFC 6581 §9.1). */
    synchronized void established(int ord) {
        this.ord = ord;
        state = QpState.RTS;
    }

    /** The connection ended: the device flushes what is outstanding. */
    void disconnected() {
        state = QpState.ERR;
    }

    void context(Object context) {
        this.context = context;
    }

    /** Names the connection this QP serves (for its asynchronous events). */
    void connection(org.jwarp.verbs.Connection c) {
        this.connection = c;
    }

    org.jwarp.verbs.Connection connection() {
        return connection;
    }

    /** The device reported the QP in error (an asynchronous event, e.g. QP_FATAL): its WRs flush. */
    void failed() {
        state = QpState.ERR;
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
    public Object context() {
        return context;
    }

    @Override
    public QueuePairCaps caps() {
        return caps;
    }

    @Override
    public boolean singleConsumer() {
        return single;
    }

    @Override
    public long postCalls() {
        if (single) {
            return postCalls;
        }
        synchronized (this) {
            return postCalls;
        }
    }

    @Override
    public void postSend(SendRequest first) throws WorkRequestException {
        if (single) {
            boolean entered = owner.enter();
            try {
                postSendNow(first);
            } finally {
                owner.leave(entered);
            }
            return;
        }
        synchronized (this) {
            postSendNow(first);
        }
    }

    private void postSendNow(SendRequest first) throws WorkRequestException {
        checkOpen();
        WorkRequestException refused = null;
        int k = 0;
        for (SendRequest wr = first; wr != null; wr = wr.next, k++) {
            refused = writeSend(wr, k); // refuses WR k when no slot is free, so k stays below maxSendWr
            if (refused != null) {
                break;
            }
        }
        if (k > 0) {
            int posted = post(true, k);
            int i = 0;
            for (SendRequest wr = first; i < posted; wr = wr.next, i++) {
                sq.posted(wr.wrId, wcOpcode(wr.opcode), wr.signaled);
            }
            if (posted < k) {
                throw new WorkRequestException("ibv_post_send on QP " + qpNum + " refused WR " + posted + " of the chain with "
                        + Ibv.describe(lastPostError), posted, null);
            }
        }
        if (refused != null) {
            throw refused;
        }
    }

    private WorkRequestException writeSend(SendRequest wr, int k) {
        WorkRequestException refused = WorkRequestChecks.send(checks, wr, k);
        if (refused != null) {
            return refused;
        }
        long w = k * SEND_WR_SIZE;
        long sges = k * sendSgeStride;
        SendOpcode op = wr.opcode;
        int imm = op == SendOpcode.SEND_WITH_INVALIDATE ? wr.invalidateRkey : 0;
        int one = shapeHeld(wr, w, sges, imm);
        if (one >= 0) {
            sendSges.set(JAVA_INT, sges + IbvLayouts.SGE_LENGTH, wr.sgl.length(one));
        } else {
            sendWrs.set(JAVA_INT, w + IbvLayouts.SWR_NUM_SGE, writeSges(wr.sgl, sendSges, sges));
            sendWrs.set(JAVA_INT, w + IbvLayouts.SWR_OPCODE, op.ibvCode);
            sendWrs.set(JAVA_INT, w + IbvLayouts.SWR_IMM_DATA, imm);
            sendWrs.set(JAVA_LONG, w + IbvLayouts.SWR_REMOTE_ADDR, wr.remoteAddress);
            sendWrs.set(JAVA_INT, w + IbvLayouts.SWR_RKEY, wr.rkey);
        }
        sendWrs.set(JAVA_LONG, w + IbvLayouts.SWR_WR_ID, sq.tokenAhead(k));
        sendWrs.set(JAVA_INT, w + IbvLayouts.SWR_SEND_FLAGS, (wr.signaled ? IbvLayouts.SEND_SIGNALED : 0)
                | (wr.solicited ? IbvLayouts.SEND_SOLICITED : 0) | (wr.fence ? IbvLayouts.SEND_FENCE : 0)
                | (wr.inline ? IbvLayouts.SEND_INLINE : 0));
        return null;
    }

    /**
     * When send slot {@code w} (its SGEs at {@code sges}) already holds {@code wr}'s shape (one SGE
     * naming the same address and lkey; the same opcode, immediate, remote address and rkey), the
     * index of {@code wr}'s one non-empty entry; else -1, and the whole WR is written.
     */
    private int shapeHeld(SendRequest wr, long w, long sges, int imm) {
        if (sendWrs.get(JAVA_INT, w + IbvLayouts.SWR_NUM_SGE) != 1
                || sendWrs.get(JAVA_INT, w + IbvLayouts.SWR_OPCODE) != wr.opcode.ibvCode
                || sendWrs.get(JAVA_INT, w + IbvLayouts.SWR_IMM_DATA) != imm
                || sendWrs.get(JAVA_LONG, w + IbvLayouts.SWR_REMOTE_ADDR) != wr.remoteAddress
                || sendWrs.get(JAVA_INT, w + IbvLayouts.SWR_RKEY) != wr.rkey) {
            return -1;
        }
        ScatterGatherList sgl = wr.sgl;
        int found = -1;
        for (int j = 0; j < sgl.count(); j++) {
            if (sgl.length(j) == 0) {
                continue;
            }
            if (found >= 0) {
                return -1; // two entries: not the held shape
            }
            found = j;
        }
        if (found < 0) {
            return -1;
        }
        MemoryRegion mr = sgl.region(found);
        return sendSges.get(JAVA_LONG, sges + IbvLayouts.SGE_ADDR) == mr.address() + sgl.offset(found)
                && sendSges.get(JAVA_INT, sges + IbvLayouts.SGE_LKEY) == mr.lkey() ? found : -1;
    }

    @Override
    public void postRecv(RecvRequest first) throws WorkRequestException {
        if (single) {
            boolean entered = owner.enter();
            try {
                postRecvNow(first);
            } finally {
                owner.leave(entered);
            }
            return;
        }
        synchronized (this) {
            postRecvNow(first);
        }
    }

    private void postRecvNow(RecvRequest first) throws WorkRequestException {
        checkOpen();
        WorkRequestException refused = null;
        int k = 0;
        for (RecvRequest wr = first; wr != null; wr = wr.next, k++) {
            refused = WorkRequestChecks.recv(checks, wr.sgl, null, 0, 0, k);
            if (refused != null) { // refuses WR k when no slot is free, so k stays below maxRecvWr
                break;
            }
            long w = k * RECV_WR_SIZE;
            int n = writeSges(wr.sgl, recvSges, (long) k * Math.max(caps.maxRecvSge(), 1) * SGE_SIZE);
            recvWrs.set(JAVA_LONG, w + IbvLayouts.RWR_WR_ID, rq.tokenAhead(k));
            recvWrs.set(JAVA_INT, w + IbvLayouts.RWR_NUM_SGE, n);
        }
        postReceives(first, k);
        if (refused != null) {
            throw refused;
        }
    }

    @Override
    public void postRecv(long wrId, MemoryRegion mr, long offset, int length) throws WorkRequestException {
        if (single) {
            boolean entered = owner.enter();
            try {
                postRecvNow(wrId, mr, offset, length);
            } finally {
                owner.leave(entered);
            }
            return;
        }
        synchronized (this) {
            postRecvNow(wrId, mr, offset, length);
        }
    }

    private void postRecvNow(long wrId, MemoryRegion mr, long offset, int length) throws WorkRequestException {
        checkOpen();
        WorkRequestException refused = WorkRequestChecks.recv(checks, null, mr, offset, length, 0);
        if (refused != null) {
            throw refused;
        }
        long s = 0;
        int n = 0;
        if (length > 0) {
            recvSges.set(JAVA_LONG, s + IbvLayouts.SGE_ADDR, mr.address() + offset);
            recvSges.set(JAVA_INT, s + IbvLayouts.SGE_LENGTH, length);
            recvSges.set(JAVA_INT, s + IbvLayouts.SGE_LKEY, mr.lkey());
            n = 1;
        }
        recvWrs.set(JAVA_LONG, IbvLayouts.RWR_WR_ID, rq.nextToken());
        recvWrs.set(JAVA_INT, IbvLayouts.RWR_NUM_SGE, n);
        int posted = post(false, 1);
        if (posted == 1) {
            rq.posted(wrId, WcOpcode.RECV);
        } else {
            throw new WorkRequestException("ibv_post_recv on QP " + qpNum + " refused it with " + Ibv.describe(lastPostError),
                    0, null);
        }
    }

    private void postReceives(RecvRequest first, int k) throws WorkRequestException {
        if (k == 0) {
            return;
        }
        int posted = post(false, k);
        int i = 0;
        for (RecvRequest wr = first; i < posted; wr = wr.next, i++) {
            rq.posted(wr.wrId, WcOpcode.RECV);
        }
        if (posted < k) {
            throw new WorkRequestException("ibv_post_recv on QP " + qpNum + " refused WR " + posted + " of the chain with "
                    + Ibv.describe(lastPostError), posted, null);
        }
    }

    /** Writes an SGL's non-empty entries at {@code base} of {@code sges}; returns how many. */
    static int writeSges(ScatterGatherList sgl, MemorySegment sges, long base) {
        int written = 0;
        for (int j = 0; j < sgl.count(); j++) {
            int len = sgl.length(j);
            if (len == 0) {
                continue; // a zero-length entry carries nothing (and siw refuses one with a null lkey)
            }
            MemoryRegion mr = sgl.region(j);
            long at = base + written * SGE_SIZE;
            sges.set(JAVA_LONG, at + IbvLayouts.SGE_ADDR, mr.address() + sgl.offset(j));
            sges.set(JAVA_INT, at + IbvLayouts.SGE_LENGTH, len);
            sges.set(JAVA_INT, at + IbvLayouts.SGE_LKEY, mr.lkey());
            written++;
        }
        return written;
    }

    /**
     * Links WRs 0..k-1 and posts them in one downcall to {@code ops.post_send}/{@code post_recv};
     * returns how many the device took (all, or those before {@code bad_wr}).
     */
    private int post(boolean send, int k) {
        MemorySegment wrs = send ? sendWrs : recvWrs;
        long size = send ? SEND_WR_SIZE : RECV_WR_SIZE;
        long next = send ? IbvLayouts.SWR_NEXT : IbvLayouts.RWR_NEXT;
        for (int i = 0; i < k; i++) {
            wrs.set(JAVA_LONG, i * size + next, i + 1 < k ? wrs.address() + (i + 1) * size : 0L);
        }
        postCalls++;
        badWr.set(JAVA_LONG, 0, 0L);
        int rc;
        try {
            rc = send ? (int) Ibv.POST_SEND.invokeExact(postSendFn, qp, wrs, badWr)
                    : (int) Ibv.POST_RECV.invokeExact(postRecvFn, qp, wrs, badWr);
        } catch (Throwable t) {
            throw Ibv.downcallFailed(send ? "ops.post_send" : "ops.post_recv", t);
        }
        if (rc == 0) {
            return k;
        }
        lastPostError = rc;
        long bad = badWr.get(JAVA_LONG, 0);
        long at = (bad - wrs.address()) / size;
        return bad >= wrs.address() && at < k ? (int) at : 0;
    }

    /** The shared receive queue this QP receives from, or null. */
    FfmSrq sharedReceiveQueue() {
        return srq;
    }

    /**
     * Maps a completion's token back to the caller's wrId and retires its WR with the older ones
     * its ring lets go (RFC 5040 §5.5; see {@link WrRing}); an error completion gets the posted
     * opcode. False when the token is none of this QP's outstanding WRs. Under the QP's monitor
     * unless the QP is single-consumer (then the poll runs on its owner thread).
     */
    boolean completed(WorkCompletion wc, boolean success) {
        if (single) {
            return completedNow(wc, success);
        }
        synchronized (this) {
            return completedNow(wc, success);
        }
    }

    private boolean completedNow(WorkCompletion wc, boolean success) {
        if (srq != null && srq.owns(wc.wrId)) {
            if (!srq.completed(wc)) {
                return false;
            }
            wc.qpContext = context;
            return true;
        }
        WrRing ring = sq.owns(wc.wrId) ? sq : rq;
        if (!ring.retireThrough(wc.wrId)) {
            return false;
        }
        wc.wrId = ring.retiredWrId();
        if (!success) {
            wc.opcode = ring.retiredOp();
        }
        wc.qpContext = context;
        return true;
    }

    private static WcOpcode wcOpcode(SendOpcode op) {
        return switch (op) {
            case RDMA_WRITE -> WcOpcode.RDMA_WRITE;
            case RDMA_READ -> WcOpcode.RDMA_READ;
            case SEND, SEND_WITH_INVALIDATE -> WcOpcode.SEND;
        };
    }

    private void checkOpen() throws WorkRequestException {
        if (!open || abandoned) {
            throw new WorkRequestException("QP " + qpNum + " is closed", 0, null);
        }
    }

    /**
     * The setup of this QP's connection was given up (cancelled, or timed out) while rdma_connect
     * still runs on its helper thread, which destroys the QP when the call returns: until then the
     * QP is in ERR and refuses posts.
     */
    synchronized void abandoned() {
        abandoned = true;
        state = QpState.ERR;
    }

    /** Whether {@link #abandoned} was called: the QP belongs to a helper thread still in rdma_connect. */
    boolean isAbandoned() {
        return abandoned;
    }

    /**
     * Destroys the QP ({@code rdma_destroy_qp} through its id); called by the id's close. Its CQs
     * keep it until the WRs it held have completed as flushed.
     */
    void close() {
        synchronized (this) {
            if (!open) {
                return;
            }
            open = false;
            state = QpState.ERR;
        }
        try {
            RdmaCm.DESTROY_QP.invokeExact(cmId);
        } catch (Throwable t) {
            throw Ibv.downcallFailed("rdma_destroy_qp", t);
        }
        pd.forget(this);
        sendCq.closed(this);
        if (recvCq != sendCq) {
            recvCq.closed(this);
        }
        arena.close();
    }

    boolean isClosed() {
        return !open;
    }

    /**
     * Closed, and none of its WRs that complete on {@code cq} is outstanding: the device flushed
     * what the QP held (RFC 5040 §8.2) and that CQ delivered it.
     */
    synchronized boolean drainedOn(FfmCq cq) {
        return !open && (cq != sendCq || sq.outstanding() == 0) && (cq != recvCq || rq.outstanding() == 0);
    }

    /** The accounting behind {@link WorkRequestChecks}: WR k of a chain is not in the rings yet. */
    private final class Checks implements WorkRequestChecks.Target {
        @Override
        public int verdict(MemoryRegion region) {
            if (!(region instanceof FfmMr m)) {
                return WorkRequestChecks.OTHER_PROVIDER;
            }
            // the device checks the lkey's domain and liveness itself (a local protection error completion)
            return m.access().contains(Access.LOCAL_WRITE) ? WorkRequestChecks.WRITABLE : WorkRequestChecks.READ_ONLY;
        }

        @Override
        public QueuePair queuePair() {
            return FfmQp.this;
        }

        @Override
        public boolean sendQueueFull(int k) {
            return sq.outstanding() + k >= sq.capacity();
        }

        @Override
        public boolean receiveQueueFull(int k) {
            return rq.outstanding() + k >= rq.capacity();
        }

        @Override
        public boolean receivesFromSharedQueue() {
            return srq != null;
        }

        @Override
        public int ord() {
            return ord;
        }
    }
}
