package org.jwarp.disni.impl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.jwarp.negotiation.RtrType;
import org.junit.jupiter.api.Test;

class RoceEnvelopeTest {
    @Test
    void irdOrdWordsUseTheRfc6581LayoutAndFlags_6581_9_1() {
        byte[] b = RoceEnvelope.encode(0x0123, 0x0045, true, EnumSet.of(RtrType.SEND, RtrType.READ), new byte[] {9},
                RoceEnvelope.IB_REQ_PRIVATE_DATA, "request");
        assertEquals(RoceEnvelope.HEADER_LENGTH + 1, b.length);
        assertEquals(0x6A, b[0] & 0xFF);
        assertEquals(0x77, b[1] & 0xFF);
        assertEquals(1, b[3]);
        // IRD word: A (0x8000) | B (0x4000) | 0x0123, big-endian
        assertEquals(0xC1, b[4] & 0xFF);
        assertEquals(0x23, b[5] & 0xFF);
        // ORD word: D (0x4000) | 0x0045, no C
        assertEquals(0x40, b[6] & 0xFF);
        assertEquals(0x45, b[7] & 0xFF);
        assertEquals(9, b[8]);
    }

    @Property
    void roundTripsThroughPaddedIbCmPayload(@ForAll @IntRange(max = 0x3FFF) int ird, @ForAll @IntRange(max = 0x3FFF) int ord,
            @ForAll boolean p2p, @ForAll @Size(max = 48) byte[] ulp) {
        Set<RtrType> rtr = p2p ? EnumSet.of(RtrType.WRITE) : EnumSet.noneOf(RtrType.class);
        byte[] enc = RoceEnvelope.encode(ird, ord, p2p, rtr, ulp, RoceEnvelope.IB_REQ_PRIVATE_DATA, "request");
        byte[] padded = Arrays.copyOf(enc, RoceEnvelope.IB_REQ_PRIVATE_DATA); // the IB CM zero-pads
        RoceEnvelope.Decoded d = RoceEnvelope.decode(padded);
        assertEquals(ird, d.ird());
        assertEquals(ord, d.ord());
        assertEquals(p2p, d.peerToPeer());
        assertEquals(rtr, d.rtr());
        assertArrayEquals(ulp, d.ulpData());
    }

    @Property
    void foreignPrivateDataIsNotMistakenForAnEnvelope(@ForAll @Size(max = 64) byte[] data) {
        RoceEnvelope.Decoded d = RoceEnvelope.decode(data);
        if (d != null) {
            assertTrue(data[0] == 0x6A && data[1] == 0x77 && data[2] == 1, "decoded without magic and version");
            assertTrue(RoceEnvelope.HEADER_LENGTH + (data[3] & 0xFF) <= data.length);
        }
    }

    @Test
    void truncatedEnvelopeIsForeign() {
        byte[] enc = RoceEnvelope.encode(1, 1, false, Set.of(), new byte[10], 196, "reply");
        assertNull(RoceEnvelope.decode(Arrays.copyOf(enc, enc.length - 1)));
    }

    @Test
    void privateDataBeyondTheIbCmRoomIsRejectedNamingTheLimit() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RoceEnvelope.encode(1, 1, false, Set.of(), new byte[49], RoceEnvelope.IB_REQ_PRIVATE_DATA, "request"));
        assertTrue(e.getMessage().contains("privateData") && e.getMessage().contains("48"), e.getMessage());
    }

    @Test
    void irdOutside14BitsIsRejected_6581_9_1() {
        assertThrows(IllegalArgumentException.class,
                () -> RoceEnvelope.encode(0x4000, 1, false, Set.of(), new byte[0], 56, "request"));
    }
}
