package org.jwarp.ddp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.jwarp.ddp.DdpTestSupport.Segment;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class DdpSegmenterTest {

    @Test
    @DisplayName("RFC 5041 §5.2 example: untagged 2048-byte message, MULPDU 1500 -> MO 0/1482, lengths 1482+566")
    void untaggedSegmentationExample_5041_5_2() {
        List<Segment> segs = DdpTestSupport.untagged(new byte[2048], 1500, 0x43, 0, 0, 1);
        assertEquals(2, segs.size());
        DdpHeader h = new DdpHeader();
        h.wrap(segs.get(0).bytes(), 0);
        assertEquals(0, h.mo());
        assertEquals(1482, segs.get(0).payload());
        assertFalse(h.last());
        assertEquals(1500, segs.get(0).length(), "a non-last segment fills the MULPDU");
        h.wrap(segs.get(1).bytes(), 0);
        assertEquals(1482, h.mo());
        assertEquals(566, segs.get(1).payload());
        assertTrue(h.last());
        assertEquals(1, h.msn(), "all segments of a message carry the same MSN (§4.3)");
    }

    @Test
    @DisplayName("RFC 5041 §5.2 example: tagged 2048-byte message at TO 16384, MULPDU 1500 -> TO 16384/17870, 1486+562")
    void taggedSegmentationExample_5041_5_2() {
        List<Segment> segs = DdpTestSupport.tagged(new byte[2048], 1500, 0x40, 0x1234, 16384);
        assertEquals(2, segs.size());
        DdpHeader h = new DdpHeader();
        h.wrap(segs.get(0).bytes(), 0);
        assertEquals(16384, h.to());
        assertEquals(1486, segs.get(0).payload());
        assertFalse(h.last());
        h.wrap(segs.get(1).bytes(), 0);
        assertEquals(17870, h.to());
        assertEquals(562, segs.get(1).payload());
        assertTrue(h.last());
        assertEquals(0x1234, h.stag(), "all segments of a tagged message carry the same STag");
    }

    @Test
    @DisplayName("RFC 5041 §5.2: a zero-length message is exactly one segment with L set")
    void zeroLengthMessageIsOneSegment_5041_5_2() {
        assertEquals(1, DdpSegmenter.segmentCount(0, 100));
        List<Segment> u = DdpTestSupport.untagged(new byte[0], 1500, 0, 0, 0, 1);
        assertEquals(1, u.size());
        assertEquals(DdpHeader.UNTAGGED_HEADER_LENGTH, u.get(0).length());
        assertTrue(new DdpHeader().wrap(u.get(0).bytes(), 0).last());
        List<Segment> t = DdpTestSupport.tagged(new byte[0], 1500, 0, 1, 0);
        assertEquals(1, t.size());
        assertEquals(DdpHeader.TAGGED_HEADER_LENGTH, t.get(0).length());
    }

    @Test
    @DisplayName("RFC 5041 §5.2: no segment exceeds the MULPDU and only the last carries L")
    void segmentsNeverExceedMulpdu_5041_5_2() {
        for (int mulpdu = 19; mulpdu < 400; mulpdu += 37) {
            for (int len = 0; len < 3000; len += 251) {
                List<Segment> segs = DdpTestSupport.untagged(new byte[len], mulpdu, 0, 0, 0, 1);
                long sum = 0;
                for (int i = 0; i < segs.size(); i++) {
                    Segment s = segs.get(i);
                    assertTrue(s.length() <= mulpdu);
                    assertEquals(i == segs.size() - 1, s.last());
                    assertEquals(sum, s.offset(), "MO is the byte count already sent");
                    if (i < segs.size() - 1) {
                        assertEquals(mulpdu, s.length());
                    }
                    sum += s.payload();
                }
                assertEquals(len, sum);
                assertEquals(DdpSegmenter.segmentCount(len, DdpSegmenter.maxPayload(false, mulpdu)), segs.size());
            }
        }
    }

    @Test
    void mulpduMustLeaveRoomForPayload() {
        assertThrows(IllegalArgumentException.class, () -> DdpSegmenter.maxPayload(false, 18));
        assertThrows(IllegalArgumentException.class, () -> DdpSegmenter.maxPayload(true, 14));
        assertEquals(1, DdpSegmenter.maxPayload(true, 15));
        assertThrows(IllegalArgumentException.class, () -> DdpSegmenter.maxPayload(true, 70_000));
    }
}
