package org.jwarp.mpa;

import org.jwarp.ground.DecodeException;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class MpaFrameCodecTest {
    private static final HexFormat HEX = HexFormat.of();

    @Test
    void requestKeyIsMpaIdReqFrame_5044_7_1_1() {
        byte[] b = MpaFrame.request().revision(1).build().toBytes();
        assertEquals("MPA ID Req Frame", new String(b, 0, 16, StandardCharsets.US_ASCII));
        byte[] r = MpaFrame.reply().revision(1).build().toBytes();
        assertEquals("MPA ID Rep Frame", new String(r, 0, 16, StandardCharsets.US_ASCII));
    }

    @Test
    void enhancedRequestWireBytes_6581_6_and_9() {
        MpaFrame f = MpaFrame.request().crc(true).revision(2)
                .enhancedData(new EnhancedConnectionData(true, false, true, true, 16, 8))
                .ulpPrivateData(new byte[] {(byte) 0xAB}).build();
        byte[] b = f.toBytes();
        // M=0 C=1 R=0 S=1 -> 0x50; Rev 2; PD_Length 5; A|IRD=0x8010; C|D|ORD=0xC008; then ULP byte.
        assertEquals("50020005" + "8010c008" + "ab", HEX.formatHex(b, 16, b.length));
        assertEquals(25, f.encodedLength());
        assertEquals(5, f.privateDataLength());
    }

    @Test
    void flagBitsEachMapToTheirPosition_5044_7_1_1() throws Exception {
        MpaFrame f = MpaFrame.reply().marker(true).crc(false).reject(true).revision(1).build();
        byte[] b = f.toBytes();
        assertEquals((byte) 0xA0, b[16]);
        MpaFrame d = MpaFrame.decode(b, MpaFrameLimits.RFC);
        assertTrue(d.marker());
        assertFalse(d.crc());
        assertTrue(d.reject());
        assertFalse(d.enhanced());
    }

    @Test
    void reservedBitsIgnoredOnReceive_5044_7_1_1() throws Exception {
        byte[] b = MpaFrame.reply().crc(true).revision(1).build().toBytes();
        b[16] |= 0x0F;
        MpaFrame d = MpaFrame.decode(b, MpaFrameLimits.RFC);
        assertTrue(d.crc());
        assertFalse(d.marker());
        // Re-encoding writes Res as zero.
        assertEquals(0x40, d.toBuilder().build().toBytes()[16] & 0xFF);
    }

    @Test
    void reservedBitsZeroOnSend_5044_7_1_1() {
        for (boolean m : new boolean[] {false, true}) {
            for (boolean c : new boolean[] {false, true}) {
                byte flags = MpaFrame.reply().marker(m).crc(c).reject(true).revision(2)
                        .enhancedData(new EnhancedConnectionData(false, false, false, false, 1, 1)).build().toBytes()[16];
                assertEquals(0, flags & MpaRequestReplyFlyweight.RES_MASK);
            }
        }
    }

    @Test
    void rejectBitNotCheckedInRequest_5044_7_1_1() throws Exception {
        byte[] b = MpaFrame.request().revision(1).build().toBytes();
        b[16] |= MpaRequestReplyFlyweight.R_BIT;
        assertFalse(MpaFrame.decode(b, MpaFrameLimits.RFC).reject());
    }

    @Test
    void requestMayNotBeBuiltWithReject_5044_7_1_1() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> MpaFrame.request().reject(true).revision(1).build());
        assertTrue(e.getMessage().contains("RFC 5044 §7.1.1"), e.getMessage());
    }

    @Test
    void sBitMeaningfulFromRev2On_6581_6() throws Exception {
        byte[] b = MpaFrame.request().revision(1).ulpPrivateData(new byte[] {1, 2, 3, 4, 5}).build().toBytes();
        b[16] |= MpaRequestReplyFlyweight.S_BIT;
        MpaFrame d = MpaFrame.decode(b, MpaFrameLimits.RFC);
        assertFalse(d.enhanced(), "in Rev 1 the S position is RFC 5044's Res, not checked");
        assertNull(d.enhancedData());
        assertArrayEquals(new byte[] {1, 2, 3, 4, 5}, d.ulpPrivateData());
        // §6: enhanced features need Rev "two or higher": Rev 3 with S carries enhanced data.
        b[17] = 3;
        MpaFrame r3 = MpaFrame.decode(b, MpaFrameLimits.RFC);
        assertTrue(r3.enhanced());
        assertEquals(new EnhancedConnectionData(false, false, false, false, 0x0102 & 0x3FFF, 0x0304 & 0x3FFF),
                r3.enhancedData());
        assertArrayEquals(new byte[] {5}, r3.ulpPrivateData());
        assertEquals(3, MpaFrame.request().revision(3)
                .enhancedData(new EnhancedConnectionData(true, false, true, false, 1, 1)).build().revision());
        assertThrows(IllegalArgumentException.class, () -> MpaFrame.request().revision(1)
                .enhancedData(new EnhancedConnectionData(false, false, false, false, 0, 0)).build());
    }

    @Test
    void enhancedFrameWithShortPrivateDataRejected_6581_9() {
        byte[] b = MpaFrame.request().revision(2).ulpPrivateData(new byte[] {1, 2, 3}).build().toBytes();
        b[16] |= MpaRequestReplyFlyweight.S_BIT;
        MpaDecodeException e = assertThrows(MpaDecodeException.class, () -> MpaFrame.decode(b, MpaFrameLimits.RFC));
        assertEquals("MPA PD_Length", e.field());
        assertEquals("RFC 6581 §9", e.rfcSection());
    }

    @Test
    void privateDataAbove512Rejected_5044_7_1_1() {
        byte[] b = new byte[20 + 513];
        System.arraycopy(MpaRequestReplyFlyweight.key(false), 0, b, 0, 16);
        b[17] = 1;
        b[18] = 0x02;
        b[19] = 0x01;
        MpaDecodeException e = assertThrows(MpaDecodeException.class, () -> MpaFrame.decode(b, MpaFrameLimits.RFC));
        assertEquals("MPA PD_Length", e.field());
        assertTrue(e.getMessage().contains("513") && e.getMessage().contains("RFC 5044 §7.1.1"), e.getMessage());
    }

    @Test
    void localLimitBelow512Enforced_siwProfile() throws Exception {
        MpaFrame ok = MpaFrame.request().revision(2).limits(MpaFrameLimits.SIW)
                .enhancedData(new EnhancedConnectionData(true, false, true, false, 1, 1))
                .ulpPrivateData(new byte[251]).build();
        assertEquals(ok, MpaFrame.decode(ok.toBytes(), MpaFrameLimits.SIW));
        assertThrows(IllegalArgumentException.class, () -> MpaFrame.request().revision(2).limits(MpaFrameLimits.SIW)
                .enhancedData(new EnhancedConnectionData(true, false, true, false, 1, 1))
                .ulpPrivateData(new byte[252]).build());
        byte[] big = MpaFrame.request().revision(1).ulpPrivateData(new byte[257]).build().toBytes();
        MpaDecodeException e = assertThrows(MpaDecodeException.class, () -> MpaFrame.decode(big, MpaFrameLimits.SIW));
        assertTrue(e.getMessage().contains("local limit of 256"), e.getMessage());
    }

    @Test
    void badKeyRejected_5044_7_1_1() {
        byte[] b = MpaFrame.request().revision(1).build().toBytes();
        b[4] = 'X';
        MpaDecodeException e = assertThrows(MpaDecodeException.class, () -> MpaFrame.decode(b, MpaFrameLimits.RFC));
        assertEquals("MPA Key", e.field());
    }

    @Test
    void truncatedAndTrailingBytesRejected_5044_7_1_2() {
        byte[] b = MpaFrame.reply().revision(1).ulpPrivateData(new byte[] {9, 9}).build().toBytes();
        assertThrows(MpaDecodeException.class, () -> MpaFrame.decode(java.util.Arrays.copyOf(b, 21), MpaFrameLimits.RFC));
        assertThrows(MpaDecodeException.class, () -> MpaFrame.decode(java.util.Arrays.copyOf(b, 10), MpaFrameLimits.RFC));
        MpaDecodeException e = assertThrows(MpaDecodeException.class,
                () -> MpaFrame.decode(java.util.Arrays.copyOf(b, b.length + 1), MpaFrameLimits.RFC));
        assertEquals("RFC 5044 §7.1.2", e.rfcSection());
    }

    @Test
    void roundTripAtOffsetInLittleEndianDirectBuffer() throws Exception {
        MpaFrame f = MpaFrame.reply().crc(true).revision(2)
                .enhancedData(new EnhancedConnectionData(true, true, false, false, 0x3FFF, 0x1234 & 0x3FFF))
                .ulpPrivateData(new byte[] {1, 2, 3}).build();
        ByteBuffer buf = ByteBuffer.allocateDirect(100).order(ByteOrder.LITTLE_ENDIAN);
        f.encodeTo(buf, 7);
        assertEquals(0, buf.position());
        assertEquals(f, MpaFrame.decode(buf, 7, f.encodedLength(), MpaFrameLimits.RFC));
        assertEquals((byte) 0xFF, buf.get(7 + 21)); // IRD low byte, big-endian
    }

    @Test
    void exceptionIsMalformedInputForTheCli() {
        Object e = new MpaDecodeException("MPA Rev", "bad", "RFC 5044 §7.1.1");
        assertTrue(e instanceof DecodeException);
        assertEquals("MPA Rev: bad (RFC 5044 §7.1.1)", ((Exception) e).getMessage());
    }
}
