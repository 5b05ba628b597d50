package org.jwarp.rdmap;

import java.nio.ByteBuffer;

import org.jwarp.memory.StagAccess;
import org.jwarp.memory.StagDomain;
import org.jwarp.memory.StagTable;

/**
 * The send queue of an {@link RdmapEndpoint} used without a provider's queue pair (RFC 5040 §5:
 * the ULP posts Sends, Writes and Reads; they go out in posting order and complete in posting
 * order): a ring of preallocated entries, struct-of-arrays, nothing allocated per WR. The ORD
 * (RFC 5040 §6.5) is counted here, once: a Read waits at the head of the ring while ORD Reads are
 * out, and goes once a Read Response completes one. Completions reach the endpoint's listener.
 */
final class ArraySendRing implements SendRing {
    private final RdmapListener listener;
    private final int depth;
    private final int mask;
    private final int ord;
    private final int maxSge;
    private final int[] kind;
    private final int[] opcode;
    private final long[] wrId;
    private final ByteBuffer[] sgBuf;
    private final int[] sgOff;
    private final int[] sgLen;
    private final int[] sgCount;
    private final int[] len;
    private final int[] stag;
    private final long[] to;
    private final int[] localStag;
    private final long[] localTo;
    private final boolean[] signaled;
    private final boolean[] finished;
    /** [head, taken) with the engine, [taken, tail) waiting. */
    private long head;
    private long taken;
    private long tail;
    /** Reads taken and not done: the ORD count. */
    private int readsOut;

    ArraySendRing(RdmapListener listener, int depth, int maxSge, int ord) {
        this.listener = listener;
        this.depth = depth;
        this.ord = ord;
        this.maxSge = maxSge;
        int cap = Integer.highestOneBit(Math.max(1, depth - 1)) << 1;
        mask = cap - 1;
        kind = new int[cap];
        opcode = new int[cap];
        wrId = new long[cap];
        sgBuf = new ByteBuffer[Math.multiplyExact(cap, maxSge)];
        sgOff = new int[sgBuf.length];
        sgLen = new int[sgBuf.length];
        sgCount = new int[cap];
        len = new int[cap];
        stag = new int[cap];
        to = new long[cap];
        localStag = new int[cap];
        localTo = new long[cap];
        signaled = new boolean[cap];
        finished = new boolean[cap];
    }

    /** Reserves the next entry; throws when the ring is full. */
    private int reserve() {
        if (tail - head == depth) {
            throw new IllegalStateException("send queue full (" + depth + ")");
        }
        return (int) (tail++ & mask);
    }

    private void fill(int s, int k, int op, long id, int length, int remoteStag, long remoteTo, int lStag, long lTo,
            boolean sig) {
        kind[s] = k;
        opcode[s] = op;
        wrId[s] = id;
        len[s] = length;
        stag[s] = remoteStag;
        to[s] = remoteTo;
        localStag[s] = lStag;
        localTo[s] = lTo;
        signaled[s] = sig;
        finished[s] = false;
        sgCount[s] = 0;
    }

    private void piece(int s, int i, ByteBuffer buf, int off, int length) {
        int at = s * maxSge + i;
        sgBuf[at] = buf;
        sgOff[at] = off;
        sgLen[at] = length;
        sgCount[s] = i + 1;
    }

    void postSend(long id, int op, ByteBuffer[] buffers, int[] offsets, int[] lengths, int n, int invalidateStag,
            boolean sig) {
        requireSend(op);
        int length = checkGather(buffers, offsets, lengths, n);
        int s = reserve();
        fill(s, SEND, op, id, length, RdmapOpcode.isInvalidate(op) ? invalidateStag : 0, 0, 0, 0, sig);
        for (int i = 0; i < n; i++) {
            piece(s, i, buffers[i], offsets[i], lengths[i]);
        }
    }

    void postWrite(long id, ByteBuffer[] buffers, int[] offsets, int[] lengths, int n, int remoteStag, long remoteTo,
            boolean sig) {
        int length = checkGather(buffers, offsets, lengths, n);
        int s = reserve();
        fill(s, WRITE, RdmapOpcode.WRITE, id, length, remoteStag, remoteTo, 0, 0, sig);
        for (int i = 0; i < n; i++) {
            piece(s, i, buffers[i], offsets[i], lengths[i]);
        }
    }

    void postSend(long id, int op, ByteBuffer src, int offset, int length, int invalidateStag, boolean sig) {
        requireSend(op);
        checkRange(src, offset, length);
        int s = reserve();
        fill(s, SEND, op, id, length, RdmapOpcode.isInvalidate(op) ? invalidateStag : 0, 0, 0, 0, sig);
        piece(s, 0, src, offset, length);
    }

    void postWrite(long id, ByteBuffer src, int offset, int length, int remoteStag, long remoteTo, boolean sig) {
        checkRange(src, offset, length);
        int s = reserve();
        fill(s, WRITE, RdmapOpcode.WRITE, id, length, remoteStag, remoteTo, 0, 0, sig);
        piece(s, 0, src, offset, length);
    }

    /** An RDMA Read's arguments, before posting (RFC 5040 §5.2): the sink must be usable for local writes. */
    void checkRead(int localStag, long localTo, int length, int ord, StagTable stags, StagDomain pd) {
        if (length < 0) {
            throw new IllegalArgumentException("RDMA Read length must not be negative: " + length);
        }
        if (ord == 0) {
            throw new IllegalStateException("ORD is 0: no RDMA Read may be issued (RFC 5040 §5.2)");
        }
        if (length > 0) {
            int c = stags.check(localStag, pd, localTo, length, StagAccess.LOCAL_WRITE);
            if (c != StagTable.OK) {
                throw new IllegalArgumentException("RDMA Read sink STag 0x" + Integer.toHexString(localStag)
                        + " not usable for " + length + " bytes at TO 0x" + Long.toHexString(localTo) + " (check "
                        + c + ", RFC 5040 §5.2)");
            }
        }
    }

    /** A Read whose sink {@link #checkRead} accepted already. */
    void postRead(long id, int lStag, long lTo, int length, int remoteStag, long remoteTo, boolean sig) {
        int s = reserve();
        fill(s, READ, RdmapOpcode.READ_REQUEST, id, length, remoteStag, remoteTo, lStag, lTo, sig);
    }

    private static void requireSend(int opcode) {
        if (!RdmapOpcode.isSend(opcode)) {
            throw new IllegalArgumentException("not a Send opcode: " + opcode + " (RFC 5040 §4.3)");
        }
    }

    private int checkGather(ByteBuffer[] buffers, int[] offsets, int[] lengths, int n) {
        if (n < 0 || n > maxSge) {
            throw new IllegalArgumentException("gather list of " + n + " pieces outside 0.." + maxSge);
        }
        long total = 0;
        for (int i = 0; i < n; i++) {
            checkRange(buffers[i], offsets[i], lengths[i]);
            total += lengths[i];
        }
        if (total > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("message of " + total + " bytes exceeds 2^31-1");
        }
        return (int) total;
    }

    private static void checkRange(ByteBuffer src, int offset, int length) {
        if (offset < 0 || length < 0 || offset > src.capacity() - length) {
            throw new IllegalArgumentException("source range [" + offset + ", +" + length + ") outside buffer of "
                    + src.capacity());
        }
    }

    private int slot(long seq) {
        return (int) (seq & mask);
    }

    @Override
    public int nextKind() {
        if (taken == tail) {
            return -1;
        }
        int k = kind[slot(taken)];
        return k == READ && readsOut >= ord ? -1 : k;
    }

    @Override
    public long take(SendWork into) {
        long seq = taken;
        int s = slot(seq);
        if (kind[s] == READ) {
            readsOut++;
        }
        into.set(kind[s], opcode[s], len[s], stag[s], to[s], localStag[s], localTo[s]);
        int base = s * maxSge;
        for (int i = 0; i < sgCount[s]; i++) {
            into.piece(sgBuf[base + i], sgOff[base + i], sgLen[base + i]);
        }
        taken = seq + 1;
        return seq;
    }

    @Override
    public boolean sourceValid(long seq) {
        return true; // plain buffers: the caller keeps them until the completion
    }

    @Override
    public void done(long seq) {
        int s = slot(seq);
        if (kind[s] == READ) {
            readsOut--;
        }
        finished[s] = true;
        while (head != taken && finished[slot(head)]) {
            int h = slot(head);
            clear(h);
            head++;
            if (signaled[h]) {
                listener.onSendCompletion(wrId[h], opcode[h], len[h]);
            }
        }
    }

    private void clear(int s) {
        int base = s * maxSge;
        for (int i = 0; i < sgCount[s]; i++) {
            sgBuf[base + i] = null;
        }
        sgCount[s] = 0;
    }

    @Override
    public int outstanding() {
        return (int) (tail - head);
    }

    /** Reports every WR not yet completed through {@link RdmapListener#onFlushed} and empties the ring. */
    @Override
    public void abandon() {
        for (long q = head; q != tail; q++) {
            listener.onFlushed(wrId[slot(q)], false);
            clear(slot(q));
        }
        head = taken = tail;
        readsOut = 0;
    }
}
