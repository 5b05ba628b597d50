package org.jwarp.rdmap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;

import org.jwarp.memory.StagDomain;
import org.jwarp.memory.StagTable;
import org.jwarp.mpa.FpduSink;
import org.jwarp.mpa.SliceTable;
import org.junit.jupiter.api.Test;

/**
 * Zero-copy transmit: segments whose payload is referenced into an {@link FpduSink} produce
 * the same stream as copied ones (RFC 5041 §5.2 segmentation, RFC 5044 §4 framing), so a peer
 * such as siw sees no difference.
 */
class RdmapGatherTransmitTest {

    /** Splices referenced payloads into the staged bytes as a gathering write does. */
    private static final class Splicer {
        final FpduSink sink = new FpduSink(Integer.MAX_VALUE);

        Splicer() {
            sink.bind(new SliceTable());
        }

        /** staging[from, to) with the referenced payloads spliced in at their places. */
        void drain(ByteBuffer staging, int to, ByteArrayOutputStream out) {
            int from = 0;
            int n = sink.count();
            for (int i = 0; i < n; i++) {
                byte[] run = new byte[sink.at(i) - from];
                staging.get(from, run);
                out.writeBytes(run);
                ByteBuffer v = sink.view(i);
                byte[] p = new byte[v.remaining()];
                v.get(p); // as the socket does: the view is written whole
                out.writeBytes(p);
                from = sink.at(i);
            }
            byte[] rest = new byte[to - from];
            staging.get(from, rest);
            out.writeBytes(rest);
            drop();
        }

        /** Every slice written: each is settled and popped. */
        void drop() {
            int n = sink.count();
            for (int i = 0; i < n; i++) {
                sink.view(i).position(sink.view(i).limit());
                assertTrue(sink.settle(i));
            }
            sink.pop(n);
        }
    }

    private static RdmapEndpoint endpoint(boolean crc) {
        RdmapSettings s = new RdmapSettings(1442, crc, false, 4, 4, 16, 16);
        return new RdmapEndpoint(s, new StagDomain(), new StagTable(8), new RdmapPair.Events(), 2);
    }

    private static void post(RdmapEndpoint ep, ByteBuffer mem) {
        ep.postWrite(1, mem, 3, 100_003, 0x1234, 0x10000, true);
        ep.postSend(2, RdmapOpcode.SEND, mem, 200_000, 5_000, 0, true);
        ep.postSend(3, RdmapOpcode.SEND, mem, 0, 700, 0, true); // below GATHER_MIN: copied either way
        ep.postWrite(5, mem, 50_001, 1428 + 1025, 0x77, 8, true); // last segment referenced with 3 pad bytes
        // two pieces: segments inside one piece are referenced, one spanning both is copied
        ep.postWrite(4, new ByteBuffer[] {mem, mem}, new int[] {1000, 300_000}, new int[] {3000, 4000}, 2, 0x55,
                0, true);
    }

    @Test
    void gatheredSegmentsMakeTheSameStream_5041_5_2() {
        ByteBuffer mem = ByteBuffer.allocateDirect(400_000);
        for (int i = 0; i < mem.capacity(); i++) {
            mem.put(i, (byte) (i ^ (i >>> 8)));
        }
        for (boolean crc : new boolean[] {true, false}) {
            RdmapEndpoint copied = endpoint(crc);
            RdmapEndpoint gathered = endpoint(crc);
            post(copied, mem);
            post(gathered, mem);
            ByteArrayOutputStream want = new ByteArrayOutputStream();
            ByteBuffer tx = ByteBuffer.allocateDirect(64 * 1024);
            while (copied.hasPendingOutput()) {
                tx.clear();
                copied.transmit(tx);
                byte[] b = new byte[tx.position()];
                tx.get(0, b);
                want.writeBytes(b);
            }
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            Splicer sink = new Splicer();
            int referenced = 0;
            while (gathered.hasPendingOutput()) {
                tx.clear();
                gathered.transmit(tx, sink.sink);
                referenced += sink.sink.count();
                sink.drain(tx, tx.position(), got);
            }
            assertTrue(referenced > 70, "most segments were referenced, not copied: " + referenced);
            assertEquals(want.size(), got.size());
            assertArrayEquals(want.toByteArray(), got.toByteArray(), "crc=" + crc);
        }
    }

    @Test
    void gatheredCrcLeavesTheSharedSourceAlone_5044_4_4() {
        // A registered buffer is read by every stream of its PD at once: the CRC of a referenced
        // payload runs over the sink's view, so the source's position and mark never move.
        ByteBuffer mem = ByteBuffer.allocateDirect(400_000);
        mem.position(1001).mark().position(1003);
        RdmapEndpoint ep = endpoint(true);
        post(ep, mem);
        ByteBuffer tx = ByteBuffer.allocateDirect(64 * 1024);
        Splicer sink = new Splicer();
        int referenced = 0;
        while (ep.hasPendingOutput()) {
            tx.clear();
            ep.transmit(tx, sink.sink);
            referenced += sink.sink.count();
            sink.drop();
            assertEquals(1003, mem.position());
            assertEquals(mem.capacity(), mem.limit());
            assertEquals(1001, mem.duplicate().reset().position(), "the mark is kept");
        }
        assertTrue(referenced > 70, "segments were referenced: " + referenced);
    }
}
