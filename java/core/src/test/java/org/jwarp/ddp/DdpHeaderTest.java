package org.jwarp.ddp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class DdpHeaderTest {

    @Test
    @DisplayName("RFC 5041 §4.1: control field T, L, reserved zero, DV = 1; RsvdULP passed through")
    void controlField_5041_4_1() {
        ByteBuffer b = ByteBuffer.allocate(32);
        DdpHeader h = new DdpHeader().wrap(b, 0);
        h.putTagged(true, 0x40, 1, 0);
        assertEquals(0xC1, b.get(0) & 0xFF);
        assertEquals(0xC140, b.getShort(0) & 0xFFFF, "siw's RDMA Write last-segment control word");
        h.putTagged(false, 0x42, 1, 0);
        assertEquals(0x81, b.get(0) & 0xFF);
        h.putUntagged(true, 0x43, 0, 0, 1, 0);
        assertEquals(0x4143, b.getShort(0) & 0xFFFF, "siw's Send last-segment control word");
        h.putUntagged(false, 0x43, 0, 0, 1, 0);
        assertEquals(0x01, b.get(0) & 0xFF);
        assertEquals(0, b.get(0) & DdpHeader.RSVD_MASK, "reserved bits are zero on transmit");
        assertEquals(1, h.version());
        assertEquals(0x43, h.rsvdUlp());
    }

    @Test
    @DisplayName("RFC 5041 §4.2: tagged header is 14 bytes: control, STag(32), TO(64), big-endian")
    void taggedHeaderLayout_5041_4_2() {
        ByteBuffer b = ByteBuffer.allocate(DdpHeader.TAGGED_HEADER_LENGTH);
        new DdpHeader().wrap(b, 0).putTagged(true, 0, 0x01020304, 0x05060708090A0B0CL);
        byte[] expect = {(byte) 0xC1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
        for (int i = 0; i < expect.length; i++) {
            assertEquals(expect[i], b.get(i), "byte " + i);
        }
        DdpHeader h = new DdpHeader().wrap(b, 0);
        assertTrue(h.tagged());
        assertEquals(14, h.headerLength());
    }

    @Test
    @DisplayName("RFC 5041 §4.3: untagged header is 18 bytes: control, RsvdULP(32), QN, MSN, MO")
    void untaggedHeaderLayout_5041_4_3() {
        ByteBuffer b = ByteBuffer.allocate(DdpHeader.UNTAGGED_HEADER_LENGTH + 4);
        new DdpHeader().wrap(b, 4).putUntagged(true, 0x44, 0xAABBCCDD, 2, 7, 1482);
        assertEquals(0xAABBCCDD, b.getInt(6));
        assertEquals(2, b.getInt(10));
        assertEquals(7, b.getInt(14));
        assertEquals(1482, b.getInt(18));
        DdpHeader h = new DdpHeader().wrap(b, 4);
        assertEquals(18, h.headerLength());
        assertEquals(2, h.qn());
        assertEquals(7, h.msn());
        assertEquals(1482, h.mo());
        assertEquals(0xAABBCCDD, h.rsvdUlp32());
    }

    @Test
    @DisplayName("RFC 5041 §4.4: a segment shorter than its header is a typed error naming the section")
    void shortSegmentIsTypedError_5041_4_4() {
        ByteBuffer b = ByteBuffer.allocate(20);
        new DdpHeader().wrap(b, 0).putTagged(true, 0, 0, 0);
        DdpFormatException e = assertThrows(DdpFormatException.class, () -> new DdpHeader().wrap(b, 0)
                .requireComplete(13));
        assertTrue(e.getMessage().contains("RFC 5041 §4.2"), e.getMessage());
        new DdpHeader().wrap(b, 0).putUntagged(true, 0, 0, 0, 1, 0);
        assertThrows(DdpFormatException.class, () -> new DdpHeader().wrap(b, 0).requireComplete(17));
        assertThrows(DdpFormatException.class, () -> new DdpHeader().wrap(b, 0).requireComplete(0));
        new DdpHeader().wrap(b, 0).requireComplete(18);
    }
}
