package org.jwarp.ddp;

import java.nio.ByteBuffer;
import org.jwarp.memory.StagRegion;

/**
 * One untagged buffer queue of a DDP stream, RFC 5041 §3.3 and §5.1 (Untagged Buffer Model): ULP
 * buffers posted in order, the n-th posted buffer receiving MSN {@code first + n}. The MSN of the
 * first message on a queue is 1 (§4.3) and increases by one per message modulo 2^32.
 *
 * <p>A fixed ring of preallocated slots; posting, placement and delivery allocate nothing.
 *
 * <p>Placed coverage (RFC 5041 §5.2 reassembly, §5.4 "delivered only after every segment was
 * placed") is tracked per slot as an in-order high-water mark ({@code inOrder}: bytes
 * {@code [0, inOrder)} are placed) plus at most {@link #maxRanges()} disjoint, non-adjacent byte
 * ranges placed beyond it, preallocated per slot. A segment covering bytes that are already placed
 * (a duplicate of the same MSN/MO range, or an overlap) adds only the bytes not yet covered, so
 * a message completes exactly when every byte {@code [0, total)} has been placed. Over an in-order
 * LLP (MPA over TCP) a conforming Data Source's segments always extend the high-water mark and the
 * range set stays empty.
 */
final class UntaggedQueue {
    /** Result of {@link #slotFor}: no buffer for the next expected MSN (RFC 5041 §7.2 code 2). */
    static final int NO_BUFFER = -1;
    /** Result of {@link #slotFor}: MSN outside the range of posted buffers (RFC 5041 §7.2 code 3). */
    static final int OUT_OF_RANGE = -2;

    final ByteBuffer[] buffers;
    final int[] offsets;
    final int[] capacities;
    final long[] cookies;
    /** Bytes {@code [0, inOrder[s])} of slot s are placed. */
    final int[] inOrder;
    /** Slot s's out-of-order ranges: start at {@code ranges[(s * maxRanges + i) * 2]}, end (exclusive) after it. */
    private final int[] ranges;
    private final int[] rangeCount;
    private final int maxRanges;
    final int[] total;
    final int[] maxEnd;
    final int[] rsvdUlp;
    final int[] rsvdUlp32;
    /** Scatter lists (RFC 5041 §5.3 buffer made of several pieces): slot s's entries at {@code s * maxSge}. */
    private final int maxSge;
    private final ByteBuffer[] sgBuf;
    /** The registered region each piece lies in (null: not fenced), RFC 5041 §8.3.1 (6). */
    private final StagRegion[] sgRegion;
    private final int[] sgOff;
    private final int[] sgLen;
    private final int[] sgCount;
    private int head;
    private int count;
    private int headMsn;

    UntaggedQueue(int depth, int maxRanges) {
        this(depth, 1, maxRanges);
    }

    /**
     * A queue whose next expected MSN is {@code firstMsn} (tests exercise the 2^32 wrap), with room
     * for {@code maxRanges} out-of-order ranges per buffer.
     */
    UntaggedQueue(int depth, int firstMsn, int maxRanges) {
        this(depth, firstMsn, maxRanges, 1);
    }

    /** As above, each buffer made of up to {@code maxSge} pieces. */
    UntaggedQueue(int depth, int firstMsn, int maxRanges, int maxSge) {
        if (maxSge < 1) {
            throw new IllegalArgumentException("maxSge " + maxSge + " < 1");
        }
        this.maxSge = maxSge;
        sgBuf = new ByteBuffer[Math.multiplyExact(depth, maxSge)];
        sgRegion = new StagRegion[sgBuf.length];
        sgOff = new int[sgBuf.length];
        sgLen = new int[sgBuf.length];
        sgCount = new int[depth];
        if (maxRanges < 1) {
            throw new IllegalArgumentException("maxRanges " + maxRanges + " < 1");
        }
        headMsn = firstMsn;
        this.maxRanges = maxRanges;
        inOrder = new int[depth];
        ranges = new int[Math.multiplyExact(Math.multiplyExact(depth, maxRanges), 2)];
        rangeCount = new int[depth];
        buffers = new ByteBuffer[depth];
        offsets = new int[depth];
        capacities = new int[depth];
        cookies = new long[depth];
        total = new int[depth];
        maxEnd = new int[depth];
        rsvdUlp = new int[depth];
        rsvdUlp32 = new int[depth];
    }

    int maxRanges() {
        return maxRanges;
    }

    /** Out-of-order ranges slot {@code s} holds beyond its high-water mark (tests). */
    int rangeCount(int s) {
        return rangeCount[s];
    }

    /**
     * Records bytes {@code [start, end)} of slot {@code s} as placed ({@code start < end}); bytes
     * already covered are not counted again. Returns false, changing nothing, when the bytes
     * would need one more out-of-order range than the slot holds.
     */
    boolean cover(int s, int start, int end) {
        int hw = inOrder[s];
        if (end <= hw) {
            return true; // every byte already placed: a duplicate
        }
        int base = s * maxRanges * 2;
        int n = rangeCount[s];
        if (start <= hw) {
            // Extends the high-water mark; absorb every range it now reaches (adjacent included).
            hw = end;
            int i = 0;
            while (i < n && ranges[base + 2 * i] <= hw) {
                hw = Math.max(hw, ranges[base + 2 * i + 1]);
                i++;
            }
            if (i > 0) {
                System.arraycopy(ranges, base + 2 * i, ranges, base, 2 * (n - i));
                rangeCount[s] = n - i;
            }
            inOrder[s] = hw;
            return true;
        }
        // Beyond the high-water mark: merge with every range it overlaps or touches.
        int i = 0;
        while (i < n && ranges[base + 2 * i + 1] < start) {
            i++;
        }
        int j = i;
        int ns = start;
        int ne = end;
        while (j < n && ranges[base + 2 * j] <= end) {
            ns = Math.min(ns, ranges[base + 2 * j]);
            ne = Math.max(ne, ranges[base + 2 * j + 1]);
            j++;
        }
        int merged = j - i;
        int count = n - merged + 1;
        if (count > maxRanges) {
            return false;
        }
        if (merged == 0) {
            System.arraycopy(ranges, base + 2 * i, ranges, base + 2 * (i + 1), 2 * (n - i));
        } else if (merged > 1) {
            System.arraycopy(ranges, base + 2 * j, ranges, base + 2 * (i + 1), 2 * (n - j));
        }
        ranges[base + 2 * i] = ns;
        ranges[base + 2 * i + 1] = ne;
        rangeCount[s] = count;
        return true;
    }

    int depth() {
        return buffers.length;
    }

    int count() {
        return count;
    }

    int headMsn() {
        return headMsn;
    }

    int head() {
        return head;
    }

    int maxSge() {
        return maxSge;
    }

    void post(ByteBuffer buf, int offset, int capacity, long cookie) {
        post(null, buf, offset, capacity, cookie);
    }

    /** As {@link #post(ByteBuffer, int, int, long)}, the buffer lying in {@code region} (null: unfenced). */
    void post(StagRegion region, ByteBuffer buf, int offset, int capacity, long cookie) {
        int s = reserve();
        sgRegion[s * maxSge] = region;
        sgBuf[s * maxSge] = buf;
        sgOff[s * maxSge] = offset;
        sgLen[s * maxSge] = capacity;
        sgCount[s] = 1;
        fill(s, buf, offset, capacity, cookie);
    }

    /**
     * Posts one buffer made of {@code n} pieces {@code bufs[i][offs[i], +lens[i])}, filled in order;
     * the arrays are copied.
     */
    void post(ByteBuffer[] bufs, int[] offs, int[] lens, int n, long cookie) {
        post(null, bufs, offs, lens, n, cookie);
    }

    /** As above, piece i lying in {@code regions[i]} (a null array or entry: unfenced). */
    void post(StagRegion[] regions, ByteBuffer[] bufs, int[] offs, int[] lens, int n, long cookie) {
        if (n < 1 || n > maxSge) {
            throw new IllegalArgumentException("pieces " + n + " outside 1.." + maxSge);
        }
        int s = reserve();
        int total = 0;
        for (int i = 0; i < n; i++) {
            sgRegion[s * maxSge + i] = regions == null ? null : regions[i];
            sgBuf[s * maxSge + i] = bufs[i];
            sgOff[s * maxSge + i] = offs[i];
            sgLen[s * maxSge + i] = lens[i];
            total = Math.addExact(total, lens[i]);
        }
        sgCount[s] = n;
        fill(s, bufs[0], offs[0], total, cookie);
    }

    /**
     * Copies {@code n} bytes of {@code src} at {@code srcIndex} to bytes {@code [mo, mo + n)} of
     * slot s, each piece under a placement lease on its region (RFC 5041 §8.3.1 (6)). False when a
     * piece's region was revoked: nothing lands in it (nor in any later piece).
     */
    boolean place(int s, int mo, ByteBuffer src, int srcIndex, int n) {
        int c = sgCount[s];
        int base = s * maxSge;
        int at = 0;
        for (int i = 0; i < c && n > 0; i++) {
            int len = sgLen[base + i];
            if (mo < at + len) {
                int skip = mo - at;
                int k = Math.min(n, len - skip);
                StagRegion r = sgRegion[base + i];
                if (r != null && !r.acquirePlacement()) {
                    return false;
                }
                try {
                    sgBuf[base + i].put(sgOff[base + i] + skip, src, srcIndex, k);
                } finally {
                    if (r != null) {
                        r.releasePlacement();
                    }
                }
                srcIndex += k;
                mo += k;
                n -= k;
            }
            at += len;
        }
        return true;
    }

    /** Index into the piece arrays of the piece of slot s that holds byte {@code mo}; -1 if none. */
    int pieceAt(int s, int mo) {
        int base = s * maxSge;
        int at = 0;
        for (int i = 0; i < sgCount[s]; i++) {
            int len = sgLen[base + i];
            if (mo < at + len) {
                pieceSkip = mo - at;
                return base + i;
            }
            at += len;
        }
        return -1;
    }

    /** Offset of {@code mo} inside the piece the last {@link #pieceAt} found. */
    int pieceSkip;

    StagRegion pieceRegion(int p) {
        return sgRegion[p];
    }

    ByteBuffer pieceBuffer(int p) {
        return sgBuf[p];
    }

    int pieceOffset(int p) {
        return sgOff[p];
    }

    int pieceLength(int p) {
        return sgLen[p];
    }

    private int reserve() {
        if (count == buffers.length) {
            throw new IllegalStateException("untagged queue full (" + buffers.length + " buffers)");
        }
        return (head + count) % buffers.length;
    }

    private void fill(int s, ByteBuffer buf, int offset, int capacity, long cookie) {
        buffers[s] = buf;
        offsets[s] = offset;
        capacities[s] = capacity;
        cookies[s] = cookie;
        inOrder[s] = 0;
        rangeCount[s] = 0;
        total[s] = -1;
        maxEnd[s] = 0;
        rsvdUlp[s] = 0;
        rsvdUlp32[s] = 0;
        count++;
    }

    /** Slot of the buffer assigned to {@code msn}, or {@link #NO_BUFFER} / {@link #OUT_OF_RANGE}. */
    int slotFor(int msn) {
        int delta = msn - headMsn;
        if (Integer.compareUnsigned(delta, count) < 0) {
            return (head + delta) % buffers.length;
        }
        return delta == count ? NO_BUFFER : OUT_OF_RANGE;
    }

    boolean headComplete() {
        return count > 0 && total[head] >= 0 && inOrder[head] == total[head];
    }

    /** Removes the head buffer after delivery; the next buffer gets the next MSN. */
    void pop() {
        buffers[head] = null;
        for (int i = 0; i < sgCount[head]; i++) {
            sgBuf[head * maxSge + i] = null;
            sgRegion[head * maxSge + i] = null;
        }
        head = (head + 1) % buffers.length;
        count--;
        headMsn++;
    }
}
