package org.jwarp.soft.tx;

import java.nio.ByteBuffer;

import org.jwarp.mpa.FpduSink;
import org.jwarp.mpa.SliceTable;

/**
 * One transmit staging area of the zero-copy transmit ({@link TxGather}, RFC 5044 §4 FPDUs): the
 * direct buffer FPDU headers, pads and CRCs (and copied payloads) are staged in, and the slice
 * table and write views that go with it. A stream holds one only while it has bytes the socket
 * has not taken: it borrows one from its device's {@link DirectBufferPool} when a flush has
 * something to stage and gives it back once everything staged or referenced has left, so idle
 * and drained streams hold no staging memory. Once drained the slice table is empty (every
 * entry null), so the next borrower finds it as new.
 *
 * <p>One owner at a time: the pool, or the one stream that borrowed it (under that stream's I/O
 * lock).
 */
public final class TxStaging {
    final ByteBuffer buf;
    /** Views of {@link #buf}, one per staged run between slices (made once, with the buffer). */
    final ByteBuffer[] runs = new ByteBuffer[TxGather.SLICES + 1];
    /** The gathering write's vector: runs and slices interleaved. */
    final ByteBuffer[] iov = new ByteBuffer[2 * TxGather.SLICES + 1];
    /** Whether {@link #iov} entry i is a staging run, else a payload slice (a kept iovec, see {@link TxGather#write}). */
    final boolean[] iovRun = new boolean[2 * TxGather.SLICES + 1];
    /** Pending slices' arrays, bound by the borrowing stream's {@link TxGather} into its {@link FpduSink}. */
    final SliceTable slices = new SliceTable();
    /** Lent by the pool (to a stream, or handed to a waiter), not free; guarded by the pool's lock. */
    boolean lent;

    public TxStaging(ByteBuffer buf) {
        this.buf = buf;
        for (int i = 0; i < runs.length; i++) {
            runs[i] = buf.duplicate();
        }
    }

    public TxStaging(int capacity) {
        this(ByteBuffer.allocateDirect(capacity));
    }

    /** The area itself, which the stream writes FPDUs into. */
    public ByteBuffer buffer() {
        return buf;
    }

    int capacity() {
        return buf.capacity();
    }
}
