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
 * how TCP split the stream (fed whole or in fuzzer-chosen pieces, the ULPDUs and the error agree).
 * Corpus: {@code src/test/resources/org/jwarp/mpa/FpduDecoderFuzzTestInputs/}.
 */
class FpduDecoderFuzzTest {

    /** What a decoder reported: each ULPDU's bytes, then the error if any. */
    private static final class Recorder implements FpduHandler {
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
        FpduDecoder b = new FpduDecoder(crc, markers, split);
        ByteBuffer direct = ByteBuffer.allocateDirect(Math.max(1, stream.length));
        direct.put(stream).flip();
        int pos = 0;
        int k = 0;
        while (pos < stream.length) {
            int n = Math.min(cuts[k++ % pieces], stream.length - pos);
            ByteBuffer piece = direct.duplicate();
            piece.position(pos).limit(pos + n);
            b.feed(piece);
            assertEquals(pos + n, piece.position(), "feed consumes every byte");
            pos += n;
        }
        assertEquals(whole.events, split.events, "the outcome depends on how the stream was split");
        assertEquals(a.failed(), b.failed());
        assertEquals(a.fpduCount(), b.fpduCount());
    }
}
