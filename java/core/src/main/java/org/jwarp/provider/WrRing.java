package org.jwarp.provider;

import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WorkRequestException;

/**
 * The outstanding work requests of one work queue (a send or a receive queue), in posting order,
 * retired by ring position rather than by the caller's wr_id. A queue pair's work queue completes
 * in order (RFC 5040 §5.5: completions are reported in the order the WRs were posted), and a
 * signalled completion also retires every older unsignalled WR, which never completes on its own.
 *
 * <p>The device never sees the caller's wr_id: each posted WR carries a token (a queue tag in the
 * two top bits, then {@value #GEN_BITS} bits of the queue pair's generation, so completions of a
 * closed QP whose number was reused stay apart, then the low {@value #SEQ_BITS} bits of the WR's
 * sequence number, compared modulo 2^{@value #SEQ_BITS}) and the caller's wr_id and opcode stay in
 * the slot. A completion's token names exactly one slot, so repeated caller wr_ids and unsignalled
 * WRs cannot leak slots, and a completion (even an error one, whose opcode the device leaves
 * undefined) is told apart by queue and mapped back to the caller's wr_id and posted opcode.
 *
 * <p>One exception to completion in order: kernel siw completes a Send once it is transmitted and
 * a signalled RDMA Read once its response arrives, so a later Send may complete while earlier
 * Reads still wait for their responses. A completion therefore retires the older WRs except
 * signalled Reads still outstanding; those keep their slots and complete on their own, with
 * their own wr_id, and the ring's head moves past a slot only once everything before it is done.
 *
 * <p>Preallocated arrays, no allocation per post or completion. Not thread-safe: the owning QP
 * guards it. Shared by the providers that post to a device (DiSNI, ffm).
 */
public final class WrRing {
    /** Tag of send-queue tokens. */
    public static final long SEND_TAG = 0b10L << 62;
    /** Tag of receive-queue tokens. */
    public static final long RECV_TAG = 0b01L << 62;
    public static final long TAG_MASK = 0b11L << 62;
    public static final int GEN_BITS = 20;
    public static final int SEQ_BITS = 62 - GEN_BITS;
    public static final long SEQ_MASK = (1L << SEQ_BITS) - 1;
    public static final int GEN_MASK = (1 << GEN_BITS) - 1;
    private static final WcOpcode[] OPS = WcOpcode.values();

    private final long tag;
    /** Tag and generation: the bits every token of this ring shares. */
    private final long prefix;
    private final long[] wrIds;
    private final byte[] ops;
    /** Per slot: the WR completes on its own (signalled). */
    private final boolean[] signalled;
    /** Per slot: retired while an older signalled Read still waits (head has not passed it). */
    private final boolean[] done;
    /** Sequence number of the oldest outstanding WR. */
    private long head;
    /** Sequence number the next posted WR gets. */
    private long tail;
    private int reads;

    /** What the last successful {@link #retireThrough} found in the completing slot. */
    private long retiredWrId;
    private WcOpcode retiredOp;

    public WrRing(long tag, int capacity) {
        this(tag, capacity, 0);
    }

    /** A ring whose tokens carry the low {@value #GEN_BITS} bits of {@code generation}. */
    public WrRing(long tag, int capacity, int generation) {
        this(tag, capacity, generation, 0);
    }

    /** Starting at sequence number {@code firstSeq} (tests exercise the token wrap). */
    public WrRing(long tag, int capacity, int generation, long firstSeq) {
        if (tag != SEND_TAG && tag != RECV_TAG) {
            throw new IllegalArgumentException("tag " + Long.toHexString(tag));
        }
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity " + capacity + " < 1");
        }
        this.tag = tag;
        this.prefix = tag | ((long) (generation & GEN_MASK) << SEQ_BITS);
        this.wrIds = new long[capacity];
        this.ops = new byte[capacity];
        this.signalled = new boolean[capacity];
        this.done = new boolean[capacity];
        this.head = firstSeq;
        this.tail = firstSeq;
    }

    public int capacity() {
        return wrIds.length;
    }

    /** WRs posted and not yet retired. */
    public int outstanding() {
        return (int) (tail - head);
    }

    public boolean full() {
        return outstanding() == wrIds.length;
    }

    /** Outstanding RDMA Reads (RFC 6581 §9.1: bounded by the negotiated ORD). */
    public int readsOutstanding() {
        return reads;
    }

    /** The token the next posted WR carries as its device wr_id. */
    public long nextToken() {
        return prefix | (tail & SEQ_MASK);
    }

    /** The token of the WR {@code ahead} places behind the next one (a chain being prepared). */
    public long tokenAhead(int ahead) {
        return prefix | ((tail + ahead) & SEQ_MASK);
    }

    /** Whether {@code token} has this queue's tag (send or receive), whatever its generation. */
    public boolean owns(long token) {
        return (token & TAG_MASK) == tag;
    }

    /**
     * Records the WR just posted with {@link #nextToken()}; call only after the device accepted it.
     *
     * @throws IllegalStateException when the ring is full
     */
    public void posted(long wrId, WcOpcode op) {
        posted(wrId, op, true);
    }

    /** As {@link #posted(long, WcOpcode)}, saying whether the WR is signalled. */
    public void posted(long wrId, WcOpcode op, boolean isSignalled) {
        if (full()) {
            throw new IllegalStateException("work queue full (" + wrIds.length + " outstanding)");
        }
        int slot = slot(tail);
        wrIds[slot] = wrId;
        ops[slot] = (byte) op.ordinal();
        signalled[slot] = isSignalled;
        done[slot] = false;
        if (op == WcOpcode.RDMA_READ) {
            reads++;
        }
        tail++;
    }

    /**
     * A completion with {@code token}: its WR and every older outstanding one retire, except
     * signalled RDMA Reads still outstanding (see the class comment). Returns false, changing
     * nothing, for a token that is not this queue's or not outstanding (a stale or foreign
     * completion). On true, {@link #retiredWrId()} and {@link #retiredOp()} describe the
     * completing WR.
     */
    public boolean retireThrough(long token) {
        if ((token & ~SEQ_MASK) != prefix) {
            return false;
        }
        long behind = ((token & SEQ_MASK) - head) & SEQ_MASK; // WRs before it, modulo 2^SEQ_BITS
        if (behind >= tail - head) {
            return false;
        }
        long seq = head + behind;
        int slot = slot(seq);
        if (done[slot]) {
            return false; // completed already
        }
        for (long s = head; s < seq; s++) {
            int older = slot(s);
            if (!done[older] && !(signalled[older] && ops[older] == READ)) {
                retire(older);
            }
        }
        retire(slot);
        retiredWrId = wrIds[slot];
        retiredOp = OPS[ops[slot]];
        while (head < tail && done[slot(head)]) {
            done[slot(head)] = false;
            head++;
        }
        return true;
    }

    private static final int READ = WcOpcode.RDMA_READ.ordinal();

    private void retire(int slot) {
        done[slot] = true;
        if (ops[slot] == READ) {
            reads--;
        }
    }

    public long retiredWrId() {
        return retiredWrId;
    }

    public WcOpcode retiredOp() {
        return retiredOp;
    }

    /**
     * How many WRs of a chain of {@code k} the device took, from a native post-list result
     * ({@code 0}, or {@code (index of bad_wr << 32) | errno}): {@code k} on success, the index of
     * the refused WR, or {@link WorkRequestException#INDEX_UNKNOWN} when the device did not name one
     * inside the chain.
     */
    public static int postedOf(long result, int k) {
        if (result == 0) {
            return k;
        }
        int index = (int) (result >>> 32);
        return index >= 0 && index < k ? index : WorkRequestException.INDEX_UNKNOWN;
    }

    private int slot(long seq) {
        return (int) Long.remainderUnsigned(seq, wrIds.length);
    }
}
