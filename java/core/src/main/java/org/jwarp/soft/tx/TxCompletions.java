package org.jwarp.soft.tx;

/**
 * Send WRs of one stream's zero-copy transmit ({@link TxGather}) waiting for the socket: each is
 * recorded with the stream offset just past its last FPDU (RFC 5044 §4) and completes only once
 * the socket accepted every byte up to it, so the application may reuse its buffer when it sees
 * the completion. A ring of slot and end offset, as deep as the send queue; no allocation after
 * construction. Guarded by the stream's I/O lock.
 */
public final class TxCompletions {
    private final int[] slot;
    private final long[] end;
    private int head;
    private int count;

    TxCompletions(int sqDepth) {
        slot = new int[sqDepth + 1];
        end = new long[sqDepth + 1];
    }

    /** Send slot {@code s} completes once the socket accepted the stream up to {@code e}. */
    void add(int s, long e) {
        int k = (head + count) % slot.length;
        slot[k] = s;
        end[k] = e;
        count++;
    }

    /** The next slot whose bytes lie within the first {@code accepted} stream bytes, or -1. */
    int next(long accepted) {
        if (count == 0 || end[head] > accepted) {
            return -1;
        }
        int s = slot[head];
        head = (head + 1) % slot.length;
        count--;
        return s;
    }
}
