package org.jwarp.disni.impl;

import java.nio.ByteBuffer;
import org.jwarp.negotiation.RtrType;

/**
 * The RFC 6581 section 9.1 enhanced connection data (IRD and ORD words with the A/B/C/D flags)
 * carried at the start of the ULP private data on transports without MPA (RoCE, InfiniBand),
 * where the IB CM, not MPA, carries private data and pads it to a fixed size. jwarp frames it:
 *
 * <pre>
 *  0      2       3        4            6            8
 *  +------+-------+--------+------------+------------+-------------
 *  | "jw" | ver 1 | ULP len| A B IRD(14)| C D ORD(14)| ULP private data ...
 *  +------+-------+--------+------------+------------+-------------
 * </pre>
 *
 * The IRD/ORD words are laid out exactly as in the MPA Request/Reply (RFC 6581 section 9.1),
 * big-endian; the explicit length recovers the ULP data from the padded IB CM payload.
 */
public final class RoceEnvelope {
    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = 2;
    public static final int LENGTH_OFFSET = 3;
    public static final int IRD_OFFSET = 4;
    public static final int ORD_OFFSET = 6;
    public static final int HEADER_LENGTH = 8;
    public static final short MAGIC = 0x6A77; // "jw"
    public static final int VERSION = 1;
    /** RFC 6581 section 9.1 flag bits and the 14-bit value mask. */
    public static final int FLAG_A_PEER_TO_PEER = 0x8000;
    public static final int FLAG_B_SEND_RTR = 0x4000;
    public static final int FLAG_C_WRITE_RTR = 0x8000;
    public static final int FLAG_D_READ_RTR = 0x4000;
    public static final int VALUE_MASK = 0x3FFF;
    /** rdma_cm over IB CM: REQ/REP/REJ private data sizes for RDMA_PS_TCP (REQ loses the 36-byte cma header). */
    public static final int IB_REQ_PRIVATE_DATA = 56;
    public static final int IB_REP_PRIVATE_DATA = 196;
    public static final int IB_REJ_PRIVATE_DATA = 148;

    /** A decoded envelope. */
    public record Decoded(int ird, int ord, boolean peerToPeer, java.util.Set<RtrType> rtr, byte[] ulpData) {
    }

    private RoceEnvelope() {
    }

    /** Largest ULP private data for a message of {@code ibSize} bytes. */
    public static int maxUlp(int ibSize) {
        return ibSize - HEADER_LENGTH;
    }

    public static byte[] encode(int ird, int ord, boolean peerToPeer, java.util.Set<RtrType> rtr, byte[] ulp, int ibSize,
            String message) {
        if (ird < 0 || ird > VALUE_MASK || ord < 0 || ord > VALUE_MASK) {
            throw new IllegalArgumentException("ird/ord: " + ird + "/" + ord + " outside 0..16383 (RFC 6581 section 9.1)");
        }
        if (ulp.length > maxUlp(ibSize) || ulp.length > 255) {
            throw new IllegalArgumentException("privateData: " + ulp.length + " bytes exceed the " + maxUlp(ibSize)
                    + " bytes a RoCE " + message + " carries after the " + HEADER_LENGTH
                    + "-byte RFC 6581 section 9.1 envelope");
        }
        ByteBuffer b = ByteBuffer.allocate(HEADER_LENGTH + ulp.length);
        b.putShort(MAGIC_OFFSET, MAGIC);
        b.put(VERSION_OFFSET, (byte) VERSION);
        b.put(LENGTH_OFFSET, (byte) ulp.length);
        int irdWord = ird | (peerToPeer ? FLAG_A_PEER_TO_PEER : 0) | (rtr.contains(RtrType.SEND) ? FLAG_B_SEND_RTR : 0);
        int ordWord = ord | (rtr.contains(RtrType.WRITE) ? FLAG_C_WRITE_RTR : 0)
                | (rtr.contains(RtrType.READ) ? FLAG_D_READ_RTR : 0);
        b.putShort(IRD_OFFSET, (short) irdWord);
        b.putShort(ORD_OFFSET, (short) ordWord);
        b.position(HEADER_LENGTH);
        b.put(ulp);
        return b.array();
    }

    /** Decodes; null when {@code data} does not start with a jwarp envelope (a foreign peer). */
    public static Decoded decode(byte[] data) {
        if (data == null || data.length < HEADER_LENGTH) {
            return null;
        }
        ByteBuffer b = ByteBuffer.wrap(data);
        if (b.getShort(MAGIC_OFFSET) != MAGIC || (b.get(VERSION_OFFSET) & 0xFF) != VERSION) {
            return null;
        }
        int len = b.get(LENGTH_OFFSET) & 0xFF;
        if (HEADER_LENGTH + len > data.length) {
            return null;
        }
        int irdWord = b.getShort(IRD_OFFSET) & 0xFFFF;
        int ordWord = b.getShort(ORD_OFFSET) & 0xFFFF;
        java.util.EnumSet<RtrType> rtr = java.util.EnumSet.noneOf(RtrType.class);
        if ((irdWord & FLAG_B_SEND_RTR) != 0) {
            rtr.add(RtrType.SEND);
        }
        if ((ordWord & FLAG_C_WRITE_RTR) != 0) {
            rtr.add(RtrType.WRITE);
        }
        if ((ordWord & FLAG_D_READ_RTR) != 0) {
            rtr.add(RtrType.READ);
        }
        byte[] ulp = java.util.Arrays.copyOfRange(data, HEADER_LENGTH, HEADER_LENGTH + len);
        return new Decoded(irdWord & VALUE_MASK, ordWord & VALUE_MASK, (irdWord & FLAG_A_PEER_TO_PEER) != 0, rtr, ulp);
    }
}
