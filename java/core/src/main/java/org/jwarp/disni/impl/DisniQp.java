package org.jwarp.disni.impl;

import com.ibm.disni.util.MemoryUtils;
import com.ibm.disni.verbs.IbvQP;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.jwarp.disni.natives.JwarpNative;
import org.jwarp.provider.OwnerCheck;
import org.jwarp.provider.WorkRequestChecks;
import org.jwarp.provider.WrRing;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.QueuePair;
import org.jwarp.verbs.QueuePairCaps;
import org.jwarp.verbs.RecvRequest;
import org.jwarp.verbs.ScatterGatherList;
import org.jwarp.verbs.SendOpcode;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WorkCompletion;
import org.jwarp.verbs.WorkRequestException;

/**
 * A connected RC queue pair created by rdma_cm through DiSNI. A chain of work requests is
 * written as linked {@code struct ibv_send_wr}/{@code ibv_recv_wr} entries, each with its
 * {@code ibv_sge} array, into preallocated direct buffers (offsets probed from rdma-core) and
 * posted with one JNI crossing and one {@code ibv_post_send}/{@code ibv_post_recv}, without
 * allocation. Local checks before anything reaches the device (RFC 5040 §7 local errors), the
 * providers' shared {@link WorkRequestChecks}: QP in RTS, free slots, SGE counts within the granted
 * caps, every SGE inside its region and, for receives and Read sinks, LOCAL_WRITE; inline size; an
 * RDMA Read when the negotiated ORD is 0 (RFC 6581 section 9.1); an lkey's protection domain and
 * liveness are left to the device. Reads beyond a non-zero ORD are the device's to queue (RFC 5040
 * section 6.5: siw holds them and what follows in its send queue, rxe waits for a free Read
 * slot). The first refused WR of
 * a chain cuts it there: the ones before are posted (ibverbs' bad_wr contract, also when the
 * device itself refuses a WR). Outstanding WRs of both queues are kept in {@link WrRing}s: the
 * device sees a ring token as wr_id and completions retire by ring position, so repeated caller
 * wrIds and unsignalled WRs (which hold their slots until a later signalled one completes) never
 * leak a slot.
 *
 * <p>Re-posting a shape: a WR written into a slot that already holds the same shape (the same
 * opcode, one SGE at the same address with the same lkey, the same remote address, rkey and
 * immediate; a receive's one SGE at the same address with the same lkey), as every single-WR post
 * of a reused request into slot 0 does, rewrites only wr_id, the SGE's length and the flags: the
 * rest of the native WR is compared, not written again. ibv_post_send and ibv_post_recv only read
 * the WR memory, so what was written stays there.
 *
 * <p>Thread-safe: posts and completion mapping are serialized on this object. A single-consumer QP
 * ({@link #single}) takes no monitor: its one owner thread is the application's promise (the
 * contract of {@link org.jwarp.verbs.CompletionQueue}), checked under {@code -ea} by
 * {@link OwnerCheck}.
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
    static final int IBV_SEND_FENCE = 1;
    static final int IBV_SEND_SIGNALED = 1 << 1;
    static final int IBV_SEND_SOLICITED = 1 << 2;
    static final int IBV_SEND_INLINE = 1 << 3;

    /** Generations of the WR tokens: QP numbers are reused, tokens of a closed QP must not match its successor. */
    private static final java.util.concurrent.atomic.AtomicInteger GENERATIONS = new java.util.concurrent.atomic.AtomicInteger();
    private final IbvQP qp;
    private final long qpPtr;
    private final int qpNum;
    private final QueuePairCaps caps;
    /** maxSendWr send WRs, then each one's SGE array of maxSendSge entries (maxSgeRd never exceeds it). */
    private final ByteBuffer sendWr;
    private final long sendWrAddr;
    private final int sendSges;
    private final ByteBuffer recvWr;
    private final long recvWrAddr;
    private final int recvSges;
    /** Posted, not yet retired send WRs, retired by ring position (the SQ completes in order). */
    private final WrRing sq;
    /** Posted, not yet completed receive WRs (the RQ completes in order). */
    private final WrRing rq;
    /** The shared receive queue the receives come from, or null (set once, before any post). */
    private volatile DisniSrq srq;
    /** The application's object for this QP (ibverbs' qp_context), or null (set once, before any post). */
    private volatile Object context;
    private volatile int ord;
    private volatile QpState state = QpState.INIT;
    private long postCalls;
    /**
     * Kernel siw's short-payload defect (see {@link #SIW_SHORT_PAYLOAD}): when set, a Send or
     * Write of at most that many bytes in one SGE that crosses a 4 KiB page boundary is posted
     * inline, so siw copies it at post time instead of through its page-crossing copy. Set once,
     * before any post.
     */
    private volatile boolean inlineShortPageCrossing;
    /**
     * Single-consumer mode: posts and completion mapping take no monitor. Set once before the QP is
     * handed out (published with the connection that holds it, through its final field).
     */
    private boolean single;
    private final OwnerCheck owner = new OwnerCheck("queue pair");
    /** This QP as the shared post-time checks see it (RFC 5040 §7); read under this object's lock. */
    private final WorkRequestChecks.Target checks = new Checks();

    DisniQp(IbvQP qp, QueuePairCaps caps) throws java.io.IOException {
        this.qp = qp;
        this.qpPtr = CmDispatcher.ptr(qp);
        this.qpNum = qp.getQp_num();
        this.caps = caps;
        int ns = caps.maxSendWr();
        if (caps.maxSgeRd() > Math.max(1, caps.maxSendSge())) {
            throw new IllegalArgumentException("maxSgeRd " + caps.maxSgeRd() + " exceeds maxSendSge " + caps.maxSendSge()
                    + ": a Read is a send WR");
        }
        sendSges = Math.max(1, caps.maxSendSge());
        sendWr = ByteBuffer.allocateDirect(ns * (SEND_WR_SIZE + sendSges * SGE_SIZE)).order(ByteOrder.nativeOrder());
        sendWrAddr = MemoryUtils.getAddress(sendWr);
        for (int i = 0; i < ns; i++) {
            sendWr.putLong(i * SEND_WR_SIZE + WR_NEXT, i + 1 < ns ? sendWrAddr + (i + 1) * SEND_WR_SIZE : 0L);
            sendWr.putLong(i * SEND_WR_SIZE + WR_SG_LIST, sendWrAddr + sendSge(i, 0));
        }
        int nr = Math.max(1, caps.maxRecvWr()); // 0 granted on a QP of a shared receive queue
        recvSges = Math.max(1, caps.maxRecvSge());
        recvWr = ByteBuffer.allocateDirect(nr * (RECV_WR_SIZE + recvSges * SGE_SIZE)).order(ByteOrder.nativeOrder());
        recvWrAddr = MemoryUtils.getAddress(recvWr);
        for (int i = 0; i < nr; i++) {
            recvWr.putLong(i * RECV_WR_SIZE + WR_NEXT, i + 1 < nr ? recvWrAddr + (i + 1) * RECV_WR_SIZE : 0L);
            recvWr.putLong(i * RECV_WR_SIZE + WR_SG_LIST, recvWrAddr + recvSge(i, 0));
        }
        int gen = GENERATIONS.incrementAndGet();
        sq = new WrRing(WrRing.SEND_TAG, ns, gen);
        rq = new WrRing(WrRing.RECV_TAG, nr, gen);
    }

    private int sendSge(int wr, int j) {
        return caps.maxSendWr() * SEND_WR_SIZE + (wr * sendSges + j) * SGE_SIZE;
    }

    private int recvSge(int wr, int j) {
        return caps.maxRecvWr() * RECV_WR_SIZE + (wr * recvSges + j) * SGE_SIZE;
    }

    /**
     * Payloads up to this many bytes in one SGE are copied by kernel siw (6.1, siw_try_1seg) into the
     * frame header. When the source crosses a 4 KiB page boundary and the copy runs outside the
     * posting system call (Read Responses always; Sends and Writes queued behind earlier work), its
     * page-crossing branch copies the wrong bytes (it splits the payload at {@code len - (4096 -
     * offset)} instead of {@code 4096 - offset}); the peer sees no error, siw computes the CRC over
     * what it sent. Seen in the key-value stress on siw0 (every wrong Read had its source at page
     * offset 4080 and 18-29 bytes; the bytes at rest were right) and asserted by
     * ProviderContractTest#shortPayloadsAcrossPageBoundary_5040_5. 32 is siw's MAX_HDR_INLINE.
     */
    static final int SIW_SHORT_PAYLOAD = 32;

    /** Turns on {@link #inlineShortPageCrossing} (siw devices; before the QP is handed out). */
    void inlineShortPageCrossing(boolean on) {
        this.inlineShortPageCrossing = on;
    }

    /** Whether {@code len} bytes at {@code address} reach into the next 4 KiB page. */
    static boolean crossesPage(long address, int len) {
        return (address & 4095) + len > 4096;
    }

    /** Turns on single-consumer mode (before the QP is handed out). */
    void singleConsumer(boolean on) {
        this.single = on;
    }

    @Override
    public boolean singleConsumer() {
        return single;
    }

    /** Attaches the shared receive queue the QP was created with (before it is handed out). */
    void useSrq(DisniSrq s) {
        this.srq = s;
    }

    DisniSrq srq() {
        return srq;
    }

    /** Sets the QP's user context from its configuration (before it is handed out). */
    void useContext(Object ctx) {
        this.context = ctx;
    }

    @Override
    public Object context() {
        return context;
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
    public QueuePairCaps caps() {
        return caps;
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
        WorkRequestException refused = null;
        int k = 0;
        for (SendRequest wr = first; wr != null; wr = wr.next, k++) {
            refused = writeSend(wr, k);
            if (refused != null) {
                break;
            }
        }
        if (k > 0) {
            long r = postChain(true, k);
            int ok = WrRing.postedOf(r, k);
            // position unknown: every WR of the chain is kept, so whichever reached the device
            // maps back to its caller's wrId when it completes as flushed
            int keep = ok == WorkRequestException.INDEX_UNKNOWN ? k : ok;
            int i = 0;
            for (SendRequest wr = first; i < keep; wr = wr.next, i++) {
                sq.posted(wr.wrId, wcOpcodeOf(wr.opcode), wr.signaled);
            }
            if (r != 0) {
                throw deviceRefused("ibv_post_send", r, ok, k);
            }
        }
        if (refused != null) {
            throw refused;
        }
    }

    /**
     * Writes WR k of a chain into slot k of the send buffer, or returns why it is refused. When the
     * slot holds the same shape already ({@link #repeatedSendShape}), only wr_id, the SGE's length
     * and the flags are written.
     */
    private WorkRequestException writeSend(SendRequest wr, int k) {
        WorkRequestException refused = WorkRequestChecks.send(checks, wr, k);
        if (refused != null) {
            return refused;
        }
        SendOpcode op = wr.opcode;
        ScatterGatherList sgl = wr.sgl;
        int w = k * SEND_WR_SIZE;
        int imm = op == SendOpcode.SEND_WITH_INVALIDATE ? wr.invalidateRkey : 0;
        int written = 0;
        long firstAddress = 0;
        int firstLength = 0;
        boolean firstOpen = false;
        int one = repeatedSendShape(wr, k, imm);
        if (one >= 0) {
            MemoryRegion mr = sgl.region(one);
            written = 1;
            firstAddress = mr.address() + sgl.offset(one);
            firstLength = sgl.length(one);
            firstOpen = isOpen(mr);
            sendWr.putInt(sendSge(k, 0) + SGE_LENGTH, firstLength);
        } else {
            int n = sgl.count();
            for (int j = 0; j < n; j++) {
                int len = sgl.length(j);
                if (len == 0) {
                    continue; // zero-length entries carry nothing; siw refuses a zero-length SGE with a null lkey
                }
                MemoryRegion mr = sgl.region(j);
                int at = sendSge(k, written++);
                firstAddress = mr.address() + sgl.offset(j);
                firstLength = len;
                firstOpen = isOpen(mr);
                sendWr.putLong(at + SGE_ADDR, firstAddress);
                sendWr.putInt(at + SGE_LENGTH, len);
                sendWr.putInt(at + SGE_LKEY, mr.lkey());
            }
            sendWr.putInt(w + WR_NUM_SGE, written);
            sendWr.putInt(w + WR_OPCODE, op.ibvCode);
            sendWr.putInt(w + WR_IMM, imm);
            sendWr.putLong(w + WR_REMOTE_ADDR, wr.remoteAddress);
            sendWr.putInt(w + WR_RKEY, wr.rkey);
        }
        sendWr.putLong(w, sq.tokenAhead(k)); // the caller's wrId stays in the ring slot
        boolean inline = wr.inline || inlineShortPageCrossing && written == 1 && op != SendOpcode.RDMA_READ
                && firstOpen && firstLength <= SIW_SHORT_PAYLOAD && crossesPage(firstAddress, firstLength);
        sendWr.putInt(w + WR_FLAGS, (wr.signaled ? IBV_SEND_SIGNALED : 0) | (wr.solicited ? IBV_SEND_SOLICITED : 0)
                | (wr.fence ? IBV_SEND_FENCE : 0) | (inline ? IBV_SEND_INLINE : 0));
        return null;
    }

    /** Whether a region is open (a closed one completes LOC_PROT_ERR: it is never sent inline). */
    private static boolean isOpen(MemoryRegion mr) {
        return mr instanceof DisniPd.DisniMr m && m.isOpen();
    }

    /**
     * The index of the one non-empty SGE of {@code wr} when send slot {@code k} already holds its
     * shape (one SGE at the same address with the same lkey; the same opcode, remote address, rkey
     * and immediate), else -1: then the whole WR is written.
     */
    private int repeatedSendShape(SendRequest wr, int k, int imm) {
        int w = k * SEND_WR_SIZE;
        if (sendWr.getInt(w + WR_NUM_SGE) != 1 || sendWr.getInt(w + WR_OPCODE) != wr.opcode.ibvCode
                || sendWr.getLong(w + WR_REMOTE_ADDR) != wr.remoteAddress || sendWr.getInt(w + WR_RKEY) != wr.rkey
                || sendWr.getInt(w + WR_IMM) != imm) {
            return -1;
        }
        ScatterGatherList sgl = wr.sgl;
        int one = singleEntry(sgl);
        return one >= 0 && sameSge(sendWr, sendSge(k, 0), sgl.region(one), sgl.offset(one)) ? one : -1;
    }

    /** The index of the only non-empty entry of {@code sgl}, or -1 when there are none or several. */
    private static int singleEntry(ScatterGatherList sgl) {
        int one = -1;
        int n = sgl.count();
        for (int j = 0; j < n; j++) {
            if (sgl.length(j) != 0) {
                if (one >= 0) {
                    return -1;
                }
                one = j;
            }
        }
        return one;
    }

    /** Whether the ibv_sge at {@code at} already names {@code off} of {@code mr} (address and lkey). */
    private static boolean sameSge(ByteBuffer ring, int at, MemoryRegion mr, long off) {
        return ring.getLong(at + SGE_ADDR) == mr.address() + off && ring.getInt(at + SGE_LKEY) == mr.lkey();
    }

    /**
     * What a region is to a work queue of this provider ({@link WorkRequestChecks.Regions}). The
     * device checks an lkey's protection domain and liveness itself (a local protection error
     * completion), so a QP passes {@code domain} null and only its shared receive queue, whose
     * buffers serve QPs of one domain (RFC 5041 §8.2), names the domain to hold regions to.
     */
    static int verdict(DisniPd domain, MemoryRegion mr) {
        if (!(mr instanceof DisniPd.DisniMr m)) {
            return WorkRequestChecks.OTHER_PROVIDER;
        }
        if (domain != null && m.pd != domain) {
            return WorkRequestChecks.OTHER_DOMAIN;
        }
        return m.access().contains(Access.LOCAL_WRITE) ? WorkRequestChecks.WRITABLE : WorkRequestChecks.READ_ONLY;
    }

    /** The DiSNI accounting behind {@link WorkRequestChecks}: WR k of a chain is not in the rings yet. */
    private final class Checks implements WorkRequestChecks.Target {
        @Override
        public int verdict(MemoryRegion region) {
            return DisniQp.verdict(null, region);
        }

        @Override
        public QueuePair queuePair() {
            return DisniQp.this;
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

    /**
     * Cuts the prepared chain after {@code n} WRs, posts it with one native call and restores the
     * link; returns 0 or (index of the refused WR &lt;&lt; 32) | errno.
     */
    private long postChain(boolean send, int n) {
        ByteBuffer b = send ? sendWr : recvWr;
        int stride = send ? SEND_WR_SIZE : RECV_WR_SIZE;
        long base = send ? sendWrAddr : recvWrAddr;
        int capacity = send ? caps.maxSendWr() : caps.maxRecvWr();
        int last = (n - 1) * stride + WR_NEXT;
        b.putLong(last, 0L);
        long r = send ? JwarpNative.postSendList(qpPtr, base) : JwarpNative.postRecvList(qpPtr, base);
        b.putLong(last, n < capacity ? base + (long) n * stride : 0L);
        postCalls++;
        return r;
    }

    /**
     * The device refused WR {@code ok} of a chain of {@code k}. When it did not say which
     * ({@link WorkRequestException#INDEX_UNKNOWN}), the rings cannot know what it holds: the QP is
     * moved to ERR, so whatever it took completes as flushed (RFC 5040 §8.2) and nothing more is
     * posted. Refusal path only: it allocates.
     */
    private WorkRequestException deviceRefused(String call, long r, int ok, int k) {
        int errno = (int) r;
        if (ok != WorkRequestException.INDEX_UNKNOWN) {
            return new WorkRequestException(call + " on QP " + qpNum + " refused it with errno " + errno, ok, null);
        }
        state = QpState.ERR;
        int rc = JwarpNative.qpToError(qpPtr);
        return new WorkRequestException(call + " on QP " + qpNum + " failed with errno " + errno
                + " without naming the refused WR (bad_wr outside the chain): any of the " + k
                + " WRs may have been posted; the QP " + (rc == 0 ? "was moved to ERR, so those complete as flushed"
                : "is unusable (moving it to ERR failed with errno " + rc + ")"), WorkRequestException.INDEX_UNKNOWN,
                null);
    }

    private static WcOpcode wcOpcodeOf(SendOpcode op) {
        switch (op) {
            case RDMA_WRITE: return WcOpcode.RDMA_WRITE;
            case RDMA_READ: return WcOpcode.RDMA_READ;
            default: return WcOpcode.SEND;
        }
    }

    /** Whether WRs of either queue still await a completion (flushed ones arrive after close). */
    boolean hasOutstanding() {
        if (single) {
            return sq.outstanding() > 0 || rq.outstanding() > 0;
        }
        synchronized (this) {
            return sq.outstanding() > 0 || rq.outstanding() > 0;
        }
    }

    /**
     * A successful completion of this QP: its device wr_id (a ring token) becomes the caller's
     * wrId. A send completion retires its WR and every older unsignalled one (RFC 5040 §5.5).
     * Returns false for a token this QP does not know (the wrId is then left as the device's).
     */
    boolean completed(WorkCompletion wc, boolean send) {
        if (single) {
            boolean entered = owner.enter();
            try {
                return completedNow(wc, send);
            } finally {
                owner.leave(entered);
            }
        }
        synchronized (this) {
            return completedNow(wc, send);
        }
    }

    private boolean completedNow(WorkCompletion wc, boolean send) {
        DisniSrq s = srq;
        if (!send && s != null) {
            return s.completed(wc);
        }
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
    boolean completedOnError(WorkCompletion wc) {
        if (single) {
            boolean entered = owner.enter();
            try {
                return completedOnErrorNow(wc);
            } finally {
                owner.leave(entered);
            }
        }
        synchronized (this) {
            return completedOnErrorNow(wc);
        }
    }

    private boolean completedOnErrorNow(WorkCompletion wc) {
        DisniSrq s = srq;
        if (s != null && s.owns(wc.wrId)) {
            return s.completed(wc);
        }
        WrRing ring = sq.owns(wc.wrId) ? sq : rq;
        if (!ring.retireThrough(wc.wrId)) {
            return false;
        }
        wc.wrId = ring.retiredWrId();
        wc.opcode = ring.retiredOp();
        return true;
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
        WorkRequestException refused = null;
        int k = 0;
        for (RecvRequest wr = first; wr != null; wr = wr.next, k++) {
            refused = writeRecv(wr.wrId, wr.sgl, null, 0, 0, k);
            if (refused != null) {
                break;
            }
        }
        if (k > 0) {
            long r = postChain(false, k);
            int ok = WrRing.postedOf(r, k);
            int keep = ok == WorkRequestException.INDEX_UNKNOWN ? k : ok;
            int i = 0;
            for (RecvRequest wr = first; i < keep; wr = wr.next, i++) {
                rq.posted(wr.wrId, WcOpcode.RECV);
            }
            if (r != 0) {
                throw deviceRefused("ibv_post_recv", r, ok, k);
            }
        }
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
        WorkRequestException refused = writeRecv(wrId, null, mr, offset, length, 0);
        if (refused != null) {
            throw refused;
        }
        long r = postChain(false, 1);
        int ok = WrRing.postedOf(r, 1);
        if (ok != 0) {
            rq.posted(wrId, WcOpcode.RECV); // posted, or possibly posted (then flushed below)
        }
        if (r != 0) {
            throw deviceRefused("ibv_post_recv", r, ok, 1);
        }
    }

    /**
     * Writes receive WR k (from {@code sgl}, or the single buffer when sgl is null), or returns why
     * not. When the slot holds one SGE at the same address with the same lkey already, only wr_id
     * and the SGE's length are written.
     */
    private WorkRequestException writeRecv(long wrId, ScatterGatherList sgl, MemoryRegion one, long oneOff, int oneLen,
            int k) {
        WorkRequestException refused = WorkRequestChecks.recv(checks, sgl, one, oneOff, oneLen, k);
        int j = sgl == null ? (oneLen != 0 ? 0 : -1) : singleEntry(sgl);
        if (refused != null) {
            return refused;
        }
        int w = k * RECV_WR_SIZE;
        int at = recvSge(k, 0);
        if (j >= 0 && recvWr.getInt(w + WR_NUM_SGE) == 1
                && sameSge(recvWr, at, sgl == null ? one : sgl.region(j), sgl == null ? oneOff : sgl.offset(j))) {
            recvWr.putInt(at + SGE_LENGTH, sgl == null ? oneLen : sgl.length(j));
        } else {
            recvWr.putInt(w + WR_NUM_SGE, putRecvSges(recvWr, at, sgl, one, oneOff, oneLen));
        }
        recvWr.putLong(w, rq.tokenAhead(k)); // the caller's wrId stays in the ring slot
        return null;
    }

    /**
     * Writes the non-empty SGEs of one receive WR (from {@code sgl}, or the single buffer when sgl is
     * null) as ibv_sge entries from {@code firstSge} on; returns how many it wrote. Shared with the SRQ.
     */
    static int putRecvSges(ByteBuffer ring, int firstSge, ScatterGatherList sgl, MemoryRegion one, long oneOff,
            int oneLen) {
        int n = sgl != null ? sgl.count() : (one == null && oneLen == 0 ? 0 : 1);
        int written = 0;
        for (int j = 0; j < n; j++) {
            int len = sgl != null ? sgl.length(j) : oneLen;
            if (len > 0) {
                MemoryRegion mr = sgl != null ? sgl.region(j) : one;
                int at = firstSge + written++ * SGE_SIZE;
                ring.putLong(at + SGE_ADDR, mr.address() + (sgl != null ? sgl.offset(j) : oneOff));
                ring.putInt(at + SGE_LENGTH, len);
                ring.putInt(at + SGE_LKEY, mr.lkey());
            }
        }
        return written;
    }

    IbvQP ibvQp() {
        return qp;
    }
}
