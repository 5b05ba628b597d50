package org.jwarp.soft;

import java.nio.ByteBuffer;

import org.jwarp.rdmap.RdmapEndpoint;
import org.jwarp.rdmap.RdmapOpcode;
import org.jwarp.verbs.SendOpcode;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkRequestException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The send queue of a {@link SoftQueuePair} (RFC 5040 §5 "Work Queues", siw_qp's SQ): a fixed ring
 * of preallocated slots, struct-of-arrays, the one place a send WR is checked
 * ({@link WorkRequestChecks#send}) and the one count of admitted RDMA Reads against the ORD
 * (RFC 6581 §9.1, RFC 5040 §6.5). Slots move FREE → POSTED (application thread, at post) →
 * ISSUED (handed to the wire engine, {@link #issue}) → DONE → completions in posting order
 * (ibv RC ordering). Nothing is allocated per WR; an inline WR's payload is copied into its
 * slot's preallocated inline buffer at post time.
 *
 * <p>Guarded by the QP lock ({@link SoftQueuePair#lock}) throughout.
 */
final class SoftSendQueue {
    private static final Logger LOG = LoggerFactory.getLogger(SoftSendQueue.class);
    static final byte FREE = 0;
    static final byte POSTED = 1;
    static final byte ISSUED = 2;
    static final byte DONE = 3;
    private static final ByteBuffer EMPTY = ByteBuffer.allocateDirect(0);

    private final SoftQueuePair qp;
    // [freed, done) completed but held (unsignalled, awaiting a later signalled completion),
    // [done, issued) issued, [issued, posted) waiting.
    final long[] wrId;
    final SendOpcode[] op;
    /** Slot i's gather list at {@code i * maxSge}, {@code sgCount[i]} entries. */
    final int maxSge;
    final SoftMemoryRegion[] sgMr;
    final int[] sgOff;
    final int[] sgLen;
    final int[] sgCount;
    final int[] len;
    final boolean[] inline;
    final boolean[] fence;
    final long[] raddr;
    final int[] rkey;
    final int[] inv;
    final boolean[] signaled;
    final boolean[] solicited;
    final byte[] state;
    final WcStatus[] status;
    /** Inline payloads, slot i's at {@code i * maxInline}: copied at post time. */
    final int maxInline;
    final ByteBuffer inlineBuf;
    long posted;
    long issued;
    long done;
    long freed;
    /** RDMA Reads admitted and not yet completed: the QP's one ORD count. */
    int readsOutstanding;
    /** The negotiated ORD (device-capped); set when the stream attaches. */
    int ord;

    SoftSendQueue(SoftQueuePair qp, int n, int maxSge, int maxInline) {
        this.qp = qp;
        this.maxSge = maxSge;
        this.maxInline = maxInline;
        wrId = new long[n];
        op = new SendOpcode[n];
        sgMr = new SoftMemoryRegion[n * maxSge];
        sgOff = new int[n * maxSge];
        sgLen = new int[n * maxSge];
        sgCount = new int[n];
        len = new int[n];
        inline = new boolean[n];
        fence = new boolean[n];
        raddr = new long[n];
        rkey = new int[n];
        inv = new int[n];
        signaled = new boolean[n];
        solicited = new boolean[n];
        state = new byte[n];
        status = new WcStatus[n];
        inlineBuf = ByteBuffer.allocateDirect(n * maxInline);
    }

    int size() {
        return wrId.length;
    }

    /** Checks one send WR and puts it into the ring; returns why it was refused, or null. */
    WorkRequestException enqueue(SendRequest wr, int k) {
        WorkRequestException refused = WorkRequestChecks.send(qp, wr, k);
        if (refused != null) {
            return refused;
        }
        int n = wr.sgl.count();
        if (wr.opcode == SendOpcode.RDMA_READ) {
            readsOutstanding++;
        }
        int i = (int) (posted % wrId.length);
        wrId[i] = wr.wrId;
        op[i] = wr.opcode;
        len[i] = (int) wr.length();
        inline[i] = wr.inline;
        int base = i * maxSge;
        if (wr.inline) {
            int at = i * maxInline;
            for (int j = 0; j < n; j++) {
                SoftMemoryRegion m = (SoftMemoryRegion) wr.sgl.region(j);
                int l = wr.sgl.length(j);
                if (l > 0) {
                    inlineBuf.put(at, m.raw(), (int) wr.sgl.offset(j), l);
                    at += l;
                }
            }
            sgCount[i] = 0;
        } else {
            for (int j = 0; j < n; j++) {
                sgMr[base + j] = (SoftMemoryRegion) wr.sgl.region(j);
                sgOff[base + j] = (int) wr.sgl.offset(j);
                sgLen[base + j] = wr.sgl.length(j);
            }
            sgCount[i] = n;
        }
        fence[i] = wr.fence;
        raddr[i] = wr.remoteAddress;
        rkey[i] = wr.rkey;
        inv[i] = wr.invalidateRkey;
        signaled[i] = wr.signaled;
        solicited[i] = wr.solicited;
        state[i] = POSTED;
        status[i] = WcStatus.SUCCESS;
        posted++;
        return null;
    }

    /**
     * Hands posted WRs to the engine in order while it has room, stopping at a fenced WR while an
     * earlier Read is outstanding (IBV_SEND_FENCE; a Read Response resumes it). The engine's wrIds
     * are the ring sequences. {@code sgBuf/sgOff/sgLen} are scratch (the engine copies entries).
     */
    void issue(RdmapEndpoint ep, ByteBuffer[] sgBuf, int[] sgOffs, int[] sgLens) {
        int depth = wrId.length;
        while (issued < posted && ep.sqOutstanding() < depth) {
            long seq = issued;
            int i = (int) (seq % depth);
            if (fence[i] && readBefore(seq)) {
                break;
            }
            state[i] = ISSUED;
            issued++;
            int n = gatherList(i, sgBuf, sgOffs, sgLens);
            int base = i * maxSge;
            try {
                switch (op[i]) {
                    case SEND -> ep.postSend(seq, solicited[i] ? RdmapOpcode.SEND_SE : RdmapOpcode.SEND, sgBuf, sgOffs,
                            sgLens, n, 0, true);
                    case SEND_WITH_INVALIDATE -> ep.postSend(seq, solicited[i] ? RdmapOpcode.SEND_SE_INVALIDATE
                            : RdmapOpcode.SEND_INVALIDATE, sgBuf, sgOffs, sgLens, n, inv[i], true);
                    case RDMA_WRITE -> ep.postWrite(seq, sgBuf, sgOffs, sgLens, n, rkey[i], raddr[i], true);
                    case RDMA_READ -> {
                        SoftMemoryRegion mr = sgCount[i] == 0 ? null : sgMr[base];
                        ep.postRead(seq, mr == null ? 0 : mr.lkey(), mr == null ? 0 : mr.address() + sgOff[base],
                                len[i], rkey[i], raddr[i], true);
                    }
                }
            } catch (IllegalArgumentException | IllegalStateException e) {
                LOG.debug("QP {} WR refused by the engine: {}", qp.qpNum(), e.getMessage());
                finish(i, e instanceof IllegalArgumentException ? WcStatus.LOC_PROT_ERR : WcStatus.LOC_QP_OP_ERR);
            }
            for (int j = 0; j < n; j++) {
                sgBuf[j] = null;
            }
        }
    }

    /** Fills the scratch list with slot i's gather list (its inline copy for an inline WR); returns the entry count. */
    private int gatherList(int i, ByteBuffer[] sgBuf, int[] sgOffs, int[] sgLens) {
        if (inline[i]) {
            sgBuf[0] = inlineBuf;
            sgOffs[0] = i * maxInline;
            sgLens[0] = len[i];
            return 1;
        }
        int n = sgCount[i];
        int base = i * maxSge;
        for (int j = 0; j < n; j++) {
            SoftMemoryRegion mr = sgMr[base + j];
            sgBuf[j] = mr == null ? EMPTY : mr.raw();
            sgOffs[j] = mr == null ? 0 : sgOff[base + j];
            sgLens[j] = sgLen[base + j];
        }
        return n;
    }

    /** Whether an RDMA Read posted before {@code seq} is still outstanding. */
    private boolean readBefore(long seq) {
        int depth = wrId.length;
        for (long q = done; q < seq; q++) {
            int j = (int) (q % depth);
            if (op[j] == SendOpcode.RDMA_READ && state[j] != DONE) {
                return true;
            }
        }
        return false;
    }

    /** Marks the slot done with {@code st} and emits every completion now in order. */
    void finish(int slot, WcStatus st) {
        if (op[slot] == SendOpcode.RDMA_READ) {
            readsOutstanding--;
        }
        state[slot] = DONE;
        status[slot] = st;
        drain();
    }

    /** An issued WR's bytes all left: it completes successfully (a flushed one stays flushed). */
    void finishIssued(int slot) {
        if (state[slot] == ISSUED) {
            finish(slot, WcStatus.SUCCESS);
        }
    }

    /**
     * The engine reports WR {@code seq} done (its last FPDU staged, or a Read's response placed).
     * Zero-copy: a Send's or Write's payload may still be referenced by staged FPDUs, so it
     * completes once the socket accepted its last byte ({@link #completeAccepted}); a Read, or
     * anything reported while nothing is staged, has left already and completes now. I/O lock held.
     */
    void staged(TxGather g, long seq, boolean read) {
        int slot = (int) (seq % wrId.length);
        if (read || !g.pending()) {
            synchronized (qp.lock) {
                finishIssued(slot);
            }
        } else {
            g.completeAt(slot, g.queuedEnd());
        }
    }

    /** Completes the WRs whose bytes the socket has accepted by now, in order. I/O lock held. */
    void completeAccepted(TxGather g) {
        int slot = g.acceptedSlot();
        if (slot < 0) {
            return;
        }
        synchronized (qp.lock) {
            for (; slot >= 0; slot = g.acceptedSlot()) {
                finishIssued(slot);
            }
        }
    }

    /** The oldest issued WR, the one a peer's TERM refers to, completes with {@code st}. */
    void finishOldest(WcStatus st) {
        if (done < issued) {
            finish((int) (done % wrId.length), st);
        }
    }

    private void drain() {
        while (done < issued) {
            int i = (int) (done % wrId.length);
            if (state[i] != DONE) {
                return;
            }
            WcStatus st = status[i];
            boolean sig = signaled[i] || st != WcStatus.SUCCESS;
            if (sig) {
                qp.sendCq().complete(wrId[i], st, SoftQueuePair.wcOpcode(op[i]), st == WcStatus.SUCCESS ? len[i] : 0,
                        qp.qpNum, 0, 0, false, false);
            }
            state[i] = FREE;
            int base = i * maxSge;
            for (int j = 0; j < sgCount[i]; j++) {
                sgMr[base + j] = null;
            }
            done++;
            if (sig) {
                freed = done; // this and every older unsignalled slot are free again
            }
        }
    }

    /** Every WR not yet completed completes with WR_FLUSH_ERR, in order (RFC 5040 §6.2.2). */
    void flush() {
        for (long q = done; q < posted; q++) {
            int i = (int) (q % wrId.length);
            if (state[i] != DONE) {
                if (op[i] == SendOpcode.RDMA_READ) {
                    readsOutstanding--;
                }
                state[i] = DONE;
                status[i] = WcStatus.WR_FLUSH_ERR;
            }
        }
        issued = posted;
        drain();
        freed = done;
    }

    @Override
    public String toString() {
        return "sq posted/issued/done/freed=" + posted + "/" + issued + "/" + done + "/" + freed + ", reads="
                + readsOutstanding;
    }
}
