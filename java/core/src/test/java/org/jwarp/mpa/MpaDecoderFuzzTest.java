package org.jwarp.mpa;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/** Decoders only ever throw {@link MpaDecodeException} (RFC 6581 §12 sanity checks on every field). */
class MpaDecoderFuzzTest {

    @Property(tries = 2000)
    void randomBytesOnlyTypedError_6581_12(@ForAll @Size(max = 600) byte[] bytes) {
        try {
            MpaFrame f = MpaFrame.decode(bytes, MpaFrameLimits.RFC);
            assertEquals(bytes.length, f.encodedLength());
        } catch (MpaDecodeException expected) {
            assertTrue(expected.getMessage().contains("RFC"), expected.getMessage());
        }
    }

    @Property(tries = 2000)
    void mutatedValidFramesOnlyTypedError_6581_12(@ForAll("frames") MpaFrame frame,
                                                 @ForAll @IntRange(min = 0, max = 600) int pos,
                                                 @ForAll byte value, @ForAll @IntRange(min = 0, max = 40) int cut) {
        byte[] b = frame.toBytes();
        b[pos % b.length] = value;
        byte[] t = Arrays.copyOf(b, Math.max(0, b.length - cut));
        for (MpaFrameLimits limits : List.of(MpaFrameLimits.RFC, MpaFrameLimits.SIW)) {
            try {
                MpaFrame.decode(t, limits);
            } catch (MpaDecodeException expected) {
                // the only allowed failure
            }
            MpaFrameReader r = new MpaFrameReader(null, limits);
            try {
                int i = 0;
                while (i < t.length && !r.isComplete()) {
                    int n = Math.min(1 + (i % 7), t.length - i);
                    r.feed(ByteBuffer.wrap(t, i, n));
                    i += n;
                }
            } catch (MpaDecodeException expected) {
                // the only allowed failure
            }
        }
    }

    @Property(tries = 1000)
    void encodeDecodeRoundTrip_5044_7_1_1(@ForAll("frames") MpaFrame frame, @ForAll @IntRange(min = 1, max = 64) int chunk)
            throws MpaDecodeException {
        byte[] b = frame.toBytes();
        assertEquals(frame, MpaFrame.decode(b, MpaFrameLimits.RFC));
        MpaFrameReader r = new MpaFrameReader(frame.kind(), MpaFrameLimits.RFC);
        for (int i = 0; i < b.length; i += chunk) {
            MpaFrameReader.Status s = r.feed(ByteBuffer.wrap(b, i, Math.min(chunk, b.length - i)));
            assertEquals(i + chunk >= b.length ? MpaFrameReader.Status.COMPLETE : MpaFrameReader.Status.NEED_MORE, s);
        }
        assertEquals(frame, r.frame());
    }

    @Provide
    Arbitrary<MpaFrame> frames() {
        Arbitrary<EnhancedConnectionData> ed = Combinators.combine(Arbitraries.of(true, false), Arbitraries.of(true, false),
                Arbitraries.of(true, false), Arbitraries.of(true, false), Arbitraries.integers().between(0, 0x3FFF),
                Arbitraries.integers().between(0, 0x3FFF))
                .as((a, b, c, d, ird, ord) -> new EnhancedConnectionData(a, a && b, a && c, a && d, ird, ord));
        return Combinators.combine(Arbitraries.of(MpaFrame.Kind.values()), Arbitraries.of(true, false),
                Arbitraries.of(true, false), Arbitraries.of(true, false), ed.injectNull(0.4),
                Arbitraries.bytes().array(byte[].class).ofMaxSize(508), Arbitraries.integers().between(0, 3))
                .as((kind, m, c, r, e, pd, rev) -> {
                    MpaFrame.Builder b = kind == MpaFrame.Kind.REQUEST ? MpaFrame.request() : MpaFrame.reply().reject(r);
                    return b.marker(m).crc(c).enhancedData(e).revision(e != null ? 2 : rev).ulpPrivateData(pd).build();
                });
    }
}
