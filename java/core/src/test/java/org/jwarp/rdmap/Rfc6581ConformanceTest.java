package org.jwarp.rdmap;

import org.jwarp.ground.TermCode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.List;
import org.jwarp.ddp.DdpHeader;
import org.jwarp.memory.StagAccess;
import org.jwarp.memory.StagRegion;
import org.jwarp.negotiation.InitiatorConfig;
import org.jwarp.negotiation.LoopbackNegotiation;
import org.jwarp.negotiation.NegotiationOutcome;
import org.jwarp.negotiation.NegotiationStatus;
import org.jwarp.negotiation.ResponderConfig;
import org.jwarp.ground.RtrType;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * RFC 6581 rules whose effect is on the RDMAP stream rather than in the MPA frames: the negotiated
 * IRD/ORD bound the Read Requests on the wire (§9.1), the RTR is the first FPDU and never reaches
 * the ULP (§5), and the setup TERM codes of §8 encode as RFC 5040 §4.8 control words.
 */
class Rfc6581ConformanceTest {

    /** Runs both negotiation engines, then builds an RDMAP pair from the two outcomes. */
    private static RdmapPair negotiatedPair(InitiatorConfig.Builder ini, ResponderConfig.Builder res) {
        LoopbackNegotiation.Result r = LoopbackNegotiation.run(ini.build(), res.build());
        assertEquals(NegotiationStatus.ESTABLISHED, r.status(), r.toString());
        return new RdmapPair(settingsOf(r.initiator().outcome()), settingsOf(r.responder().outcome()), 7);
    }

    private static RdmapSettings settingsOf(NegotiationOutcome o) {
        return new RdmapSettings(1000, o.crc(), false, o.ird(), o.ord(), 64, 64);
    }

    private static int readRequestsOnWire(byte[] stream) {
        int n = 0;
        for (ByteBuffer u : RdmapEndpointTest.ulpdus(stream)) {
            if ((u.get(0) & DdpHeader.T_FLAG) == 0 && u.getInt(DdpHeader.QN_OFFSET) == RdmapOpcode.QN_READ_REQUEST) {
                n++;
            }
        }
        return n;
    }

    @Test
    @DisplayName("RFC 6581 §9.1: the initiator never has more Read Requests on the wire than its negotiated ORD")
    void initiatorMustNotSendMoreReadsThanOrd_6581_9_1() {
        // Initiator asks for ORD 8, the responder's IRD is 3: the negotiated ORD is 3.
        RdmapPair p = negotiatedPair(InitiatorConfig.builder().ird(4).ord(8).peerToPeer(false),
                ResponderConfig.builder().maxIrd(3).ord(2));
        assertEquals(3, p.a.settings().ord());
        StagRegion src = p.stags.register(p.pdB, ByteBuffer.allocateDirect(100), 0, 100, 0, StagAccess.REMOTE_READ);
        StagRegion sink = p.stags.register(p.pdA, ByteBuffer.allocateDirect(100), 0, 100, 0, StagAccess.LOCAL_WRITE);
        for (int i = 0; i < 6; i++) {
            p.a.postRead(i, sink.stag(), i * 10L, 10, src.stag(), i * 10L, true);
        }
        ByteBuffer out = ByteBuffer.allocateDirect(1 << 16);
        while (p.a.transmit(out) > 0) {
            // drain everything A is allowed to send before any Read Response comes back
        }
        byte[] sent = new byte[out.position()];
        out.get(0, sent);
        assertEquals(3, readRequestsOnWire(sent), "ORD 3 bounds the outstanding Read Requests");
        assertEquals(3, p.a.readsOutstanding());
        p.deliver(p.b, sent);
        p.pump();
        assertTrue(p.evB.localErrors.isEmpty(), "the responder's IRD was never exceeded: " + p.evB.localErrors);
        assertEquals(6, p.evA.sendCompletions.size(), "the other Reads went out as responses came back");
    }

    @Test
    @DisplayName("RFC 6581 §9.1: a Read Request beyond the responder's negotiated IRD terminates the stream")
    void readsBeyondNegotiatedIrdTerminate_6581_9_1() {
        LoopbackNegotiation.Result r = LoopbackNegotiation.run(InitiatorConfig.builder().ird(4).ord(8).peerToPeer(false)
                .build(), ResponderConfig.builder().maxIrd(2).ord(2).build());
        NegotiationOutcome res = r.responder().outcome();
        assertEquals(2, res.ird());
        // A peer that ignores the negotiated ORD: its engine is configured with the ORD it asked for.
        RdmapPair p = new RdmapPair(new RdmapSettings(1000, res.crc(), false, 4, 8, 64, 64), settingsOf(res), 7);
        StagRegion src = p.stags.register(p.pdB, ByteBuffer.allocateDirect(100), 0, 100, 0, StagAccess.REMOTE_READ);
        StagRegion sink = p.stags.register(p.pdA, ByteBuffer.allocateDirect(100), 0, 100, 0, StagAccess.LOCAL_WRITE);
        for (int i = 0; i < 3; i++) {
            p.a.postRead(i, sink.stag(), i * 10L, 10, src.stag(), i * 10L, true);
        }
        p.move(p.a, p.b, p.aToB, true);
        assertEquals(List.of(TermCode.RDMAP_CATASTROPHIC_STREAM), p.evB.localErrors);
        p.pump();
        assertEquals(1, p.evA.peerTerms.size());
        assertEquals(3, ByteBuffer.wrap(p.evA.peerTerms.get(0).ddpHeader()).getInt(DdpHeader.MSN_OFFSET),
                "the third Read Request is the offending one");
    }

    @Test
    @DisplayName("RFC 6581 §9.1/§5: after a Read RTR was negotiated with initiator ORD 0, the initiator can send it")
    void readRtrWithNegotiatedOrdZero_6581_9_1() {
        LoopbackNegotiation.Result r = LoopbackNegotiation.run(InitiatorConfig.builder().ord(0)
                .rtrTypes(EnumSet.of(RtrType.READ)).build(), ResponderConfig.builder().build());
        assertEquals(RtrType.READ, r.rtr());
        assertEquals(0, r.initiator().outcome().ord());
        assertEquals(1, r.responder().outcome().ird(), "the responder raised its IRD for the RTR");
        RdmapPair p = new RdmapPair(settingsOf(r.initiator().outcome()), settingsOf(r.responder().outcome()), 7);
        p.a.postReadRtr();
        p.pump();
        assertEquals(1, p.evB.firstFpdu);
        assertTrue(p.evA.localErrors.isEmpty() && p.evB.localErrors.isEmpty(), p.evA.localErrors + " " + p.evB.localErrors);
        assertEquals(0, p.a.readsOutstanding(), "the empty Read Response completed the RTR");
        assertTrue(p.evA.sendCompletions.isEmpty(), "the RTR is unsignalled");
        assertEquals(RdmapEndpoint.State.RTS, p.a.state());
        assertEquals(RdmapEndpoint.State.RTS, p.b.state());
    }

    @Test
    @DisplayName("RFC 6581 §5: a Write RTR and a Read RTR complete nothing at either side; the responder only learns the first FPDU arrived")
    void rtrNotDeliveredToResponderUlp_6581_5() {
        RdmapPair p = negotiatedPair(InitiatorConfig.builder(), ResponderConfig.builder());
        p.a.postWriteRtr();
        p.pump();
        assertTrue(p.evB.receives.isEmpty(), "a Write RTR completes nothing at the responder");
        assertTrue(p.evA.sendCompletions.isEmpty(), "and nothing at the initiator");
        assertEquals(1, p.evB.firstFpdu, "but the responder learns that the first FPDU arrived");
        RdmapPair q = negotiatedPair(InitiatorConfig.builder().rtrTypes(EnumSet.of(RtrType.READ)),
                ResponderConfig.builder());
        q.a.postReadRtr();
        q.pump();
        assertTrue(q.evB.receives.isEmpty() && q.evB.sendCompletions.isEmpty());
        assertTrue(q.evA.sendCompletions.isEmpty());
    }

    @Test
    @DisplayName("RFC 6581 §8: setup TERM codes 5, 6, 7 are layer 2 / etype 0 control words and decode back")
    void mpaSetupTermsEncodeOnTheWire_6581_8() {
        ByteBuffer b = ByteBuffer.allocate(64);
        ByteBuffer none = ByteBuffer.allocate(0);
        int[] expected = {0x20050000, 0x20060000, 0x20070000};
        TermCode[] codes = {TermCode.MPA_LOCAL_CATASTROPHIC, TermCode.MPA_INSUFFICIENT_IRD, TermCode.MPA_NO_MATCHING_RTR};
        for (int i = 0; i < codes.length; i++) {
            int n = TerminateCodec.encode(b, 0, codes[i], 0, none, 0, 0, 0, false);
            assertEquals(TerminateCodec.CONTROL_LENGTH, n, "no headers for a setup TERM");
            assertEquals(expected[i], b.getInt(0));
            TerminateMessage t = TerminateCodec.decode(b, 0, n);
            assertEquals(codes[i], t.code());
            assertTrue(t.code().isMpa());
            assertFalse(t.m() || t.d() || t.r());
        }
    }
}
