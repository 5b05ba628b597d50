package org.jwarp.ddp;

import java.nio.ByteBuffer;

/**
 * Flyweight over a DDP segment header, RFC 5041 §4: the control field (§4.1), the tagged buffer
 * model header (§4.2, 14 bytes) and the untagged buffer model header (§4.3, 18 bytes). Offsets are
 * relative to the start of the DDP segment (the MPA ULPDU), all fields big-endian.
 *
 * <pre>
 *  0: T | L | Rsvd(4) | DV(2)      1: RsvdULP (RDMAP control, RFC 5040 §4.1)
 *  tagged:   2: STag(32)           6: TO(64)
 *  untagged: 2: RsvdULP(32)        6: QN(32)   10: MSN(32)   14: MO(32)
 * </pre>
 *
 * One instance is reused per connection: {@link #wrap} allocates nothing.
 */
public final class DdpHeader {
    /** Offset of the first control byte (T, L, Rsvd, DV). */
    public static final int CONTROL_OFFSET = 0;
    /** Offset of the 8-bit RsvdULP field of the control field. */
    public static final int RSVD_ULP_OFFSET = 1;
    /** Tagged header: offset of the STag. */
    public static final int STAG_OFFSET = 2;
    /** Tagged header: offset of the 64-bit Tagged Offset. */
    public static final int TO_OFFSET = 6;
    /** Size of the tagged buffer model header, RFC 5041 §4.2. */
    public static final int TAGGED_HEADER_LENGTH = 14;
    /** Untagged header: offset of the 32-bit RsvdULP field (RDMAP: Invalidate STag). */
    public static final int RSVD_ULP32_OFFSET = 2;
    /** Untagged header: offset of the Queue Number. */
    public static final int QN_OFFSET = 6;
    /** Untagged header: offset of the Message Sequence Number. */
    public static final int MSN_OFFSET = 10;
    /** Untagged header: offset of the Message Offset. */
    public static final int MO_OFFSET = 14;
    /** Size of the untagged buffer model header, RFC 5041 §4.3. */
    public static final int UNTAGGED_HEADER_LENGTH = 18;

    /** Control byte: Tagged flag, RFC 5041 §4.1. */
    public static final int T_FLAG = 0x80;
    /** Control byte: Last flag, RFC 5041 §4.1. */
    public static final int L_FLAG = 0x40;
    /** Control byte: reserved bits, zero on transmit, ignored on receive. */
    public static final int RSVD_MASK = 0x3C;
    /** Control byte: DDP version mask. */
    public static final int DV_MASK = 0x03;
    /** The DDP version of RFC 5041, §4.1. */
    public static final int DDP_VERSION = 1;

    private ByteBuffer buf;
    private int base;

    /** Points this flyweight at the DDP segment starting at absolute {@code index}. */
    public DdpHeader wrap(ByteBuffer buffer, int index) {
        this.buf = buffer;
        this.base = index;
        return this;
    }

    /** Header length implied by the T flag of a segment whose control byte is {@code control}. */
    public static int headerLength(int control) {
        return (control & T_FLAG) != 0 ? TAGGED_HEADER_LENGTH : UNTAGGED_HEADER_LENGTH;
    }

    public int control() {
        return buf.get(base + CONTROL_OFFSET) & 0xFF;
    }

    public boolean tagged() {
        return (control() & T_FLAG) != 0;
    }

    public boolean last() {
        return (control() & L_FLAG) != 0;
    }

    public int version() {
        return control() & DV_MASK;
    }

    public int headerLength() {
        return headerLength(control());
    }

    public int rsvdUlp() {
        return buf.get(base + RSVD_ULP_OFFSET) & 0xFF;
    }

    public int stag() {
        return buf.getInt(base + STAG_OFFSET);
    }

    public long to() {
        return buf.getLong(base + TO_OFFSET);
    }

    public int rsvdUlp32() {
        return buf.getInt(base + RSVD_ULP32_OFFSET);
    }

    public int qn() {
        return buf.getInt(base + QN_OFFSET);
    }

    public int msn() {
        return buf.getInt(base + MSN_OFFSET);
    }

    public int mo() {
        return buf.getInt(base + MO_OFFSET);
    }

    /** Writes a tagged header (DV 1, reserved bits zero). */
    public DdpHeader putTagged(boolean last, int rsvdUlp, int stag, long to) {
        buf.put(base + CONTROL_OFFSET, (byte) (T_FLAG | (last ? L_FLAG : 0) | DDP_VERSION));
        buf.put(base + RSVD_ULP_OFFSET, (byte) rsvdUlp);
        buf.putInt(base + STAG_OFFSET, stag);
        buf.putLong(base + TO_OFFSET, to);
        return this;
    }

    /** Writes an untagged header (DV 1, reserved bits zero). */
    public DdpHeader putUntagged(boolean last, int rsvdUlp, int rsvdUlp32, int qn, int msn, int mo) {
        buf.put(base + CONTROL_OFFSET, (byte) ((last ? L_FLAG : 0) | DDP_VERSION));
        buf.put(base + RSVD_ULP_OFFSET, (byte) rsvdUlp);
        buf.putInt(base + RSVD_ULP32_OFFSET, rsvdUlp32);
        buf.putInt(base + QN_OFFSET, qn);
        buf.putInt(base + MSN_OFFSET, msn);
        buf.putInt(base + MO_OFFSET, mo);
        return this;
    }

    /**
     * Checks that {@code length} bytes starting at the wrapped index can hold the header the T flag
     * announces, RFC 5041 §4.4; throws {@link DdpFormatException} naming the field otherwise.
     */
    public DdpHeader requireComplete(int length) {
        if (length < 1) {
            throw new DdpFormatException("DDP segment of " + length + " bytes has no control field (RFC 5041 §4.1)");
        }
        int need = headerLength();
        if (length < need) {
            throw new DdpFormatException("DDP segment of " + length + " bytes is shorter than its "
                    + (tagged() ? "tagged (RFC 5041 §4.2)" : "untagged (RFC 5041 §4.3)") + " header of " + need);
        }
        return this;
    }
}
