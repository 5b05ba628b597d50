package org.jwarp.cli;

import java.nio.ByteBuffer;

/**
 * The one message of the rping exchange, carried by an RDMA Send (RFC 5040 §5.3): a buffer
 * advertisement naming where the peer may RDMA Read (RFC 5040 §5.2) or RDMA Write (§5.1), or,
 * from the server, a "go ahead" of the same length whose fields the client ignores.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                  tagged offset (address), high                |
 * |                  tagged offset (address), low                 |
 * |                        STag (rkey)                            |
 * |                     length in bytes                           |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * All fields big-endian. Static accessors read and write in place at an offset of a buffer, so
 * nothing is allocated per message.
 */
final class RpingAdvert {
    static final int ADDRESS_OFFSET = 0;
    static final int RKEY_OFFSET = 8;
    static final int SIZE_OFFSET = 12;
    /** Every rping message is exactly this long; rping refuses any other length. */
    static final int LENGTH = 16;

    private RpingAdvert() {
    }

    static void put(ByteBuffer b, int offset, long address, int rkey, int size) {
        b.putLong(offset + ADDRESS_OFFSET, address);
        b.putInt(offset + RKEY_OFFSET, rkey);
        b.putInt(offset + SIZE_OFFSET, size);
    }

    /** The "go ahead": a message of the advertisement's length with every field zero. */
    static void putGoAhead(ByteBuffer b, int offset) {
        put(b, offset, 0, 0, 0);
    }

    static long address(ByteBuffer b, int offset) {
        return b.getLong(offset + ADDRESS_OFFSET);
    }

    static int rkey(ByteBuffer b, int offset) {
        return b.getInt(offset + RKEY_OFFSET);
    }

    /** The advertised length, unsigned (a negative int is a length above 2^31). */
    static long size(ByteBuffer b, int offset) {
        return Integer.toUnsignedLong(b.getInt(offset + SIZE_OFFSET));
    }
}
