package org.jwarp.rdmap;

import org.jwarp.ground.TermCode;
import java.nio.ByteBuffer;
import org.jwarp.ddp.DdpHeader;

/**
 * The RDMAP Terminate message codec, RFC 5040 §4.8, laid out as Linux siw sends it.
 *
 * <pre>
 *  0: Layer(4) | EType(4) | Error Code(8) | M | D | R | Rsvd(13)
 *  4: DDP Segment Length(16)            present when M, D or R is set
 *  6: Terminated DDP Header (14 or 18)  when D
 *  +: Terminated RDMA Header (28)       when R (the Read Request header)
 * </pre>
 *
 * The Terminate message travels as an untagged DDP message on QN 2 with MSN 1 and MO 0
 * (control word {@code 0x4147}). On decode, any layer/etype is accepted, in particular layer 2
 * with etype 0 (RFC 5040) or 3 (cxgb4, irdma); see {@link TermCode#isMpa()}, and Linux siw's
 * swapped control word ({@link #SIW_HDRCT_M}).
 */
public final class TerminateCodec {
    private TerminateCodec() {
    }

    /** Hdrct M: DDP Segment Length valid. */
    public static final int HDRCT_M = 0x8000;
    /** Hdrct D: Terminated DDP header included. */
    public static final int HDRCT_D = 0x4000;
    /** Hdrct R: Terminated RDMA header included. */
    public static final int HDRCT_R = 0x2000;
    /**
     * Linux siw builds the Terminate control word from a little-endian bitfield: it puts M, D and R
     * in bits 8, 9 and 10 (reserved in RFC 5040 §4.8) instead of 15, 14 and 13, and swaps the layer
     * and etype nibbles (layer in bits 27–24). Seen on the wire from kernel 6.1 siw as
     * {@code 11000300 0040 c140 ...} for a Write to an invalid STag and {@code 21020300 0040 ...}
     * (DDP layer 1, untagged etype 2, code 2) for a Send longer than the posted receive. On receive,
     * Hdrct bits in siw's positions with the RFC positions clear mean siw's layout for the whole
     * word; with no Hdrct bit at all, a layer/etype pair that is undefined in RFC order but defined
     * swapped ({@link TermCode#isDefined()}) is read swapped. Never sent: we send RFC 5040 order.
     */
    public static final int SIW_HDRCT_M = 0x0100;
    /** siw's position of Hdrct D; see {@link #SIW_HDRCT_M}. */
    public static final int SIW_HDRCT_D = 0x0200;
    /** siw's position of Hdrct R; see {@link #SIW_HDRCT_M}. */
    public static final int SIW_HDRCT_R = 0x0400;
    private static final int HDRCT_RFC_MASK = HDRCT_M | HDRCT_D | HDRCT_R;
    private static final int HDRCT_SIW_MASK = SIW_HDRCT_M | SIW_HDRCT_D | SIW_HDRCT_R;
    /** Size of the Terminate control word. */
    public static final int CONTROL_LENGTH = 4;
    /** Size of the DDP Segment Length field. */
    public static final int SEGMENT_LENGTH_SIZE = 2;
    /** Largest Terminate payload: control, segment length, untagged DDP header, Read Request header. */
    public static final int MAX_PAYLOAD_LENGTH = CONTROL_LENGTH + SEGMENT_LENGTH_SIZE
            + DdpHeader.UNTAGGED_HEADER_LENGTH + ReadRequestHeader.LENGTH;

    /**
     * Writes a Terminate payload at {@code dst[index..]}. {@code headers[headersIndex..]} holds the
     * offending DDP header ({@code ddpHeaderLength} bytes, 0 if none) followed by its RDMAP header
     * ({@code rdmapHeaderLength}, 0 or 28). Returns the payload length.
     */
    public static int encode(ByteBuffer dst, int index, TermCode code, int ddpSegmentLength, ByteBuffer headers,
            int headersIndex, int ddpHeaderLength, int rdmapHeaderLength, boolean segmentLengthValid) {
        if (ddpHeaderLength != 0 && ddpHeaderLength != DdpHeader.TAGGED_HEADER_LENGTH
                && ddpHeaderLength != DdpHeader.UNTAGGED_HEADER_LENGTH) {
            throw new IllegalArgumentException("terminated DDP header must be 0, 14 or 18 bytes: " + ddpHeaderLength);
        }
        if (rdmapHeaderLength != 0 && (rdmapHeaderLength != ReadRequestHeader.LENGTH || ddpHeaderLength == 0)) {
            throw new IllegalArgumentException("terminated RDMA header must be a 28-byte Read Request header after a "
                    + "DDP header (RFC 5040 §4.8): " + rdmapHeaderLength);
        }
        int hdrct = (segmentLengthValid ? HDRCT_M : 0) | (ddpHeaderLength > 0 ? HDRCT_D : 0)
                | (rdmapHeaderLength > 0 ? HDRCT_R : 0);
        dst.putInt(index, code.controlBits() | hdrct);
        int n = CONTROL_LENGTH;
        if (hdrct != 0) {
            dst.putShort(index + n, (short) ddpSegmentLength);
            n += SEGMENT_LENGTH_SIZE;
            int h = ddpHeaderLength + rdmapHeaderLength;
            if (h > 0) {
                dst.put(index + n, headers, headersIndex, h);
                n += h;
            }
        }
        return n;
    }

    /** Decodes a Terminate payload; throws {@link RdmapFormatException} naming the field on bad input. */
    public static TerminateMessage decode(ByteBuffer src, int index, int length) {
        if (length < CONTROL_LENGTH) {
            throw new RdmapFormatException("Terminate payload of " + length + " bytes is shorter than its 4-byte "
                    + "control field (RFC 5040 §4.8)");
        }
        int word = src.getInt(index);
        boolean siwLayout = (word & HDRCT_RFC_MASK) == 0 && (word & HDRCT_SIW_MASK) != 0;
        TermCode code = siwLayout ? TermCode.fromSiwControlWord(word) : TermCode.fromControlWord(word);
        if (!siwLayout && (word & HDRCT_RFC_MASK) == 0 && !code.isDefined()) {
            // No Hdrct bit tells the layout: an undefined layer/etype pair that is defined with the
            // nibbles swapped is siw's word.
            TermCode swapped = TermCode.fromSiwControlWord(word);
            if (swapped.isDefined()) {
                code = swapped;
            }
        }
        boolean m = (word & (siwLayout ? SIW_HDRCT_M : HDRCT_M)) != 0;
        boolean d = (word & (siwLayout ? SIW_HDRCT_D : HDRCT_D)) != 0;
        boolean r = (word & (siwLayout ? SIW_HDRCT_R : HDRCT_R)) != 0;
        if (r && !d) {
            throw new RdmapFormatException("Terminate Hdrct has R without D: the RDMA header follows the DDP header "
                    + "(RFC 5040 §4.8)");
        }
        int n = CONTROL_LENGTH;
        int segLen = 0;
        byte[] ddp = new byte[0];
        byte[] rdma = new byte[0];
        if (m || d) {
            if (length < n + SEGMENT_LENGTH_SIZE) {
                throw new RdmapFormatException("Terminate payload of " + length + " bytes lacks the DDP Segment Length "
                        + "its Hdrct announces (RFC 5040 §4.8)");
            }
            segLen = src.getShort(index + n) & 0xFFFF;
            n += SEGMENT_LENGTH_SIZE;
        }
        if (d) {
            if (length < n + 1) {
                throw new RdmapFormatException("Terminate payload of " + length + " bytes lacks the Terminated DDP "
                        + "Header (RFC 5040 §4.8)");
            }
            int hl = DdpHeader.headerLength(src.get(index + n) & 0xFF);
            if (length < n + hl) {
                throw new RdmapFormatException("Terminate payload of " + length + " bytes truncates the " + hl
                        + "-byte Terminated DDP Header (RFC 5040 §4.8)");
            }
            ddp = new byte[hl];
            src.get(index + n, ddp);
            n += hl;
        }
        if (r) {
            if (length < n + ReadRequestHeader.LENGTH) {
                throw new RdmapFormatException("Terminate payload of " + length + " bytes truncates the 28-byte "
                        + "Terminated RDMA Header (RFC 5040 §4.8)");
            }
            rdma = new byte[ReadRequestHeader.LENGTH];
            src.get(index + n, rdma);
        }
        return new TerminateMessage(code, m, d, r, segLen, ddp, rdma);
    }
}
