package org.jwarp.mpa;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;
import org.jwarp.ground.TermCode;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class MarkerInserterTest {

    @Test
    @DisplayName("RFC 5044 §4.3: a marker every 512 stream bytes, FPDUPTR back to the FPDU's length field")
    void markersEvery512WithFpduPointer_5044_4_3() {
        FpduEncoder enc = new FpduEncoder(true, true);
        ByteBuffer out = ByteBuffer.allocateDirect(8192);
        // First FPDU: 1000-byte ULPDU -> 1008 bytes; starts at stream 0 with a marker.
        out.put(enc.ulpduIndex(out), new byte[1000]);
        int n1 = enc.finish(out, 1000);
        assertEquals(0, out.getInt(0), "marker at stream offset 0 with FPDUPTR 0");
        assertEquals(1000, out.getShort(4), "length field right after the leading marker");
        // Stream offset 512: marker pointing back 512 - 4 bytes to the length field at 4.
        assertEquals(512 - 4, out.getInt(512));
        assertEquals(1008 + 4 * 2, n1, "two markers inside the first FPDU's span (0 and 512)");
        // Second FPDU starts at 1016; next marker at 1024 points back 8 bytes.
        out.put(enc.ulpduIndex(out), new byte[100]);
        enc.finish(out, 100);
        assertEquals(100, out.getShort(1016));
        assertEquals(8, out.getInt(1024));
    }

    @Test
    @DisplayName("RFC 5044 §4.3: a marker whose FPDUPTR is wrong is TERM 2/0/3")
    void wrongMarkerPointerIsTerm203_5044_4_3() {
        ByteBuffer wire = FpduCodecTest.encodeAll(List.of(new byte[1000]), true, true);
        wire.putInt(512, 12);
        FpduCodecTest.Collect c = new FpduCodecTest.Collect();
        new FpduDecoder(true, true, c).feed(wire);
        assertEquals(List.of(TermCode.MPA_MARKER_OR_FPDU_ERROR), c.errors);
        assertTrue(c.ulpdus.isEmpty());
    }

    @Test
    @DisplayName("RFC 5044 §4.3: markers are stripped and excluded from ULPDU_Length and CRC")
    void markersStrippedBeforeCrc_5044_4_3() {
        byte[] u = new byte[3000];
        for (int i = 0; i < u.length; i++) {
            u[i] = (byte) i;
        }
        ByteBuffer wire = FpduCodecTest.encodeAll(List.of(u, u), true, true);
        assertEquals(2 * Fpdu.fpduLength(3000) + 4 * 12, wire.remaining());
        FpduCodecTest.Collect c = new FpduCodecTest.Collect();
        new FpduDecoder(true, true, c).feed(wire);
        assertTrue(c.errors.isEmpty());
        assertEquals(2, c.ulpdus.size());
        assertEquals(3000, c.ulpdus.get(1).length);
    }
}
