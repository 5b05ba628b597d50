package org.jwarp.rdmap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;
import org.jwarp.ddp.DdpHeader;
import org.jwarp.ddp.DdpSegmenter;
import org.jwarp.memory.StagAccess;
import org.jwarp.memory.StagRegion;
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

    @Test
    @DisplayName("RFC 5041 §4.1: L is set on the last segment of every message the engine sends and on no other")
    void lastFlagOnlyOnFinalSegment_5041_4_1() {
        for (int mulpdu : new int[] {128, 200, 1500}) {
            for (boolean tagged : new boolean[] {true, false}) {
                int max = DdpSegmenter.maxPayload(tagged, mulpdu);
                for (int len : new int[] {0, 1, max - 1, max, max + 1, 3 * max, 3 * max + 7}) {
                    RdmapPair p = new RdmapPair(RdmapPair.settings(mulpdu, false, 1, 1));
                    StagRegion dst = p.stags.register(p.pdB, ByteBuffer.allocateDirect(len + 1), 0, len + 1, 0,
                            StagAccess.REMOTE_WRITE);
                    ByteBuffer src = RdmapEndpointTest.direct(RdmapEndpointTest.pattern(len, 3));
                    if (tagged) {
                        p.a.postWrite(1, src, 0, len, dst.stag(), 0, true);
                    } else {
                        p.b.postReceive(1, ByteBuffer.allocateDirect(len + 1), 0, len + 1);
                        p.a.postSend(1, RdmapOpcode.SEND, src, 0, len, 0, true);
                    }
                    p.pump();
                    List<ByteBuffer> u = RdmapEndpointTest.ulpdus(p.aToB.toByteArray());
                    int hl = tagged ? DdpHeader.TAGGED_HEADER_LENGTH : DdpHeader.UNTAGGED_HEADER_LENGTH;
                    // Independent of the segmenter: L marks the segment whose payload reaches the end.
                    long placed = 0;
                    for (int i = 0; i < u.size(); i++) {
                        ByteBuffer s = u.get(i);
                        placed += s.limit() - hl;
                        boolean l = (s.get(0) & DdpHeader.L_FLAG) != 0;
                        assertEquals(placed == len, l, "mulpdu " + mulpdu + " tagged " + tagged + " len " + len
                                + " segment " + i + " of " + u.size());
                    }
                    assertEquals(len, placed);
                    assertEquals(len == 0 ? 1 : (len + max - 1) / max, u.size(), "segments of " + len + " bytes");
                    assertEquals(1, p.evA.sendCompletions.size());
                }
            }
        }
    }

    @Test
    @DisplayName("RFC 5041 §5.2: the STag and TO of a zero-length Write are not checked (unregistered STag, any TO)")
    void zeroLengthWriteStagAndToNotChecked_5041_5_2() {
        RdmapPair p = new RdmapPair(RdmapPair.settings(1000, false, 1, 1));
        ByteBuffer seg = ByteBuffer.allocateDirect(DdpHeader.TAGGED_HEADER_LENGTH);
        new DdpHeader().wrap(seg, 0).putTagged(true, RdmapOpcode.control(RdmapOpcode.WRITE), 0x7777_0000, -5L);
        RdmapEndpointTest.inject(p, seg, false);
        assertTrue(p.evB.localErrors.isEmpty(), "no §7.1 check on an empty Write: " + p.evB.localErrors);
        assertEquals(RdmapEndpoint.State.RTS, p.b.state());
    }

    @Test
    @DisplayName("RFC 5041 §5.2: a zero-length Read Response is accepted whatever STag and TO it carries")
    void zeroLengthReadResponseStagAndToNotChecked_5041_5_2() {
        for (boolean rtr : new boolean[] {false, true}) {
            RdmapPair p = new RdmapPair(RdmapPair.settings(1000, false, 1, 1));
            StagRegion sink = p.stags.register(p.pdB, ByteBuffer.allocateDirect(16), 0, 16, 0, StagAccess.LOCAL_WRITE);
            if (rtr) {
                p.b.postReadRtr(); // sink STag 0, TO 0, as siw's Read RTR
            } else {
                p.b.postRead(9, sink.stag(), 4, 0, 0x1234, 0, true);
            }
            ByteBuffer out = ByteBuffer.allocateDirect(1 << 12);
            while (p.b.transmit(out) > 0) {
                // the Read Request leaves B; the answer below stands in for A's
            }
            ByteBuffer seg = ByteBuffer.allocateDirect(DdpHeader.TAGGED_HEADER_LENGTH);
            new DdpHeader().wrap(seg, 0).putTagged(true, RdmapOpcode.control(RdmapOpcode.READ_RESPONSE),
                    0x5A5A_0100, 0x9999L);
            RdmapEndpointTest.inject(p, seg, false);
            assertTrue(p.evB.localErrors.isEmpty(), "rtr " + rtr + ": " + p.evB.localErrors);
            assertEquals(0, p.b.readsOutstanding(), "the empty response completed the Read");
            assertEquals(rtr ? 0 : 1, p.evB.sendCompletions.size());
        }
    }

    @Test
    @DisplayName("RFC 5041 §8.2/§8.3.1: a Read whose source region is bound to another DDP stream is refused, its own stream reads")
    void readSourceBoundToAnotherStream_5041_8_2() {
        for (boolean sameStream : new boolean[] {true, false}) {
            RdmapPair p = new RdmapPair(RdmapPair.settings(1000, false, 2, 2));
            StagRegion src = p.stags.register(p.pdB, ByteBuffer.allocateDirect(64), 0, 64, 0, StagAccess.REMOTE_READ);
            StagRegion sink = p.stags.register(p.pdA, ByteBuffer.allocateDirect(64), 0, 64, 0, StagAccess.LOCAL_WRITE);
            Object streamOfB = new Object();
            p.b.streamKey(streamOfB);
            src.bindStream(sameStream ? streamOfB : new Object());
            p.a.postRead(1, sink.stag(), 0, 16, src.stag(), 0, true);
            p.pump();
            if (sameStream) {
                assertTrue(p.evB.localErrors.isEmpty(), p.evB.localErrors.toString());
                assertEquals(1, p.evA.sendCompletions.size());
            } else {
                assertEquals(java.util.List.of(org.jwarp.ground.TermCode.RDMAP_STAG_NOT_ASSOCIATED), p.evB.localErrors);
            }
        }
    }
}
