package org.jwarp.sctp;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;
import org.jwarp.mpa.EnhancedConnectionData;
import org.jwarp.mpa.MpaFrame;
import org.jwarp.mpa.MpaRequestReplyFlyweight;

/**
 * The payload of an SCTP DATA chunk with PPID {@link #DDP_STREAM_SESSION_CONTROL_PPID}: the DDP
 * Stream Session Control message of RFC 5043 §4, extended by RFC 6581 §7. Layout (big-endian):
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |        Function Code          |           Reserved            |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |  Enhanced connection establishment data (codes 0x5, 0x6 only) |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |     ULP private data (not in Terminate), ≤ 512 bytes in all    |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * The SCTP chunk length delimits the payload. Reserved is zero on send and ignored on receive;
 * the 512-byte limit covers the enhanced data plus the ULP private data, as for MPA. The field
 * offsets are the constants below; the layout was written from the RFC text as we read it and
 * has not been checked against another implementation (there is no SCTP iWARP peer to test).
 */
public final class SessionControlChunk {
    /** IANA SCTP PPID of DDP Segment chunks (RFC 5043). */
    public static final int DDP_SEGMENT_PPID = 16;
    /** IANA SCTP PPID of DDP Stream Session Control chunks (RFC 5043). */
    public static final int DDP_STREAM_SESSION_CONTROL_PPID = 17;

    public static final int FUNCTION_CODE_OFFSET = 0;
    public static final int RESERVED_OFFSET = 2;
    public static final int HEADER_LENGTH = 4;
    public static final int ENHANCED_DATA_OFFSET = HEADER_LENGTH;
    /** Private data (enhanced data included) is at most 512 bytes. */
    public static final int MAX_PRIVATE_DATA = 512;

    private static final String SEC_5043 = "RFC 5043 §4";
    private static final String SEC_6581 = "RFC 6581 §7";

    private final SessionControlFunction function;
    private final EnhancedConnectionData enhancedData;
    private final byte[] ulpPrivateData;

    private SessionControlChunk(SessionControlFunction function, EnhancedConnectionData enhancedData, byte[] ulp) {
        this.function = function;
        this.enhancedData = enhancedData;
        this.ulpPrivateData = ulp;
    }

    /**
     * A message for sending.
     *
     * @throws IllegalArgumentException when enhanced data is missing or present against the
     *                                  function, private data is given to a Terminate, or the
     *                                  512-byte limit is exceeded
     */
    public static SessionControlChunk of(SessionControlFunction function, EnhancedConnectionData enhancedData,
                                         byte[] ulpPrivateData) {
        Objects.requireNonNull(function, "function");
        byte[] ulp = ulpPrivateData == null ? new byte[0] : ulpPrivateData.clone();
        if (function.carriesEnhancedData() != (enhancedData != null)) {
            throw new IllegalArgumentException("Function Code: " + function + (function.carriesEnhancedData()
                    ? " needs enhanced data" : " carries no enhanced data") + " (" + SEC_6581 + ")");
        }
        if (!function.carriesPrivateData() && ulp.length > 0) {
            throw new IllegalArgumentException("Private Data: " + function + " carries no private data (" + SEC_6581 + ")");
        }
        if (enhancedData != null && !enhancedData.peerToPeer()
                && (enhancedData.sendRtr() || enhancedData.writeRtr() || enhancedData.readRtr())) {
            throw new IllegalArgumentException("Enhanced data B/C/D: must be zero when A is zero (RFC 6581 §9.2)");
        }
        int pd = ulp.length + (enhancedData != null ? EnhancedConnectionData.LENGTH : 0);
        if (pd > MAX_PRIVATE_DATA) {
            throw new IllegalArgumentException("Private Data: " + pd + " bytes exceed 512 (" + SEC_6581 + ")");
        }
        return new SessionControlChunk(function, enhancedData, ulp);
    }

    public SessionControlFunction function() {
        return function;
    }

    /** RFC 6581 §9 data for the enhanced Initiate/Accept, else null. */
    public EnhancedConnectionData enhancedData() {
        return enhancedData;
    }

    public byte[] ulpPrivateData() {
        return ulpPrivateData.clone();
    }

    public int encodedLength() {
        return HEADER_LENGTH + (enhancedData != null ? EnhancedConnectionData.LENGTH : 0) + ulpPrivateData.length;
    }

    /** Writes the payload at absolute {@code offset} (position untouched). */
    public void encodeTo(ByteBuffer dst, int offset) {
        Objects.checkFromIndexSize(offset, encodedLength(), dst.limit());
        dst.put(offset + FUNCTION_CODE_OFFSET, (byte) (function.code() >>> 8));
        dst.put(offset + FUNCTION_CODE_OFFSET + 1, (byte) function.code());
        dst.put(offset + RESERVED_OFFSET, (byte) 0);
        dst.put(offset + RESERVED_OFFSET + 1, (byte) 0);
        int p = offset + HEADER_LENGTH;
        if (enhancedData != null) {
            enhancedData.put(dst, p);
            p += EnhancedConnectionData.LENGTH;
        }
        for (byte b : ulpPrivateData) {
            dst.put(p++, b);
        }
    }

    public byte[] toBytes() {
        ByteBuffer b = ByteBuffer.allocate(encodedLength());
        encodeTo(b, 0);
        return b.array();
    }

    public static SessionControlChunk decode(byte[] payload) throws SessionControlDecodeException {
        return decode(ByteBuffer.wrap(payload), 0, payload.length);
    }

    /** Decodes a payload of exactly {@code length} bytes at absolute {@code offset}. */
    public static SessionControlChunk decode(ByteBuffer buf, int offset, int length) throws SessionControlDecodeException {
        if (offset < 0 || length < 0 || offset > buf.limit() - length) {
            throw new IndexOutOfBoundsException("offset " + offset + " length " + length + " limit " + buf.limit());
        }
        if (length < HEADER_LENGTH) {
            throw new SessionControlDecodeException("Session control", "truncated: " + length + " bytes, the header needs "
                    + HEADER_LENGTH, SEC_5043);
        }
        int code = ((buf.get(offset) & 0xFF) << 8) | (buf.get(offset + 1) & 0xFF);
        SessionControlFunction f = SessionControlFunction.fromCode(code);
        if (f == null) {
            throw new SessionControlDecodeException("Function Code", "0x" + Integer.toHexString(code)
                    + " is not one of 0x1..0x7", code >= 5 ? SEC_6581 : SEC_5043);
        }
        int pd = length - HEADER_LENGTH;
        if (pd > MAX_PRIVATE_DATA) {
            throw new SessionControlDecodeException("Private Data", pd + " bytes exceed 512", f.code() >= 5 ? SEC_6581 : SEC_5043);
        }
        if (!f.carriesPrivateData() && pd > 0) {
            throw new SessionControlDecodeException("Private Data", pd + " bytes in " + f + ", which carries none",
                    f.code() >= 5 ? SEC_6581 : SEC_5043);
        }
        int p = offset + HEADER_LENGTH;
        EnhancedConnectionData ed = null;
        if (f.carriesEnhancedData()) {
            if (pd < EnhancedConnectionData.LENGTH) {
                throw new SessionControlDecodeException("Enhanced data", "truncated: " + pd + " of 4 bytes", SEC_6581);
            }
            ed = EnhancedConnectionData.get(buf, p);
            if (!ed.peerToPeer() && (ed.sendRtr() || ed.writeRtr() || ed.readRtr())) {
                // RFC 6581 §9.2: B, C and D are ignored on receive when A is 0.
                ed = new EnhancedConnectionData(false, false, false, false, ed.ird(), ed.ord());
            }
            p += EnhancedConnectionData.LENGTH;
            pd -= EnhancedConnectionData.LENGTH;
        }
        byte[] ulp = new byte[pd];
        for (int i = 0; i < pd; i++) {
            ulp[i] = buf.get(p + i);
        }
        return new SessionControlChunk(f, ed, ulp);
    }

    /**
     * The SCTP equivalent of an MPA frame, so the RFC 6581 engines can drive SCTP (RFC 6581 §7):
     * enhanced Request → Enhanced Initiate, unenhanced → Initiate, Reply → (Enhanced) Accept,
     * Reply with R=1 → (Enhanced) Reject, keeping the required ORD of an enhanced Reject. M, C and
     * Rev have no SCTP counterpart and are dropped.
     */
    public static SessionControlChunk fromFrame(MpaFrame frame) {
        if (frame.isRequest()) {
            return of(frame.enhanced() ? SessionControlFunction.ENHANCED_INITIATE : SessionControlFunction.INITIATE,
                    frame.enhancedData(), frame.ulpPrivateData());
        }
        if (frame.reject()) {
            return frame.enhanced()
                    ? of(SessionControlFunction.ENHANCED_REJECT, frame.enhancedData(), frame.ulpPrivateData())
                    : of(SessionControlFunction.REJECT, null, frame.ulpPrivateData());
        }
        return of(frame.enhanced() ? SessionControlFunction.ENHANCED_ACCEPT : SessionControlFunction.ACCEPT,
                frame.enhancedData(), frame.ulpPrivateData());
    }

    /**
     * The MPA-frame view of an Initiate/Accept/Reject for the negotiation engines: Rev 2 with
     * enhanced data for the enhanced codes, Rev 1 otherwise; CRC and markers off (SCTP has its own
     * checksum).
     *
     * @throws IllegalStateException for Terminate, which has no frame equivalent
     */
    public MpaFrame toFrame() {
        MpaFrame.Builder b = switch (function) {
            case INITIATE, ENHANCED_INITIATE -> MpaFrame.request();
            case ACCEPT, ENHANCED_ACCEPT -> MpaFrame.reply();
            case REJECT, ENHANCED_REJECT -> MpaFrame.reply().reject(true);
            case TERMINATE -> throw new IllegalStateException(function + " has no MPA frame equivalent");
        };
        return b.revision(enhancedData != null ? MpaRequestReplyFlyweight.REVISION_2 : MpaRequestReplyFlyweight.REVISION_1)
                .enhancedData(enhancedData).ulpPrivateData(ulpPrivateData).build();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SessionControlChunk c && c.function == function && Objects.equals(c.enhancedData, enhancedData)
                && Arrays.equals(c.ulpPrivateData, ulpPrivateData);
    }

    @Override
    public int hashCode() {
        return Objects.hash(function, enhancedData) * 31 + Arrays.hashCode(ulpPrivateData);
    }

    @Override
    public String toString() {
        return "SessionControlChunk{" + function + ", " + enhancedData + ", ulp=" + HexFormat.of().formatHex(ulpPrivateData) + "}";
    }
}
