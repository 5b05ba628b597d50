package org.jwarp.mpa;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;

import org.junit.jupiter.api.Test;

/** A gathered FPDU (payload outside the staging buffer) is byte-identical to the copied one (RFC 5044 §4). */
class FpduEncoderGatherTest {

    /** The copied FPDU's bytes and the gathered one's bytes spliced as a gathering write would. */
    private static void compare(boolean crc, int headerLength, int payloadLength) {
        ByteBuffer payloadMem = ByteBuffer.allocateDirect(payloadLength + 7);
        for (int i = 0; i < payloadMem.capacity(); i++) {
            payloadMem.put(i, (byte) (i * 31 + 7));
        }
        int payloadAt = 5;
        FpduEncoder enc = new FpduEncoder(crc, false);

        ByteBuffer copied = ByteBuffer.allocateDirect(70000);
        copied.position(3);
        int u = enc.ulpduIndex(copied);
        for (int i = 0; i < headerLength; i++) {
            copied.put(u + i, (byte) (0xA0 + i));
        }
        copied.put(u + headerLength, payloadMem, payloadAt, payloadLength);
        int n = enc.finish(copied, headerLength + payloadLength);
        byte[] want = new byte[n];
        copied.get(3, want);

        ByteBuffer staging = ByteBuffer.allocateDirect(1024);
        staging.position(9);
        int g = enc.ulpduIndex(staging);
        for (int i = 0; i < headerLength; i++) {
            staging.put(g + i, (byte) (0xA0 + i));
        }
        ByteBuffer view = payloadMem.duplicate().limit(payloadAt + payloadLength).position(payloadAt);
        int staged = enc.finishGathered(staging, headerLength, view);
        assertEquals(payloadAt, view.position(), "the payload view is left as given");
        assertEquals(n - payloadLength, staged, "staging holds all but the payload");
        byte[] got = new byte[n];
        int split = 2 + headerLength;
        staging.get(9, got, 0, split);
        payloadMem.get(payloadAt, got, split, payloadLength);
        staging.get(9 + split, got, split + payloadLength, staged - split);
        assertArrayEquals(want, got, "crc=" + crc + " header=" + headerLength + " payload=" + payloadLength);
    }

    @Test
    void gatheredFpduIsByteIdenticalWithPadAndCrc_5044_4_4() {
        for (int payload : new int[] {1024, 1025, 1026, 1027, 16366, 65000}) {
            compare(true, 14, payload);
            compare(true, 18, payload);
            compare(false, 14, payload);
        }
    }
}
