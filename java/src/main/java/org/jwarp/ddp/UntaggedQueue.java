package org.jwarp.ddp;

import java.nio.ByteBuffer;

/**
 * One untagged buffer queue of a DDP stream, RFC 5041 §3.3 and §5.1 (Untagged Buffer Model): ULP
 * buffers posted in order, the n-th posted buffer receiving MSN {@code first + n}. The MSN of the
 * first message on a queue is 1 (§4.3) and increases by one per message modulo 2^32.
 *
 * <p>A fixed ring of preallocated slots; posting and delivery allocate nothing.
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
    final int[] placed;
    final int[] total;
    final int[] maxEnd;
    final int[] rsvdUlp;
    final int[] rsvdUlp32;
    private int head;
    private int count;
    private int headMsn;

    UntaggedQueue(int depth) {
        this(depth, 1);
    }

    /** A queue whose next expected MSN is {@code firstMsn} (tests exercise the 2^32 wrap). */
    UntaggedQueue(int depth, int firstMsn) {
        headMsn = firstMsn;
        buffers = new ByteBuffer[depth];
        offsets = new int[depth];
        capacities = new int[depth];
        cookies = new long[depth];
        placed = new int[depth];
        total = new int[depth];
        maxEnd = new int[depth];
        rsvdUlp = new int[depth];
        rsvdUlp32 = new int[depth];
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

    void post(ByteBuffer buf, int offset, int capacity, long cookie) {
        if (count == buffers.length) {
            throw new IllegalStateException("untagged queue full (" + buffers.length + " buffers)");
        }
        int s = (head + count) % buffers.length;
        buffers[s] = buf;
        offsets[s] = offset;
        capacities[s] = capacity;
        cookies[s] = cookie;
        placed[s] = 0;
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
        return count > 0 && total[head] >= 0 && placed[head] == total[head];
    }

    /** Removes the head buffer after delivery; the next buffer gets the next MSN. */
    void pop() {
        buffers[head] = null;
        head = (head + 1) % buffers.length;
        count--;
        headMsn++;
    }
}
