package org.jwarp.mpa;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.util.HexFormat;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class Crc32cTest {

    private static byte[] pattern(String name) {
        byte[] b = new byte[32];
        for (int i = 0; i < 32; i++) {
            b[i] = switch (name) {
                case "zeros" -> 0;
                case "ones" -> (byte) 0xFF;
                case "inc" -> (byte) i;
                default -> (byte) (31 - i);
            };
        }
        return b;
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({"zeros, aa36918a", "ones, 43aba862", "inc, 4e79dd46", "dec, 5cdb3f11"})
    @DisplayName("RFC 5044 §4.4 / RFC 3720 B.4 vectors appear on the wire in siw byte order")
    void rfc3720VectorsInSiwWireOrder_5044_4_4(String name, String wire) {
        ByteBuffer buf = ByteBuffer.allocateDirect(40);
        buf.put(0, pattern(name));
        Crc32c crc = new Crc32c();
        int value = crc.compute(buf, 0, 32);
        Crc32c.putWire(buf, 32, value);
        byte[] out = new byte[4];
        buf.get(32, out);
        assertArrayEquals(HexFormat.of().parseHex(wire), out);
        assertEquals(value, Crc32c.getWire(buf, 32));
        assertEquals(0, buf.position(), "position restored");
        assertEquals(40, buf.limit(), "limit restored");
    }

    @ParameterizedTest(name = "offset {0}")
    @CsvSource({"0", "3", "17"})
    void computesOverAbsoluteRangeOnly(int offset) {
        ByteBuffer buf = ByteBuffer.allocateDirect(64);
        for (int i = 0; i < 64; i++) {
            buf.put(i, (byte) 0x5A);
        }
        buf.put(offset, new byte[32]);
        buf.position(50).limit(60);
        assertEquals(0x8a9136aa, new Crc32c().compute(buf, offset, 32));
        assertEquals(50, buf.position());
        assertEquals(60, buf.limit());
    }
}
