package org.jwarp.mpa;

import org.jwarp.ground.DecodeException;
import org.jwarp.ground.TermCode;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.jwarp.sctp.SessionControlDecodeException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class FieldChecksTest {

    @Test
    @DisplayName("RFC 6581 §9.1: IRD/ORD accept 0..0x3FFF and refuse anything outside 14 bits, naming the field")
    void irdOrdIs14Bit_6581_9_1() {
        assertEquals(0, FieldChecks.irdOrd("ird", 0));
        assertEquals(0x3FFF, FieldChecks.irdOrd("ird", 0x3FFF));
        IllegalArgumentException high = assertThrows(IllegalArgumentException.class, () -> FieldChecks.irdOrd("maxIrd", 0x4000));
        assertEquals("maxIrd: 16384 is outside the 14-bit range 0..16383 (RFC 6581 §9.1)", high.getMessage());
        IllegalArgumentException low = assertThrows(IllegalArgumentException.class, () -> FieldChecks.irdOrd("ord", -1));
        assertTrue(low.getMessage().startsWith("ord: -1 "), low.getMessage());
    }

    @Test
    @DisplayName("RFC 5044 §7.1.1 / RFC 6581 §9: ULP private data fits the limit less the 4 enhanced bytes")
    void ulpPrivateDataLimit_5044_7_1_1() {
        assertDoesNotThrow(() -> FieldChecks.ulpPrivateData("privateData", 512, MpaFrameLimits.RFC, false));
        assertDoesNotThrow(() -> FieldChecks.ulpPrivateData("privateData", 508, MpaFrameLimits.RFC, true));
        IllegalArgumentException plain = assertThrows(IllegalArgumentException.class,
                () -> FieldChecks.ulpPrivateData("privateData", 513, MpaFrameLimits.RFC, false));
        assertEquals("privateData: 513 bytes of ULP private data exceed the limit of 512 (RFC 5044 §7.1.1)", plain.getMessage());
        IllegalArgumentException enhanced = assertThrows(IllegalArgumentException.class,
                () -> FieldChecks.ulpPrivateData("MPA Private Data", 509, MpaFrameLimits.RFC, true));
        assertEquals("MPA Private Data: 509 bytes of ULP private data exceed the limit of 508 (RFC 5044 §7.1.1, "
                + "4 bytes taken by RFC 6581 §9 enhanced data)", enhanced.getMessage());
        assertThrows(IllegalArgumentException.class, () -> FieldChecks.ulpPrivateData("privateData", 252, MpaFrameLimits.SIW, false));
    }

    @Test
    @DisplayName("RFC 6581 §9.2: peer-to-peer needs an RTR type; client-server needs none")
    void peerToPeerNeedsRtrType_6581_9_2() {
        assertDoesNotThrow(() -> FieldChecks.rtrTypeForPeerToPeer("rtr", false, List.of()));
        assertDoesNotThrow(() -> FieldChecks.rtrTypeForPeerToPeer("rtr", true, List.of("read")));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> FieldChecks.rtrTypeForPeerToPeer("rtrTypes", true, List.of()));
        assertEquals("rtrTypes: peer-to-peer mode needs at least one RTR type (RFC 6581 §9.2)", e.getMessage());
    }

    @Test
    void privateDataCopyIsACopyOrEmpty() {
        byte[] in = {1, 2, 3};
        byte[] out = FieldChecks.privateDataCopy(in);
        assertArrayEquals(in, out);
        assertNotSame(in, out);
        assertEquals(0, FieldChecks.privateDataCopy(null).length);
    }

    @Test
    @DisplayName("Every decoder's exception extends the one DecodeException base and carries its TERM")
    void decodeExceptionsShareTheBase() {
        DecodeException mpa = new MpaDecodeException("MPA PD_Length", "600 exceeds 512", "RFC 5044 §7.1.1");
        DecodeException sc = new SessionControlDecodeException("Function Code", "9 is reserved", "RFC 5043 §4");
        assertEquals("MPA PD_Length: 600 exceeds 512 (RFC 5044 §7.1.1)", mpa.getMessage());
        assertEquals("Function Code", sc.field());
        assertEquals("RFC 5043 §4", sc.rfcSection());
        assertInstanceOf(DecodeException.class, mpa);
        assertInstanceOf(DecodeException.class, sc);
        assertEquals(TermCode.MPA_INVALID_REQ_REP, mpa.term());
        DecodeException fpdu = new FpduFormatException("ULPDU_Length 70000 outside 0..65535 (RFC 5044 §4.1)");
        DecodeException ddp = new org.jwarp.ddp.DdpFormatException("DDP segment of 1 bytes has no control field");
        DecodeException rdmap = new org.jwarp.rdmap.RdmapFormatException("Terminate payload of 3 bytes");
        assertEquals(TermCode.MPA_MARKER_OR_FPDU_ERROR, fpdu.term());
        assertEquals(TermCode.DDP_LOCAL_CATASTROPHIC, ddp.term());
        assertEquals(TermCode.RDMAP_CATASTROPHIC_STREAM, rdmap.term());
    }
}
