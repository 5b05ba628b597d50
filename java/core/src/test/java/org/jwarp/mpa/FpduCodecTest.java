package org.jwarp.mpa;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.jwarp.ground.TermCode;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class FpduCodecTest {

    /** Collects what the decoder reports. */
    static final class Collect implements FpduHandler {
        final List<byte[]> ulpdus = new ArrayList<>();
        final List<TermCode> errors = new ArrayList<>();

        @Override
        public void onUlpdu(ByteBuffer buffer, int index, int length) {
            byte[] b = new byte[length];
            buffer.get(index, b);
            ulpdus.add(b);
        }

        @Override
        public void onFpduError(TermCode code, String detail) {
            errors.add(code);
        }
    }

    static ByteBuffer encodeAll(List<byte[]> ulpdus, boolean crc, boolean markers) {
        FpduEncoder enc = new FpduEncoder(crc, markers);
        int room = 0;
        for (byte[] u : ulpdus) {
            room += enc.wireLength(u.length);
        }
        ByteBuffer out = ByteBuffer.allocateDirect(room);
        for (byte[] u : ulpdus) {
            out.put(enc.ulpduIndex(out), u);
            enc.finish(out, u.length);
        }
        out.flip();
        return out;
    }

    static void feedInChunks(FpduDecoder dec, ByteBuffer wire, long seed, int maxChunk) {
        Random r = new Random(seed);
        ByteBuffer chunk = ByteBuffer.allocateDirect(maxChunk);
        while (wire.hasRemaining()) {
            int n = Math.min(wire.remaining(), 1 + r.nextInt(maxChunk));
            chunk.clear();
            chunk.put(0, wire, wire.position(), n);
            wire.position(wire.position() + n);
            chunk.limit(n);
            dec.feed(chunk);
            assertEquals(n, chunk.position(), "decoder consumes every byte it is given");
        }
    }

    @Test
    @DisplayName("RFC 5044 §4.2: pad makes length field + ULPDU a multiple of 4")
    void padLength_5044_4_2() {
        assertEquals(2, Fpdu.padLength(0));
        assertEquals(0, Fpdu.padLength(18));
        assertEquals(1, Fpdu.padLength(1));
        assertEquals(3, Fpdu.padLength(3));
        for (int n = 0; n < 100; n++) {
            assertEquals(0, (2 + n + Fpdu.padLength(n)) % 4);
            assertEquals(0, Fpdu.fpduLength(n) % 4);
        }
    }

    @Test
    @DisplayName("siw FPDU sizing: MSS rounded down to 8, MULPDU leaves no pad on full FPDUs")
    void mulpduFromMss_5044_7_1() {
        assertEquals(1456 - 6, Fpdu.mulpduForMss(1460, false));
        assertEquals(0, Fpdu.padLength(Fpdu.mulpduForMss(1460, false)));
        assertEquals(1456, Fpdu.fpduLength(Fpdu.mulpduForMss(1460, false)));
        // RFC 5044 §7.1 formula with markers: 1460 - (6 + 4*3 + 0)
        assertEquals(1442, Fpdu.mulpduForMss(1460, true));
        assertEquals(65535, Fpdu.mulpduForMss(200_000, false));
        assertThrows(IllegalArgumentException.class, () -> Fpdu.mulpduForMss(10, false));
    }

    @Test
    @DisplayName("RFC 5044 §4: FPDU layout is length(BE) | ULPDU | pad(0) | CRC(LE wire order)")
    void fpduLayout_5044_4() {
        byte[] u = {1, 2, 3, 4, 5};
        ByteBuffer wire = encodeAll(List.of(u), true, false);
        assertEquals(Fpdu.fpduLength(5), wire.remaining());
        assertEquals(5, wire.getShort(0));
        for (int i = 0; i < 5; i++) {
            assertEquals(u[i], wire.get(2 + i));
        }
        assertEquals(0, wire.get(7));
        int crc = new Crc32c().compute(wire, 0, 8);
        assertEquals(crc, Crc32c.getWire(wire, 8));
    }

    @Test
    @DisplayName("RFC 5044 §4.4: CRC field is zero and unchecked when CRC is not negotiated")
    void crcOffWritesZero_5044_4_4() {
        ByteBuffer wire = encodeAll(List.of(new byte[] {9, 9}), false, false);
        assertEquals(0, Crc32c.getWire(wire, 4));
        wire.put(4, (byte) 0x77); // garbage CRC is ignored when CRC is off
        Collect c = new Collect();
        new FpduDecoder(false, false, c).feed(wire);
        assertEquals(1, c.ulpdus.size());
        assertTrue(c.errors.isEmpty());
    }

    @Test
    @DisplayName("RFC 5044 §4.4: a CRC mismatch is TERM 2/0/2 and the stream stops")
    void crcMismatchIsTerm202_5044_4_4() {
        ByteBuffer wire = encodeAll(List.of(new byte[20], new byte[20]), true, false);
        wire.put(5, (byte) 1);
        Collect c = new Collect();
        FpduDecoder dec = new FpduDecoder(true, false, c);
        dec.feed(wire);
        assertEquals(List.of(TermCode.MPA_CRC_ERROR), c.errors);
        assertTrue(c.ulpdus.isEmpty());
        assertTrue(dec.failed());
        dec.feed(encodeAll(List.of(new byte[4]), true, false));
        assertTrue(c.ulpdus.isEmpty(), "nothing after the error is delivered");
    }

    @Test
    @DisplayName("RFC 5044 §4: whole FPDUs are handed over in place and never allocate the gather buffer")
    void wholeFpdusAllocateNoGatherBuffer_5044_4() {
        for (boolean crc : new boolean[] {false, true}) {
            Collect c = new Collect();
            FpduDecoder dec = new FpduDecoder(crc, false, c);
            List<byte[]> ulpdus = List.of(new byte[0], new byte[] {1, 2, 3}, new byte[1500], new byte[65_535]);
            for (byte[] u : ulpdus) {
                dec.feed(encodeAll(List.of(u), crc, false)); // one read per FPDU
            }
            dec.feed(encodeAll(ulpdus, crc, false)); // several FPDUs in one read
            assertEquals(8, c.ulpdus.size());
            assertTrue(c.errors.isEmpty());
            assertNull(dec.gatherBuffer(), "no FPDU was split: no gather buffer (crc=" + crc + ")");
        }
    }

    @Test
    @DisplayName("RFC 5044 §4: an FPDU split at every possible point decodes; the gather buffer is allocated once")
    void splitFpduDecodesAtEverySplitPoint_5044_4() {
        for (boolean crc : new boolean[] {false, true}) {
            byte[] u = new byte[301];
            new Random(7).nextBytes(u);
            ByteBuffer one = encodeAll(List.of(u), crc, false);
            int len = one.remaining();
            Collect c = new Collect();
            FpduDecoder dec = new FpduDecoder(crc, false, c);
            ByteBuffer first = null;
            for (int cut = 1; cut < len; cut++) {
                ByteBuffer a = one.duplicate().position(0).limit(cut);
                ByteBuffer b = one.duplicate().position(cut).limit(len);
                dec.feed(a.slice());
                assertTrue(dec.hasPartial());
                dec.feed(b.slice());
                assertFalse(dec.hasPartial(), "cut at " + cut);
                if (first == null) {
                    first = dec.gatherBuffer();
                    assertNotNull(first, "a split FPDU allocates the gather buffer");
                }
                assertSame(first, dec.gatherBuffer(), "allocated once, reused (cut " + cut + ")");
                // A whole FPDU after a split one is still handed over in place.
                dec.feed(one.duplicate());
            }
            assertTrue(c.errors.isEmpty(), () -> "errors " + c.errors);
            assertEquals(2 * (len - 1), c.ulpdus.size());
            for (byte[] got : c.ulpdus) {
                assertArrayEquals(u, got);
            }
        }
    }

    @Test
    void encoderRejectsOversizedUlpdu() {
        FpduEncoder enc = new FpduEncoder(true, false);
        ByteBuffer b = ByteBuffer.allocateDirect(16);
        FpduFormatException e = assertThrows(FpduFormatException.class, () -> enc.finish(b, 70_000));
        assertTrue(e.getMessage().contains("RFC 5044"));
    }
}
