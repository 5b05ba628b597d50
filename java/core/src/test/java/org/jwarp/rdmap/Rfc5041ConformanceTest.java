package org.jwarp.rdmap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;
import org.jwarp.ddp.DdpHeader;
import org.jwarp.ddp.DdpSegmenter;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** RFC 5041 header rules checked on the bytes the RDMAP engine actually sends. */
class Rfc5041ConformanceTest {

    @Test
    @DisplayName("RFC 5041 §4.3/§5.2: segments of one message share QN and MSN, MO counts bytes from 0, MSN +1 per message")
    void segmentsOfAMessageShareMsnAndCountMo_5041_4_3() {
        RdmapPair p = new RdmapPair(RdmapPair.settings(200, false, 1, 1));
        p.b.postReceive(1, ByteBuffer.allocateDirect(1000), 0, 1000);
        p.b.postReceive(2, ByteBuffer.allocateDirect(1000), 0, 1000);
        p.a.postSend(10, RdmapOpcode.SEND, RdmapEndpointTest.direct(new byte[700]), 0, 700, 0, true);
        p.a.postSend(11, RdmapOpcode.SEND_SE, RdmapEndpointTest.direct(new byte[5]), 0, 5, 0, true);
        p.pump();
        List<ByteBuffer> u = RdmapEndpointTest.ulpdus(p.aToB.toByteArray());
        int max = DdpSegmenter.maxPayload(false, 200);
        int n1 = (int) DdpSegmenter.segmentCount(700, max);
        assertEquals(n1 + 1, u.size());
        long mo = 0;
        for (int i = 0; i < n1; i++) {
            ByteBuffer s = u.get(i);
            assertEquals(0, s.get(0) & DdpHeader.T_FLAG, "untagged");
            assertEquals(i == n1 - 1, (s.get(0) & DdpHeader.L_FLAG) != 0, "L only on the last segment");
            assertEquals(0, s.get(0) & DdpHeader.RSVD_MASK, "reserved bits zero on transmit (§4.1)");
            assertEquals(DdpHeader.DDP_VERSION, s.get(0) & DdpHeader.DV_MASK);
            assertEquals(RdmapOpcode.QN_SEND, s.getInt(DdpHeader.QN_OFFSET));
            assertEquals(1, s.getInt(DdpHeader.MSN_OFFSET), "first MSN is 1, shared by every segment");
            assertEquals(mo, s.getInt(DdpHeader.MO_OFFSET));
            assertTrue(s.limit() <= 200, "segment within the MULPDU");
            mo += s.limit() - DdpHeader.UNTAGGED_HEADER_LENGTH;
        }
        assertEquals(700, mo);
        ByteBuffer second = u.get(n1);
        assertEquals(2, second.getInt(DdpHeader.MSN_OFFSET), "MSN +1 for the next message");
        assertEquals(0, second.getInt(DdpHeader.MO_OFFSET));
        assertEquals(2, p.evB.receives.size());
        assertEquals(700, p.evB.receives.get(0)[2]);
        assertEquals(5, p.evB.receives.get(1)[2]);
    }
}
