package org.jwarp.soft.verbs;

import java.nio.ByteBuffer;

import org.jwarp.provider.WorkRequestChecks;
import org.jwarp.rdmap.RdmapOpcode;
import org.jwarp.rdmap.SendRing;
import org.jwarp.rdmap.SendWork;
import org.jwarp.soft.tx.TxGather;
import org.jwarp.verbs.SendOpcode;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkRequestException;

/**
 * The send queue of a {@link SoftQueuePair} (RFC 5040 §5 "Work Queues", siw_qp's SQ): a fixed ring
 * of preallocated slots, struct-of-arrays, the one place a send WR is checked
 * ({@link WorkRequestChecks#send}) and the one count of issued RDMA Reads against the ORD
 * (RFC 6581 §9.1, RFC 5040 §6.5). Slots move FREE → POSTED (application thread, at post) →
 * ISSUED (available to the wire engine, {@link #issue}, which takes a copy of the WR's fields
 * through {@link SendRing#take}) → DONE → completions in posting order
 * (ibv RC ordering). Nothing is allocated per WR; an inline WR's payload is copied into its
 * slot's preallocated inline buffer at post time.
 *
 * <p>Guarded by the QP lock ({@link SoftQueuePair#lock}) throughout.
 */
final class SoftSendQueue implements SendRing {
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
    /** WRs the engine has taken: [done, taken) with it, [taken, issued) available to it. I/O lock. */
    long taken;
    /** The stream's zero-copy transmit, which holds a Send's or Write's completion until its bytes left. */
    TxGather gather;
    /** RDMA Reads issued to the engine and not yet completed: the QP's one ORD count (at most {@link #ord}). */
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
        WorkRequestException refused = WorkRequestChecks.send(qp.checks, wr, k);
        if (refused != null) {
            return refused;
        }
        int n = wr.sgl.count();
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
     * Makes posted WRs available to the engine in order, stopping at a fenced WR while an earlier
     * Read is outstanding (IBV_SEND_FENCE) and at a Read while ORD Reads are outstanding (RFC 6581
     * §9.1; siw's ORQ fence): everything posted after it waits behind it, so the RFC 5040 §5.5
     * order on the wire is the posting order. A Read Response resumes it. The engine takes each WR's
     * fields ({@link SendRing#take}), never its payload. QP lock held, on the thread that drives the engine.
     */
    void issue() {
        while (issued < posted) {
            long seq = issued;
            int i = (int) (seq % wrId.length);
            if (fence[i] && readBefore(seq)) {
                break;
            }
            if (op[i] == SendOpcode.RDMA_READ) {
                if (readsOutstanding >= ord) {
                    break;
                }
                readsOutstanding++;
            }
            state[i] = ISSUED;
            issued++;
        }
    }

    // ---------------------------------------------------------------- SendRing: the engine's view (I/O lock held)

    private int slot(long seq) {
        return (int) (seq % wrId.length);
    }

    @Override
    public int nextKind() {
        if (taken >= issued) {
            return -1;
        }
        return switch (op[slot(taken)]) {
            case SEND, SEND_WITH_INVALIDATE -> SendRing.SEND;
            case RDMA_WRITE -> SendRing.WRITE;
            case RDMA_READ -> SendRing.READ;
        };
    }

    /** Copies WR {@code taken}'s fields into the engine's {@link SendWork}: its wire opcode, STags and gather list. */
    @Override
    public long take(SendWork into) {
        long seq = taken;
        int i = slot(seq);
        SendOpcode o = op[i];
        int opcode = switch (o) {
            case SEND -> solicited[i] ? RdmapOpcode.SEND_SE : RdmapOpcode.SEND;
            case SEND_WITH_INVALIDATE -> solicited[i] ? RdmapOpcode.SEND_SE_INVALIDATE : RdmapOpcode.SEND_INVALIDATE;
            case RDMA_WRITE -> RdmapOpcode.WRITE;
            case RDMA_READ -> RdmapOpcode.READ_REQUEST;
        };
        int remoteStag = switch (o) {
            case SEND -> 0;
            case SEND_WITH_INVALIDATE -> inv[i];
            default -> rkey[i];
        };
        int base = i * maxSge;
        if (o == SendOpcode.RDMA_READ) {
            SoftMemoryRegion mr = sgCount[i] == 0 ? null : sgMr[base];
            into.set(SendRing.READ, opcode, len[i], remoteStag, raddr[i], mr == null ? 0 : mr.lkey(),
                    mr == null ? 0 : mr.address() + sgOff[base]);
        } else {
            into.set(o == SendOpcode.RDMA_WRITE ? SendRing.WRITE : SendRing.SEND, opcode, len[i], remoteStag, raddr[i],
                    0, 0);
            if (inline[i]) {
                into.piece(inlineBuf, i * maxInline, len[i]);
            } else {
                for (int j = 0; j < sgCount[i]; j++) {
                    SoftMemoryRegion mr = sgMr[base + j];
                    into.piece(mr == null ? EMPTY : mr.raw(), mr == null ? 0 : sgOff[base + j], sgLen[base + j]);
                }
            }
        }
        taken = seq + 1;
        return seq;
    }

    @Override
    public boolean sourceValid(long seq) {
        int i = slot(seq);
        if (inline[i]) {
            return true; // copied at post time
        }
        int base = i * maxSge;
        for (int j = 0; j < sgCount[i]; j++) {
            SoftMemoryRegion mr = sgMr[base + j];
            if (mr != null && !mr.isValid()) {
                return false;
            }
        }
        return true;
    }

    /**
     * The engine finished WR {@code seq} (its last FPDU staged, or a Read's response placed).
     * Zero-copy: a Send's or Write's payload may still be referenced by staged FPDUs, so it
     * completes once the socket accepted its last byte ({@link #completeAccepted}); a Read, or
     * anything reported while nothing is staged, has left already and completes now.
     */
    @Override
    public void done(long seq) {
        int slot = slot(seq);
        if (op[slot] == SendOpcode.RDMA_READ || !gather.pending()) {
            synchronized (qp.lock) {
                finishIssued(slot);
            }
        } else {
            gather.completeAt(slot, gather.queuedEnd());
        }
    }

    @Override
    public int outstanding() {
        return (int) (taken - done);
    }

    /** The QP flushes this ring itself when its stream ends ({@link #flush}). */
    @Override
    public void abandon() {
        taken = issued;
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
                        qp.qpNum, qp.context, 0, 0, false, false);
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
                if (op[i] == SendOpcode.RDMA_READ && state[i] == ISSUED) {
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
