package org.jwarp.mpa;

import java.nio.ByteBuffer;

/**
 * Enhanced RDMA Connection Establishment Data, RFC 6581 §9: the first four bytes of the private
 * data of an MPA Request/Reply frame with S=1 and Rev=2 (and of the enhanced SCTP session control
 * chunks, RFC 6581 §7), in network byte order:
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |A|B|           IRD             |C|D|           ORD             |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * A = peer-to-peer (RTR) model, B = zero-length Send RTR, C = zero-length RDMA Write RTR,
 * D = zero-length RDMA Read RTR (RFC 6581 §9.2); IRD/ORD are 14 bits (§9.1), where
 * {@link #NO_NEGOTIATION} (0x3FFF) means no automatic negotiation.
 *
 * <p>This value keeps the bits exactly as received; B, C and D are meaningless when A is 0
 * (§9.2), which {@link #sendRtr()} etc. do not hide but {@link #offersRtr()} does. The static
 * {@code get}/{@code put} methods read and write in place without allocating.
 *
 * @param peerToPeer A
 * @param sendRtr    B
 * @param writeRtr   C
 * @param readRtr    D
 * @param ird        inbound RDMA Read queue depth, 0..0x3FFF
 * @param ord        outbound RDMA Read queue depth, 0..0x3FFF
 */
public record EnhancedConnectionData(boolean peerToPeer, boolean sendRtr, boolean writeRtr, boolean readRtr,
                                     int ird, int ord) {

    /** Length on the wire. */
    public static final int LENGTH = 4;
    /** Offset of the A|B|IRD word. */
    public static final int IRD_WORD_OFFSET = 0;
    /** Offset of the C|D|ORD word. */
    public static final int ORD_WORD_OFFSET = 2;
    /** A: peer-to-peer model, in the IRD word. */
    public static final int A_BIT = 0x8000;
    /** B: zero-length Send RTR, in the IRD word. */
    public static final int B_BIT = 0x4000;
    /** C: zero-length RDMA Write RTR, in the ORD word. */
    public static final int C_BIT = 0x8000;
    /** D: zero-length RDMA Read RTR, in the ORD word. */
    public static final int D_BIT = 0x4000;
    /** Mask of the 14-bit IRD and ORD fields. */
    public static final int IRD_ORD_MASK = 0x3FFF;
    /** RFC 6581 §9.1: this IRD/ORD value asks for no automatic IRD/ORD negotiation. */
    public static final int NO_NEGOTIATION = 0x3FFF;

    public EnhancedConnectionData {
        FieldChecks.irdOrd("IRD", ird);
        FieldChecks.irdOrd("ORD", ord);
    }

    /** True when A is set and at least one of B, C, D is set. */
    public boolean offersRtr() {
        return peerToPeer && (sendRtr || writeRtr || readRtr);
    }

    /** The IRD word as sent: A|B|IRD. */
    public int irdWord() {
        return (peerToPeer ? A_BIT : 0) | (sendRtr ? B_BIT : 0) | ird;
    }

    /** The ORD word as sent: C|D|ORD. */
    public int ordWord() {
        return (writeRtr ? C_BIT : 0) | (readRtr ? D_BIT : 0) | ord;
    }

    /** Writes the four bytes big-endian at {@code offset} (absolute; the buffer's position is untouched). */
    public void put(ByteBuffer buf, int offset) {
        int i = irdWord();
        int o = ordWord();
        buf.put(offset + IRD_WORD_OFFSET, (byte) (i >>> 8));
        buf.put(offset + IRD_WORD_OFFSET + 1, (byte) i);
        buf.put(offset + ORD_WORD_OFFSET, (byte) (o >>> 8));
        buf.put(offset + ORD_WORD_OFFSET + 1, (byte) o);
    }

    /** Reads the four bytes at {@code offset} (absolute, big-endian regardless of buffer order). */
    public static EnhancedConnectionData get(ByteBuffer buf, int offset) {
        int irdWord = getIrdWord(buf, offset);
        int ordWord = getOrdWord(buf, offset);
        return new EnhancedConnectionData((irdWord & A_BIT) != 0, (irdWord & B_BIT) != 0,
                (ordWord & C_BIT) != 0, (ordWord & D_BIT) != 0, irdWord & IRD_ORD_MASK, ordWord & IRD_ORD_MASK);
    }

    /** The A|B|IRD word at {@code offset}, big-endian. */
    public static int getIrdWord(ByteBuffer buf, int offset) {
        return ((buf.get(offset + IRD_WORD_OFFSET) & 0xFF) << 8) | (buf.get(offset + IRD_WORD_OFFSET + 1) & 0xFF);
    }

    /** The C|D|ORD word at {@code offset}, big-endian. */
    public static int getOrdWord(ByteBuffer buf, int offset) {
        return ((buf.get(offset + ORD_WORD_OFFSET) & 0xFF) << 8) | (buf.get(offset + ORD_WORD_OFFSET + 1) & 0xFF);
    }

    /** Encodes to a fresh 4-byte array. */
    public byte[] toBytes() {
        ByteBuffer b = ByteBuffer.allocate(LENGTH);
        put(b, 0);
        return b.array();
    }
}
