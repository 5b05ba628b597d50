package org.jwarp.mpa;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.jwarp.mpa.FpduCodecTest.encodeAll;
import static org.jwarp.mpa.FpduCodecTest.feedInChunks;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Label;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.jwarp.mpa.FpduCodecTest.Collect;
import org.jwarp.ground.TermCode;

/** Property and fuzz tests of the FPDU codec, RFC 5044 §4. */
class FpduPropertiesTest {

    @Property(tries = 200)
    @Label("RFC 5044 §4: FPDUs are found in a byte stream cut at arbitrary points")
    void roundTripArbitraryChunks_5044_4(@ForAll("ulpduLists") List<byte[]> ulpdus, @ForAll boolean crc,
            @ForAll boolean markers, @ForAll long seed, @ForAll @IntRange(min = 1, max = 3000) int maxChunk) {
        if (markers) {
            // With markers the MULPDU comes from the MSS (RFC 5044 §7.1), far below 16-bit pointer limits.
            ulpdus = ulpdus.stream().map(u -> java.util.Arrays.copyOf(u, Math.min(u.length, 16_000))).toList();
        }
        ByteBuffer wire = encodeAll(ulpdus, crc, markers);
        Collect c = new Collect();
        FpduDecoder dec = new FpduDecoder(crc, markers, c);
        feedInChunks(dec, wire, seed, maxChunk);
        assertTrue(c.errors.isEmpty(), () -> "errors " + c.errors);
        assertEquals(ulpdus.size(), c.ulpdus.size());
        for (int i = 0; i < ulpdus.size(); i++) {
            assertArrayEquals(ulpdus.get(i), c.ulpdus.get(i));
        }
        assertFalse(dec.hasPartial());
    }

    @Provide
    Arbitrary<List<byte[]>> ulpduLists() {
        Arbitrary<byte[]> one = Arbitraries.integers().between(0, 2500)
                .flatMap(n -> Arbitraries.bytes().array(byte[].class).ofSize(n));
        Arbitrary<byte[]> big = Arbitraries.integers().between(60_000, 65_535)
                .map(n -> { byte[] b = new byte[n]; new Random(n).nextBytes(b); return b; });
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(20, one.list().ofMinSize(1).ofMaxSize(8)),
                net.jqwik.api.Tuple.of(1, big.list().ofMinSize(1).ofMaxSize(2)));
    }

    @Property(tries = 300)
    @Label("RFC 5044 §4.4: any single flipped bit in an FPDU is caught as 2/0/2 or 2/0/3, never delivered")
    void corruptionDetected_5044_4_4(@ForAll @IntRange(min = 0, max = 1200) int len, @ForAll long seed,
            @ForAll boolean markers) {
        byte[] u = new byte[len];
        new Random(seed).nextBytes(u);
        ByteBuffer wire = encodeAll(List.of(u), true, markers);
        Random r = new Random(seed);
        int at = r.nextInt(wire.remaining());
        wire.put(at, (byte) (wire.get(at) ^ (1 << r.nextInt(8))));
        Collect c = new Collect();
        FpduDecoder dec = new FpduDecoder(true, markers, c);
        dec.feed(wire);
        // A flipped length bit may leave the decoder waiting for bytes that never come; that is not a delivery.
        for (byte[] got : c.ulpdus) {
            assertArrayEquals(u, got, "only the intact ULPDU could ever be delivered");
        }
        assertTrue(c.ulpdus.isEmpty() || c.errors.isEmpty());
        for (TermCode e : c.errors) {
            assertTrue(e.equals(TermCode.MPA_CRC_ERROR) || e.equals(TermCode.MPA_MARKER_OR_FPDU_ERROR), e::toString);
        }
        if (!c.ulpdus.isEmpty()) {
            // Only the ignored bits of a marker (Reserved, and the two low FPDUPTR bits) may change unnoticed.
            assertTrue(markers && at % MarkerInserter.MARKER_INTERVAL < MarkerInserter.MARKER_LENGTH,
                    "corrupted FPDU delivered after a flip at " + at);
        }
    }

    @Property(tries = 300)
    @Label("FPDU decoder fuzz: random bytes produce only handler calls, never an exception")
    void fuzzOnlyTypedOutcomes(@ForAll("noise") byte[] noise, @ForAll boolean crc, @ForAll boolean markers,
            @ForAll long seed) {
        ByteBuffer wire = ByteBuffer.allocateDirect(noise.length);
        wire.put(0, noise);
        Collect c = new Collect();
        FpduDecoder dec = new FpduDecoder(crc, markers, c);
        feedInChunks(dec, wire, seed, 700);
        assertTrue(c.errors.size() <= 1, "at most one error per stream");
        for (TermCode e : c.errors) {
            assertTrue(e.isMpa());
        }
    }

    @Provide
    Arbitrary<byte[]> noise() {
        return Arbitraries.bytes().array(byte[].class).ofMinSize(0).ofMaxSize(5000);
    }


    @Property(tries = 300)
    @Label("RFC 5044 §4: truncated or mutated streams of valid FPDUs produce only whole ULPDUs and at most one MPA error")
    void truncatedOrMutatedFpdusOnlyTypedOutcomes_5044_4(@ForAll("smallUlpdus") List<byte[]> ulpdus, @ForAll boolean crc,
            @ForAll boolean markers, @ForAll long seed, @ForAll @IntRange(min = 0, max = 3000) int cut,
            @ForAll @IntRange(min = 0, max = 100_000) int pos, @ForAll byte value, @ForAll boolean mutate) {
        ByteBuffer full = encodeAll(ulpdus, crc, markers);
        int len = Math.max(0, full.limit() - cut);
        ByteBuffer wire = ByteBuffer.allocateDirect(len);
        wire.put(0, full, 0, len);
        if (mutate && len > 0) {
            wire.put(pos % len, value);
        }
        Collect c = new Collect();
        FpduDecoder dec = new FpduDecoder(crc, markers, c);
        feedInChunks(dec, wire, seed, 500);
        assertTrue(c.errors.size() <= 1, () -> "at most one error per stream: " + c.errors);
        for (TermCode e : c.errors) {
            assertTrue(e.isMpa(), e::toString);
        }
        if (!mutate || !crc) {
            // Without CRC a mutated MPA length re-frames the stream unnoticed (no marker may follow to
            // contradict it), so more ULPDUs than were sent can come out; only a CRC bounds that.
            if (!mutate) {
                assertTrue(c.ulpdus.size() <= ulpdus.size());
            }
            return;
        }
        assertTrue(c.ulpdus.size() <= ulpdus.size());
        // With CRC on, whatever was delivered is an unmodified prefix of what was sent.
        for (int i = 0; i < c.ulpdus.size(); i++) {
            assertArrayEquals(ulpdus.get(i), c.ulpdus.get(i));
        }
    }

    @Provide
    Arbitrary<List<byte[]>> smallUlpdus() {
        return Arbitraries.integers().between(0, 1200).flatMap(n -> Arbitraries.bytes().array(byte[].class).ofSize(n))
                .list().ofMinSize(1).ofMaxSize(6);
    }
}
