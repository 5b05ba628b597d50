package org.jwarp.soft.cm;

import java.nio.ByteBuffer;

import org.jwarp.ddp.DdpHeader;
import org.jwarp.mpa.Fpdu;
import org.jwarp.mpa.FpduEncoder;
import org.jwarp.rdmap.RdmapFormatException;
import org.jwarp.rdmap.RdmapOpcode;
import org.jwarp.ground.TermCode;
import org.jwarp.rdmap.TerminateCodec;
import org.jwarp.rdmap.TerminateMessage;

/**
 * The TERM jobs of connection setup, outside the RDMAP engine (RFC 5040 §4.8 with the MPA codes
 * of RFC 5044 §8 and RFC 6581 §8): recognising a TERM where an MPA frame or the first FPDU was expected, and sending
 * an MPA-layer TERM before CRC is active (its CRC field is 0, as Linux siw sends it). A TERM is an
 * untagged DDP message on QN 2, MSN 1, MO 0 with RDMAP opcode 7; the payload is the wire
 * engine's {@link TerminateCodec}.
 */
public final class SetupTerm {
    private static final int SETUP_ULPDU = DdpHeader.UNTAGGED_HEADER_LENGTH + TerminateCodec.CONTROL_LENGTH;

    private SetupTerm() {
    }

    /** True when the FPDU at {@code start} (its first 2 + 18 bytes present) carries a Terminate message. */
    public static boolean isTerm(ByteBuffer in, int start) {
        if (in.limit() - start < Fpdu.ULPDU_OFFSET + DdpHeader.UNTAGGED_HEADER_LENGTH) {
            return false;
        }
        int seg = start + Fpdu.ULPDU_OFFSET;
        int control = in.get(seg + DdpHeader.CONTROL_OFFSET) & 0xFF;
        int rdmap = in.get(seg + DdpHeader.RSVD_ULP_OFFSET) & 0xFF;
        return (control & DdpHeader.T_FLAG) == 0 && RdmapOpcode.opcode(rdmap) == RdmapOpcode.TERMINATE
                && in.getInt(seg + DdpHeader.QN_OFFSET) == RdmapOpcode.QN_TERMINATE;
    }

    /**
     * If the stream bytes from {@code start} of {@code in} begin with a whole FPDU carrying a
     * Terminate message, the message (its CRC is not checked: setup TERMs carry 0); else null.
     */
    public static TerminateMessage decode(ByteBuffer in, int start) {
        if (!isTerm(in, start) || in.limit() - start < Fpdu.ULPDU_OFFSET + SETUP_ULPDU) {
            return null;
        }
        int ulpdu = in.getShort(start) & 0xFFFF;
        int payload = Math.min(ulpdu, in.limit() - start - Fpdu.ULPDU_OFFSET) - DdpHeader.UNTAGGED_HEADER_LENGTH;
        int at = start + Fpdu.ULPDU_OFFSET + DdpHeader.UNTAGGED_HEADER_LENGTH;
        try {
            return TerminateCodec.decode(in, at, payload);
        } catch (RdmapFormatException e) {
            return new TerminateMessage(TermCode.fromControlWord(in.getInt(at)), false, false, false, 0, new byte[0],
                    new byte[0]);
        }
    }

    /** The TERM code if {@link #decode} finds one, else null. */
    public static TermCode sniff(ByteBuffer in, int start) {
        TerminateMessage m = decode(in, start);
        return m == null ? null : m.code();
    }

    /** Appends an MPA-layer TERM FPDU (no appended header, CRC 0) at {@code tx}'s position. */
    public static void encodeSetupTerm(ByteBuffer tx, TermCode code) {
        if (tx.remaining() < Fpdu.fpduLength(SETUP_ULPDU)) {
            return;
        }
        FpduEncoder noCrc = new FpduEncoder(false, false); // cold path: setup failures only
        int at = noCrc.ulpduIndex(tx);
        new DdpHeader().wrap(tx, at).putUntagged(true, RdmapOpcode.control(RdmapOpcode.TERMINATE), 0,
                RdmapOpcode.QN_TERMINATE, 1, 0);
        int n = TerminateCodec.encode(tx, at + DdpHeader.UNTAGGED_HEADER_LENGTH, code, 0, tx, 0, 0, 0, false);
        noCrc.finish(tx, DdpHeader.UNTAGGED_HEADER_LENGTH + n);
    }
}
