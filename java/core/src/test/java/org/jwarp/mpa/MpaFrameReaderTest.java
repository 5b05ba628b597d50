package org.jwarp.mpa;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class MpaFrameReaderTest {
    private final MpaFrame reply = MpaFrame.reply().crc(true).revision(2)
            .enhancedData(new EnhancedConnectionData(true, false, true, false, 4, 2))
            .ulpPrivateData(new byte[] {1, 2, 3, 4, 5, 6}).build();

    @Test
    void byteByByteNeedsMoreUntilComplete_5044_7_1_1() throws Exception {
        byte[] b = reply.toBytes();
        MpaFrameReader r = new MpaFrameReader(MpaFrame.Kind.REPLY, MpaFrameLimits.RFC);
        for (int i = 0; i < b.length - 1; i++) {
            assertEquals(MpaFrameReader.Status.NEED_MORE, r.feed(ByteBuffer.wrap(b, i, 1)));
            assertNull(r.frame());
        }
        assertEquals(MpaFrameReader.Status.COMPLETE, r.feed(ByteBuffer.wrap(b, b.length - 1, 1)));
        assertEquals(reply, r.frame());
        assertEquals(0, r.trailingBytes());
    }

    @Test
    void wholeFrameInOneChunk() throws Exception {
        MpaFrameReader r = new MpaFrameReader(null, MpaFrameLimits.RFC);
        ByteBuffer chunk = reply.encode();
        assertEquals(MpaFrameReader.Status.COMPLETE, r.feed(chunk));
        assertEquals(reply, r.frame());
        assertEquals(0, chunk.remaining());
    }

    @Test
    void trailingBytesAreAnErrorByDefault_5044_7_1_2() {
        byte[] b = reply.toBytes();
        ByteBuffer chunk = ByteBuffer.allocate(b.length + 3).put(b).put(new byte[] {7, 7, 7}).flip();
        MpaDecodeException e = assertThrows(MpaDecodeException.class,
                () -> new MpaFrameReader(MpaFrame.Kind.REPLY, MpaFrameLimits.RFC).feed(chunk));
        assertEquals("RFC 5044 §7.1.2", e.rfcSection());
        assertTrue(e.getMessage().contains("3 bytes"), e.getMessage());
    }

    @Test
    void trailingBytesReportedAndLeftInChunkWhenLenient() throws Exception {
        byte[] b = reply.toBytes();
        ByteBuffer chunk = ByteBuffer.allocate(b.length + 3).put(b).put(new byte[] {7, 8, 9}).flip();
        MpaFrameReader r = new MpaFrameReader(MpaFrame.Kind.REPLY, MpaFrameLimits.RFC, false);
        assertEquals(MpaFrameReader.Status.COMPLETE, r.feed(chunk));
        assertEquals(3, r.trailingBytes());
        assertEquals(b.length, chunk.position());
        assertEquals(7, chunk.get());
    }

    @Test
    void wrongKeyDetectedAtFirstDifferingByte_5044_7_1_1() throws Exception {
        MpaFrameReader r = new MpaFrameReader(MpaFrame.Kind.REPLY, MpaFrameLimits.RFC);
        byte[] req = MpaFrame.request().revision(1).build().toBytes();
        assertEquals(MpaFrameReader.Status.NEED_MORE, r.feed(ByteBuffer.wrap(req, 0, 9)));
        MpaDecodeException e = assertThrows(MpaDecodeException.class, () -> r.feed(ByteBuffer.wrap(req, 9, 1)));
        assertEquals("MPA Key", e.field());
        assertThrows(IllegalStateException.class, () -> r.feed(ByteBuffer.wrap(req, 10, 1)));
    }

    @Test
    void oversizedPdLengthDetectedFromHeaderAlone_5044_7_1_1() {
        byte[] h = MpaFrame.request().revision(1).build().toBytes();
        h[18] = 0x01; // PD_Length 0x0101 = 257 > siw's 256
        h[19] = 0x01;
        MpaFrameReader r = new MpaFrameReader(MpaFrame.Kind.REQUEST, MpaFrameLimits.SIW);
        MpaDecodeException e = assertThrows(MpaDecodeException.class, () -> r.feed(ByteBuffer.wrap(h)));
        assertEquals("MPA PD_Length", e.field());
    }

    @Test
    void resetReusesReader() throws Exception {
        MpaFrameReader r = new MpaFrameReader(MpaFrame.Kind.REPLY, MpaFrameLimits.RFC);
        r.feed(reply.encode());
        r.reset();
        assertEquals(20, r.bytesNeeded());
        assertEquals(MpaFrameReader.Status.COMPLETE, r.feed(reply.encode()));
        assertEquals(reply, r.frame());
    }
}
