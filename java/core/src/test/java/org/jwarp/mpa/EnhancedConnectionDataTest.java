package org.jwarp.mpa;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class EnhancedConnectionDataTest {

    @Test
    void bitLayoutIsABIrdCDOrdBigEndian_6581_9() {
        assertEquals("8000" + "0000", hex(new EnhancedConnectionData(true, false, false, false, 0, 0)));
        assertEquals("4000" + "0000", hex(new EnhancedConnectionData(false, true, false, false, 0, 0)));
        assertEquals("0000" + "8000", hex(new EnhancedConnectionData(false, false, true, false, 0, 0)));
        assertEquals("0000" + "4000", hex(new EnhancedConnectionData(false, false, false, true, 0, 0)));
        assertEquals("3fff" + "0001", hex(new EnhancedConnectionData(false, false, false, false, 0x3FFF, 1)));
        assertEquals("c102" + "c304", hex(new EnhancedConnectionData(true, true, true, true, 0x102, 0x304)));
    }

    @Test
    void irdAndOrdAre14Bits_6581_9() {
        assertThrows(IllegalArgumentException.class, () -> new EnhancedConnectionData(false, false, false, false, 0x4000, 0));
        assertThrows(IllegalArgumentException.class, () -> new EnhancedConnectionData(false, false, false, false, 0, -1));
        EnhancedConnectionData d = EnhancedConnectionData.get(ByteBuffer.wrap(new byte[] {(byte) 0xFF, (byte) 0xFF,
                (byte) 0xFF, (byte) 0xFF}), 0);
        assertEquals(0x3FFF, d.ird());
        assertEquals(0x3FFF, d.ord());
        assertTrue(d.peerToPeer() && d.sendRtr() && d.writeRtr() && d.readRtr());
    }

    @Test
    void rtrFlagsIgnoredWithoutA_6581_9_2() {
        EnhancedConnectionData d = new EnhancedConnectionData(false, true, true, true, 1, 1);
        assertFalse(d.offersRtr());
        assertTrue(new EnhancedConnectionData(true, false, false, true, 1, 1).offersRtr());
    }

    private static String hex(EnhancedConnectionData d) {
        byte[] b = d.toBytes();
        assertEquals(d, EnhancedConnectionData.get(ByteBuffer.wrap(b), 0));
        return HexFormat.of().formatHex(b);
    }
}
