package org.jwarp.mpa;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Coverage-guided fuzzing of the MPA Request/Reply reader, RFC 5044 §7.1.1 and RFC 6581 §9:
 * whatever the bytes and however they are split, the reader either completes a frame or throws
 * the typed {@link MpaDecodeException}; a completed frame is what the one-shot decoder makes of
 * the same bytes, and it encodes to bytes that decode to the same frame.
 * Corpus: {@code src/test/resources/org/jwarp/mpa/MpaFrameReaderFuzzTestInputs/}.
 */
class MpaFrameReaderFuzzTest {

    @FuzzTest(maxDuration = "30s")
    void mpaFrameReader_5044_7_1_1(FuzzedDataProvider data) {
        int mode = data.consumeInt(0, 2);
        MpaFrame.Kind expected = mode == 0 ? MpaFrame.Kind.REQUEST : mode == 1 ? MpaFrame.Kind.REPLY : null;
        MpaFrameLimits limits = data.consumeBoolean() ? MpaFrameLimits.RFC : MpaFrameLimits.SIW;
        boolean strict = data.consumeBoolean();
        int chunk = data.consumeInt(1, 64);
        byte[] bytes = data.consumeRemainingAsBytes();

        MpaFrameReader reader = new MpaFrameReader(expected, limits, strict);
        ByteBuffer in = ByteBuffer.wrap(bytes);
        MpaFrameReader.Status status = MpaFrameReader.Status.NEED_MORE;
        try {
            while (in.hasRemaining() && status == MpaFrameReader.Status.NEED_MORE) {
                ByteBuffer part = in.slice(in.position(), Math.min(chunk, in.remaining()));
                status = reader.feed(part);
                in.position(in.position() + part.position());
            }
        } catch (MpaDecodeException e) {
            assertNotNull(e.term(), "a decode error names its TERM");
            return;
        }
        if (status != MpaFrameReader.Status.COMPLETE) {
            assertTrue(reader.bytesNeeded() > 0, "incomplete but needs nothing");
            return;
        }
        MpaFrame frame = reader.frame();
        assertNotNull(frame);
        if (expected != null) {
            assertEquals(expected, frame.kind());
        }
        int used = frame.encodedLength();
        assertTrue(used <= bytes.length, "frame longer than its input");
        MpaFrame oneShot = MpaFrame.decode(Arrays.copyOf(bytes, used), limits);
        assertEquals(frame, oneShot, "streamed and one-shot decoding agree");
        byte[] again = frame.toBytes();
        assertEquals(used, again.length);
        MpaFrame round = MpaFrame.decode(again, limits);
        assertEquals(frame, round, "encode then decode is the identity");
        assertArrayEquals(again, round.toBytes());
    }
}
