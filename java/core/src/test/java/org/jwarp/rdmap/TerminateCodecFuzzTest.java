package org.jwarp.rdmap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.ByteBuffer;
import org.jwarp.ddp.DdpHeader;

/**
 * Coverage-guided fuzzing of the RDMAP Terminate codec, RFC 5040 §4.8 (and Linux siw's swapped
 * Hdrct layout): decoding any payload either yields a message or throws the typed
 * {@link RdmapFormatException}; a decoded message re-encodes in the RFC layout to a payload that
 * decodes to the same message, and the Read Request header accessors read inside the payload.
 * Corpus: {@code src/test/resources/org/jwarp/rdmap/TerminateCodecFuzzTestInputs/}.
 */
class TerminateCodecFuzzTest {

    @FuzzTest(maxDuration = "30s")
    void terminateCodec_5040_4_8(FuzzedDataProvider data) {
        int index = data.consumeInt(0, 8);
        byte[] payload = data.consumeRemainingAsBytes();
        ByteBuffer src = ByteBuffer.allocate(index + payload.length);
        src.put(index, payload);
        TerminateMessage m;
        try {
            m = TerminateCodec.decode(src, index, payload.length);
        } catch (RdmapFormatException e) {
            assertNotNull(e.term(), "a decode error names its TERM");
            return;
        }
        assertNotNull(m.code());
        byte[] ddp = m.ddpHeader();
        byte[] rdma = m.rdmapHeader();
        assertTrue(ddp.length == 0 || ddp.length == DdpHeader.TAGGED_HEADER_LENGTH
                || ddp.length == DdpHeader.UNTAGGED_HEADER_LENGTH, "DDP header of " + ddp.length);
        assertTrue(rdma.length == 0 || rdma.length == ReadRequestHeader.LENGTH, "RDMA header of " + rdma.length);
        assertEquals(m.d(), ddp.length > 0);
        assertEquals(m.r(), rdma.length > 0);
        if (rdma.length > 0) {
            ByteBuffer r = ByteBuffer.wrap(rdma);
            ReadRequestHeader.sinkStag(r, 0);
            ReadRequestHeader.sinkTo(r, 0);
            ReadRequestHeader.size(r, 0);
            ReadRequestHeader.sourceStag(r, 0);
            ReadRequestHeader.sourceTo(r, 0);
        }
        ByteBuffer headers = ByteBuffer.allocate(ddp.length + rdma.length);
        headers.put(0, ddp).put(ddp.length, rdma);
        ByteBuffer out = ByteBuffer.allocate(TerminateCodec.MAX_PAYLOAD_LENGTH);
        int n = TerminateCodec.encode(out, 0, m.code(), m.ddpSegmentLength(), headers, 0, ddp.length, rdma.length, m.m());
        assertTrue(n <= payload.length, "re-encoded " + n + " bytes from a " + payload.length + "-byte payload");
        TerminateMessage again = TerminateCodec.decode(out, 0, n);
        assertEquals(m, again, "decode(encode(m)) == m");
    }
}
