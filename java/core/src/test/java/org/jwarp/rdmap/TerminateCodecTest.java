package org.jwarp.rdmap;

import org.jwarp.ground.TermCode;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.jwarp.ddp.DdpHeader;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class TerminateCodecTest {

    @Test
    @DisplayName("RFC 5040 §4.8: control word layer|etype|code|M|D|R, segment length, DDP and RDMA headers round-trip")
    void roundTripWithHeaders_5040_4_8() {
        ByteBuffer hdrs = ByteBuffer.allocate(46);
        new DdpHeader().wrap(hdrs, 0).putUntagged(true, RdmapOpcode.control(RdmapOpcode.READ_REQUEST), 0, 1, 9, 0);
        ReadRequestHeader.put(hdrs, 18, 0x100, 0x200, 300, 0x400, 0x500);
        ByteBuffer out = ByteBuffer.allocate(64);
        int n = TerminateCodec.encode(out, 0, TermCode.RDMAP_CATASTROPHIC_STREAM, 46, hdrs, 0, 18, 28, true);
        assertEquals(4 + 2 + 18 + 28, n);
        assertEquals(0x0207_0000 | 0x8000 | 0x4000 | 0x2000, out.getInt(0));
        assertEquals(46, out.getShort(4));
        TerminateMessage t = TerminateCodec.decode(out, 0, n);
        assertEquals(TermCode.RDMAP_CATASTROPHIC_STREAM, t.code());
        assertTrue(t.m() && t.d() && t.r());
        assertEquals(46, t.ddpSegmentLength());
        byte[] ddp = new byte[18];
        hdrs.get(0, ddp);
        assertArrayEquals(ddp, t.ddpHeader());
        assertEquals(300, ReadRequestHeader.size(ByteBuffer.wrap(t.rdmapHeader()), 0));
    }

    @Test
    @DisplayName("RFC 5040 §4.8: a tagged offending header is 14 bytes")
    void taggedHeader_5040_4_8() {
        ByteBuffer hdrs = ByteBuffer.allocate(14);
        new DdpHeader().wrap(hdrs, 0).putTagged(true, 0x40, 77, 88);
        ByteBuffer out = ByteBuffer.allocate(64);
        int n = TerminateCodec.encode(out, 0, TermCode.DDP_TAGGED_BASE_BOUNDS, 30, hdrs, 0, 14, 0, true);
        assertEquals(20, n);
        TerminateMessage t = TerminateCodec.decode(out, 0, n);
        assertEquals(14, t.ddpHeader().length);
        assertFalse(t.r());
        assertEquals(0, t.rdmapHeader().length);
    }

    @Test
    @DisplayName("Interop rule 4: layer-2 TERMs with etype 0 (RFC) and 3 (cxgb4/irdma) both decode as MPA errors")
    void layer2EtypeZeroOrThree() {
        for (int etype : new int[] {0, 3}) {
            ByteBuffer b = ByteBuffer.allocate(4);
            b.putInt(0, (2 << 28) | (etype << 24) | (0x02 << 16));
            TerminateMessage t = TerminateCodec.decode(b, 0, 4);
            assertTrue(t.code().isMpa());
            assertEquals(2, t.code().ecode());
            assertFalse(t.m() || t.d() || t.r());
        }
    }

    @Test
    @DisplayName("RFC 5040 §4.8: truncated or inconsistent Terminate payloads are typed errors naming the section")
    void malformedIsTyped_5040_4_8() {
        ByteBuffer b = ByteBuffer.allocate(64);
        assertThrows(RdmapFormatException.class, () -> TerminateCodec.decode(b, 0, 3));
        b.putInt(0, TerminateCodec.HDRCT_R);
        RdmapFormatException e = assertThrows(RdmapFormatException.class, () -> TerminateCodec.decode(b, 0, 64));
        assertTrue(e.getMessage().contains("RFC 5040 §4.8"));
        b.putInt(0, TerminateCodec.HDRCT_D | TerminateCodec.HDRCT_M);
        assertThrows(RdmapFormatException.class, () -> TerminateCodec.decode(b, 0, 5));
        b.put(6, (byte) 0x41);
        assertThrows(RdmapFormatException.class, () -> TerminateCodec.decode(b, 0, 6 + 17));
        assertEquals(18, TerminateCodec.decode(b, 0, 6 + 18).ddpHeader().length);
        b.putInt(0, TerminateCodec.HDRCT_D | TerminateCodec.HDRCT_R);
        assertThrows(RdmapFormatException.class, () -> TerminateCodec.decode(b, 0, 6 + 18 + 27));
    }

    @Test
    void encodeRejectsImpossibleHeaderLengths() {
        ByteBuffer b = ByteBuffer.allocate(64);
        assertThrows(IllegalArgumentException.class,
                () -> TerminateCodec.encode(b, 0, TermCode.MPA_CRC_ERROR, 0, b, 0, 10, 0, true));
        assertThrows(IllegalArgumentException.class,
                () -> TerminateCodec.encode(b, 0, TermCode.MPA_CRC_ERROR, 0, b, 0, 0, 28, true));
    }

    @Test
    @DisplayName("RFC 5040 §4.8 interop: siw's TERM with M/D in bits 8-9 decodes with its DDP header")
    void siwHdrctPlacementIsAccepted_5040_4_8() {
        // Bytes kernel 6.1 siw sent for an RDMA Write to an invalid STag (interop suite, tagged header).
        ByteBuffer b = ByteBuffer.wrap(java.util.HexFormat.of().parseHex(
                "11000300" + "0040" + "c140" + "00001234" + "0000000000000010"));
        TerminateMessage t = TerminateCodec.decode(b, 0, b.remaining());
        assertEquals(new TermCode(1, 1, 0), t.code());
        assertTrue(t.m() && t.d());
        assertFalse(t.r());
        assertEquals(0x40, t.ddpSegmentLength());
        assertEquals(DdpHeader.TAGGED_HEADER_LENGTH, t.ddpHeader().length);
        assertEquals((byte) 0xc1, t.ddpHeader()[0]);
        // The RFC positions win when both are set, and we always send the RFC layout.
        ByteBuffer rfc = ByteBuffer.allocate(6).putInt(0, 0x1100_0000 | TerminateCodec.HDRCT_M | TerminateCodec.SIW_HDRCT_D);
        TerminateMessage m = TerminateCodec.decode(rfc, 0, 6);
        assertTrue(m.m());
        assertFalse(m.d(), "with an RFC Hdrct bit set, the reserved bits stay reserved");
    }

    @Test
    @DisplayName("RFC 5040 §4.8 interop: siw's swapped layer/etype nibbles (Hdrct in bits 8-10) decode as DDP untagged")
    void siwSwappedNibblesAreRead_5040_4_8() {
        // Bytes kernel 6.1 siw sent for a 64-byte Send into a 32-byte receive (interop suite):
        // byte 0 is etype(2)<<4 | layer(1), Hdrct M and D in bits 8 and 9.
        ByteBuffer b = ByteBuffer.wrap(java.util.HexFormat.of().parseHex(
                "21020300" + "0040" + "4140" + "00000000" + "00000000" + "00000002" + "00000000"));
        TerminateMessage t = TerminateCodec.decode(b, 0, b.remaining());
        assertEquals(TermCode.DDP_UNTAGGED_MSN_NO_BUFFER, t.code());
        assertTrue(t.m() && t.d());
        assertEquals(DdpHeader.UNTAGGED_HEADER_LENGTH, t.ddpHeader().length);
        // The RFC order is kept whenever an RFC Hdrct bit is set.
        ByteBuffer rfc = ByteBuffer.allocate(6).putInt(0, 0x1202_0000 | TerminateCodec.HDRCT_M);
        assertEquals(TermCode.DDP_UNTAGGED_MSN_NO_BUFFER, TerminateCodec.decode(rfc, 0, 6).code());
        ByteBuffer rfcSiw = ByteBuffer.allocate(6).putInt(0, 0x2102_0000 | TerminateCodec.HDRCT_M);
        assertEquals(new TermCode(2, 1, 2), TerminateCodec.decode(rfcSiw, 0, 6).code(),
                "an RFC-layout word is never reinterpreted");
    }

    @Test
    @DisplayName("RFC 5040 §4.8: with no Hdrct bit, an undefined layer/etype pair that is defined swapped is read swapped")
    void undefinedPairWithoutHdrctIsReadSwapped_5040_4_8() {
        ByteBuffer swapped = ByteBuffer.allocate(4).putInt(0, 0x2105_0000);
        assertEquals(TermCode.DDP_UNTAGGED_MESSAGE_TOO_LONG, TerminateCodec.decode(swapped, 0, 4).code());
        ByteBuffer defined = ByteBuffer.allocate(4).putInt(0, 0x0106_0000);
        assertEquals(TermCode.RDMAP_UNEXPECTED_OPCODE.layer(), TerminateCodec.decode(defined, 0, 4).code().layer(),
                "a defined pair keeps RFC order");
        ByteBuffer mpa = ByteBuffer.allocate(4).putInt(0, TermCode.MPA_NO_MATCHING_RTR.controlBits());
        assertEquals(TermCode.MPA_NO_MATCHING_RTR, TerminateCodec.decode(mpa, 0, 4).code());
        ByteBuffer cxgb = ByteBuffer.allocate(4).putInt(0, 0x2307_0000);
        assertTrue(TerminateCodec.decode(cxgb, 0, 4).code().isMpa(), "cxgb4/irdma's layer 2 etype 3 stays MPA");
        ByteBuffer junk = ByteBuffer.allocate(4).putInt(0, 0x7f01_0000);
        assertEquals(new TermCode(7, 15, 1), TerminateCodec.decode(junk, 0, 4).code(),
                "undefined both ways: reported as received");
    }
}
