package org.jwarp.soft;

import java.nio.ByteBuffer;

import org.jwarp.ddp.DdpHeader;
import org.jwarp.mpa.Fpdu;
import org.jwarp.mpa.FpduEncoder;
import org.jwarp.rdmap.TermCode;

/**
 * The two TERM jobs of connection setup, RFC 5040 §4.8 with the MPA codes of RFC 5044 §8 and
 * RFC 6581 §8: recognising a TERM where an MPA frame was expected, and sending an MPA-layer TERM
 * before CRC is active (its CRC field is 0, as Linux siw sends it). A TERM is an untagged DDP
 * message on QN 2, MSN 1, MO 0 with RDMAP opcode 7.
 */
final class SoftTerm {
    /** RDMAP control byte (RsvdULP of DDP): RV = 1 in bits 7-6, opcode in bits 3-0 (RFC 5040 §4.2). */
    static final int RDMAP_VERSION_BITS = 0x40;
    static final int OPCODE_MASK = 0x0F;
    static final int OPCODE_TERMINATE = 7;
    /** RFC 5040 §4.8: Terminate messages use untagged queue 2. */
    static final int TERMINATE_QN = 2;
    /** Length of the TERM control word (layer, etype, ecode, header-control bits). */
    static final int TERM_HEADER_LENGTH = 4;

    private static final FpduEncoder NO_CRC = new FpduEncoder(false, false);

    private SoftTerm() {
    }

    /**
     * If the stream bytes from {@code start} of {@code in} begin with an FPDU carrying a Terminate
     * message, its code; else null. Reads absolute positions only.
     */
    static TermCode sniff(ByteBuffer in, int start) {
        int need = Fpdu.ULPDU_OFFSET + DdpHeader.UNTAGGED_HEADER_LENGTH + TERM_HEADER_LENGTH;
        if (in.limit() - start < need) {
            return null;
        }
        int seg = start + Fpdu.ULPDU_OFFSET;
        int control = in.get(seg + DdpHeader.CONTROL_OFFSET) & 0xFF;
        int rdmap = in.get(seg + DdpHeader.RSVD_ULP_OFFSET) & 0xFF;
        if ((control & DdpHeader.T_FLAG) != 0 || (rdmap & OPCODE_MASK) != OPCODE_TERMINATE
                || in.getInt(seg + DdpHeader.QN_OFFSET) != TERMINATE_QN) {
            return null;
        }
        return TermCode.fromControlWord(in.getInt(seg + DdpHeader.UNTAGGED_HEADER_LENGTH));
    }

    /** Appends an MPA-layer TERM FPDU (no appended header, CRC 0) at {@code tx}'s position. */
    static void encodeSetupTerm(ByteBuffer tx, TermCode code) {
        int ulpdu = DdpHeader.UNTAGGED_HEADER_LENGTH + TERM_HEADER_LENGTH;
        if (tx.remaining() < Fpdu.fpduLength(ulpdu)) {
            return;
        }
        int at = NO_CRC.ulpduIndex(tx);
        new DdpHeader().wrap(tx, at).putUntagged(true, RDMAP_VERSION_BITS | OPCODE_TERMINATE, 0, TERMINATE_QN, 1, 0);
        tx.putInt(at + DdpHeader.UNTAGGED_HEADER_LENGTH, code.controlBits());
        synchronized (NO_CRC) {
            NO_CRC.finish(tx, ulpdu);
        }
    }
}
