package org.jwarp.rdmap;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;

import org.jwarp.memory.StagDomain;
import org.jwarp.memory.StagTable;
import org.jwarp.mpa.FpduSink;
import org.jwarp.mpa.SliceTable;
import org.junit.jupiter.api.Test;

/**
 * Review finding: the room check for a referenced segment uses the wire length of the header
 * alone, but the pad staged after the header is that of header + payload (RFC 5044 §4.2: up to
 * 3 more bytes). With exactly wireLength(header) bytes left, finishGathered writes past the limit.
 */
class GatherPadRoomTest {

    @Test
    void referencedSegmentPadFitsTheRoomCheck_5044_4_2() {
        RdmapSettings s = new RdmapSettings(1442, true, false, 4, 4, 16, 16);
        RdmapEndpoint ep = new RdmapEndpoint(s, new StagDomain(), new StagTable(8), new RdmapPair.Events(), 2);
        ByteBuffer mem = ByteBuffer.allocateDirect(8192);
        // two copied Sends of 700 B (724 wire bytes each, below GATHER_MIN), then a Write of 1025 B
        // in one piece: referenced, ULPDU 14 + 1025, pad 3 -> 23 staging bytes needed.
        ep.postSend(1, RdmapOpcode.SEND, mem, 0, 700, 0, true);
        ep.postSend(2, RdmapOpcode.SEND, mem, 0, 700, 0, true);
        ep.postWrite(3, mem, 1024, 1025, 0x1234, 0, true);
        int room = 2 * 724 + 20; // >= maxFpduWireLength (1448): what the caller must give
        assertTrue(room >= ep.maxFpduWireLength());
        ByteBuffer tx = ByteBuffer.allocateDirect(room);
        FpduSink sink = new FpduSink(Integer.MAX_VALUE);
        sink.bind(new SliceTable());
        assertDoesNotThrow(() -> ep.transmit(tx, sink));
        assertTrue(tx.position() <= tx.limit());
    }
}
