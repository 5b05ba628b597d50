package org.jwarp.mpa;

import java.nio.ByteBuffer;

/**
 * Flyweight over an MPA Request or Reply frame in a {@link ByteBuffer}, RFC 5044 §7.1.1 with the
 * S bit of RFC 6581 §6. It reads and writes fields in place at absolute offsets (big-endian,
 * whatever the buffer's byte order) and allocates nothing; one instance may be re-wrapped.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                  Key (16 bytes): "MPA ID Req Frame"           |
 * |                               or "MPA ID Rep Frame"           |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |M|C|R|S| Res   |     Rev       |          PD_Length            |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |              Private Data (PD_Length bytes, ≤ 512)            |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * Res is written as zero and never interpreted (RFC 5044 §7.1.1).
 */
public final class MpaRequestReplyFlyweight {
    /** Offset of the 16-byte key. */
    public static final int KEY_OFFSET = 0;
    public static final int KEY_LENGTH = 16;
    /** Offset of the M|C|R|S|Res byte. */
    public static final int FLAGS_OFFSET = 16;
    /** Offset of the Rev byte. */
    public static final int REV_OFFSET = 17;
    /** Offset of the 16-bit PD_Length. */
    public static final int PD_LENGTH_OFFSET = 18;
    /** Length of the fixed part; private data starts here. */
    public static final int HEADER_LENGTH = 20;
    public static final int PRIVATE_DATA_OFFSET = HEADER_LENGTH;
    /** RFC 5044 §7.1.1: PD_Length is at most 512. */
    public static final int MAX_PRIVATE_DATA_LENGTH = 512;
    /** Largest frame: header plus 512 bytes of private data. */
    public static final int MAX_FRAME_LENGTH = HEADER_LENGTH + MAX_PRIVATE_DATA_LENGTH;

    /** M: the sender requires Markers from its peer (RFC 5044 §7.1.1). */
    public static final int M_BIT = 0x80;
    /** C: CRC preference (RFC 5044 §7.1.1). */
    public static final int C_BIT = 0x40;
    /** R: connection rejected, Reply only (RFC 5044 §7.1.1). */
    public static final int R_BIT = 0x20;
    /** S: enhanced connection establishment data present (RFC 6581 §6). */
    public static final int S_BIT = 0x10;
    /** Res: reserved, zero on send, ignored on receive. */
    public static final int RES_MASK = 0x0F;

    /** RFC 5044 §7.1.1 revision. */
    public static final int REVISION_1 = 1;
    /** RFC 6581 §6: revision of enhanced connection establishment. */
    public static final int REVISION_2 = 2;

    private static final byte[] REQUEST_KEY = "MPA ID Req Frame".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    private static final byte[] REPLY_KEY = "MPA ID Rep Frame".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    private ByteBuffer buffer;
    private int offset;

    /** Points this flyweight at the frame starting at absolute {@code offset} of {@code buffer}. */
    public MpaRequestReplyFlyweight wrap(ByteBuffer buffer, int offset) {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    public ByteBuffer buffer() {
        return buffer;
    }

    public int offset() {
        return offset;
    }

    /** The key byte expected at {@code index} of a request (reply) key. */
    public static byte keyByte(boolean reply, int index) {
        return (reply ? REPLY_KEY : REQUEST_KEY)[index];
    }

    /** A copy of the request or reply key. */
    public static byte[] key(boolean reply) {
        return (reply ? REPLY_KEY : REQUEST_KEY).clone();
    }

    /** True when the 16 key bytes are "MPA ID Req Frame". */
    public boolean hasRequestKey() {
        return keyEquals(REQUEST_KEY);
    }

    /** True when the 16 key bytes are "MPA ID Rep Frame". */
    public boolean hasReplyKey() {
        return keyEquals(REPLY_KEY);
    }

    private boolean keyEquals(byte[] key) {
        for (int i = 0; i < KEY_LENGTH; i++) {
            if (buffer.get(offset + KEY_OFFSET + i) != key[i]) {
                return false;
            }
        }
        return true;
    }

    public MpaRequestReplyFlyweight putKey(boolean reply) {
        byte[] key = reply ? REPLY_KEY : REQUEST_KEY;
        for (int i = 0; i < KEY_LENGTH; i++) {
            buffer.put(offset + KEY_OFFSET + i, key[i]);
        }
        return this;
    }

    /** The raw flags byte, including Res bits. */
    public int flags() {
        return buffer.get(offset + FLAGS_OFFSET) & 0xFF;
    }

    public boolean marker() {
        return (flags() & M_BIT) != 0;
    }

    public boolean crc() {
        return (flags() & C_BIT) != 0;
    }

    public boolean reject() {
        return (flags() & R_BIT) != 0;
    }

    /** The raw S bit; meaningful only from Rev 2 on (RFC 6581 §6), see {@link #enhanced()}. */
    public boolean sBit() {
        return (flags() & S_BIT) != 0;
    }

    /**
     * S set in a frame of Rev 2 or higher: the first 4 private-data bytes are RFC 6581 §9 enhanced
     * data (§6: enhanced features need Rev "two or higher"). In a Rev 0/1 frame the S position is
     * RFC 5044's Res bit, which is not checked on receive.
     */
    public boolean enhanced() {
        return sBit() && revision() >= REVISION_2;
    }

    /** Writes the flags byte with Res = 0. */
    public MpaRequestReplyFlyweight putFlags(boolean marker, boolean crc, boolean reject, boolean enhanced) {
        int f = (marker ? M_BIT : 0) | (crc ? C_BIT : 0) | (reject ? R_BIT : 0) | (enhanced ? S_BIT : 0);
        buffer.put(offset + FLAGS_OFFSET, (byte) f);
        return this;
    }

    public int revision() {
        return buffer.get(offset + REV_OFFSET) & 0xFF;
    }

    public MpaRequestReplyFlyweight putRevision(int rev) {
        buffer.put(offset + REV_OFFSET, (byte) rev);
        return this;
    }

    /** PD_Length: private data bytes following the header, including any enhanced data. */
    public int privateDataLength() {
        return ((buffer.get(offset + PD_LENGTH_OFFSET) & 0xFF) << 8) | (buffer.get(offset + PD_LENGTH_OFFSET + 1) & 0xFF);
    }

    public MpaRequestReplyFlyweight putPrivateDataLength(int length) {
        buffer.put(offset + PD_LENGTH_OFFSET, (byte) (length >>> 8));
        buffer.put(offset + PD_LENGTH_OFFSET + 1, (byte) length);
        return this;
    }

    /** Absolute offset of the private data. */
    public int privateDataOffset() {
        return offset + PRIVATE_DATA_OFFSET;
    }

    /** Header plus PD_Length. */
    public int frameLength() {
        return HEADER_LENGTH + privateDataLength();
    }
}
