package org.jwarp.mpa;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.jwarp.ground.TermCode;

/**
 * Coverage-guided fuzzing of the FPDU decoder, RFC 5044 §4 (framing, §4.3 markers, §4.4 CRC):
 * no exception escapes {@link FpduDecoder#feed}, every ULPDU lies inside the buffer it is handed
 * in, at most one error is reported and nothing follows it, and the outcome does not depend on
 * how TCP split the stream (fed whole or in fuzzer-chosen pieces, the ULPDUs and the error agree),
 * nor on whether the handler takes split ULPDUs by direct placement ({@link FpduHandler#beginDirect}:
 * header, then the payload in pieces, then the end only after the CRC matched).
 * Corpus: {@code src/test/resources/org/jwarp/mpa/FpduDecoderFuzzTestInputs/}.
 */
class FpduDecoderFuzzTest {

    /** What a decoder reported: each ULPDU's bytes, then the error if any. */
    private static class Recorder implements FpduHandler {
        final List<String> events = new ArrayList<>();
        boolean errored;

        @Override
        public void onUlpdu(ByteBuffer buffer, int index, int length) {
            assertTrue(!errored, "ULPDU after the error");
            assertTrue(index >= 0 && length >= 0 && index + length <= buffer.limit(),
                    "ULPDU [" + index + ", +" + length + ") outside the buffer limit " + buffer.limit());
            byte[] b = new byte[length];
            buffer.get(index, b);
            events.add("U" + java.util.HexFormat.of().formatHex(b));
        }

        @Override
        public void onFpduError(TermCode code, String detail) {
            assertTrue(!errored, "two errors reported");
            assertTrue(code == TermCode.MPA_CRC_ERROR || code == TermCode.MPA_MARKER_OR_FPDU_ERROR, String.valueOf(code));
            errored = true;
            events.add("E" + code);
        }
    }

    /**
     * Takes split ULPDUs directly when the second header byte is even (the rest are gathered as
     * usual) and reports the bytes it assembled from header and pieces as one ULPDU at the end.
     */
    private static final class DirectRecorder extends Recorder {
        final java.io.ByteArrayOutputStream placing = new java.io.ByteArrayOutputStream();
        int expected = -1;

        @Override
        public int directHeaderLength(int firstByte) {
            return (firstByte & 0x80) != 0 ? 14 : 18;
        }

        @Override
        public boolean beginDirect(ByteBuffer buffer, int index, int headerLength, int length) {
            assertTrue(!errored && expected < 0, "direct ULPDU begun after an error or inside another");
            assertTrue(headerLength == directHeaderLength(buffer.get(index)) && headerLength < length);
            if ((buffer.get(index + 1) & 1) != 0) {
                return false;
            }
            byte[] h = new byte[headerLength];
            buffer.get(index, h);
            placing.reset();
            placing.writeBytes(h);
            expected = length;
            return true;
        }

        @Override
        public boolean placeDirect(ByteBuffer buffer, int index, int n) {
            assertTrue(expected >= 0 && n > 0 && index >= 0 && index + n <= buffer.limit());
            byte[] b = new byte[n];
            buffer.get(index, b);
            placing.writeBytes(b);
            assertTrue(placing.size() <= expected, "more bytes placed than the ULPDU holds");
            return true;
        }

        @Override
        public void endDirect() {
            assertEquals(expected, placing.size(), "direct ULPDU ended before all its bytes were placed");
            expected = -1;
            events.add("U" + java.util.HexFormat.of().formatHex(placing.toByteArray()));
        }
    }

    private static FpduDecoder feedInPieces(byte[] stream, int[] cuts, boolean crc, boolean markers,
            FpduHandler handler) {
        FpduDecoder b = new FpduDecoder(crc, markers, handler);
        ByteBuffer direct = ByteBuffer.allocateDirect(Math.max(1, stream.length));
        direct.put(stream).flip();
        int pos = 0;
        int k = 0;
        while (pos < stream.length) {
            int n = Math.min(cuts[k++ % cuts.length], stream.length - pos);
            ByteBuffer piece = direct.duplicate();
            piece.position(pos).limit(pos + n);
            b.feed(piece);
            assertEquals(pos + n, piece.position(), "feed consumes every byte");
            pos += n;
        }
        return b;
    }

    @FuzzTest(maxDuration = "30s")
    void fpduDecoder_5044_4(FuzzedDataProvider data) {
        boolean crc = data.consumeBoolean();
        boolean markers = data.consumeBoolean();
        int pieces = data.consumeInt(1, 16);
        int[] cuts = new int[pieces];
        for (int i = 0; i < pieces; i++) {
            cuts[i] = data.consumeInt(1, 4096);
        }
        byte[] stream = data.consumeRemainingAsBytes();

        Recorder whole = new Recorder();
        FpduDecoder a = new FpduDecoder(crc, markers, whole);
        ByteBuffer all = ByteBuffer.wrap(stream);
        a.feed(all);
        assertEquals(all.limit(), all.position(), "feed consumes every byte");

        Recorder split = new Recorder();
        FpduDecoder b = feedInPieces(stream, cuts, crc, markers, split);
        DirectRecorder placed = new DirectRecorder();
        FpduDecoder c = feedInPieces(stream, cuts, crc, markers, placed);
        assertEquals(whole.events, split.events, "the outcome depends on how the stream was split");
        assertEquals(a.failed(), b.failed());
        assertEquals(a.fpduCount(), b.fpduCount());
        assertEquals(whole.events, placed.events, "direct placement changes the outcome");
        assertEquals(a.failed(), c.failed());
        assertEquals(a.fpduCount(), c.fpduCount());
    }
}
