package org.jwarp.rdmap;

import java.nio.ByteBuffer;

/**
 * The RDMA Read Request header, RFC 5040 §4.4: 28 bytes after the untagged DDP header (48 bytes
 * on the wire with the MPA length and DDP header). Offsets relative to the DDP payload.
 */
public final class ReadRequestHeader {
    private ReadRequestHeader() {
    }

    public static final int SINK_STAG_OFFSET = 0;
    public static final int SINK_TO_OFFSET = 4;
    public static final int SIZE_OFFSET = 12;
    public static final int SOURCE_STAG_OFFSET = 16;
    public static final int SOURCE_TO_OFFSET = 20;
    public static final int LENGTH = 28;

    public static void put(ByteBuffer b, int index, int sinkStag, long sinkTo, int size, int sourceStag, long sourceTo) {
        b.putInt(index + SINK_STAG_OFFSET, sinkStag);
        b.putLong(index + SINK_TO_OFFSET, sinkTo);
        b.putInt(index + SIZE_OFFSET, size);
        b.putInt(index + SOURCE_STAG_OFFSET, sourceStag);
        b.putLong(index + SOURCE_TO_OFFSET, sourceTo);
    }

    public static int sinkStag(ByteBuffer b, int index) {
        return b.getInt(index + SINK_STAG_OFFSET);
    }

    public static long sinkTo(ByteBuffer b, int index) {
        return b.getLong(index + SINK_TO_OFFSET);
    }

    /** RDMA Read Message Size, an unsigned 32-bit count. */
    public static int size(ByteBuffer b, int index) {
        return b.getInt(index + SIZE_OFFSET);
    }

    public static int sourceStag(ByteBuffer b, int index) {
        return b.getInt(index + SOURCE_STAG_OFFSET);
    }

    public static long sourceTo(ByteBuffer b, int index) {
        return b.getLong(index + SOURCE_TO_OFFSET);
    }
}
