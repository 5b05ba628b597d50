package org.jwarp.negotiation;

import org.jwarp.ground.RtrType;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.EnumSet;
import java.util.Set;
import org.jwarp.mpa.EnhancedConnectionData;
import org.jwarp.mpa.MpaDecodeException;
import org.jwarp.mpa.MpaFrame;
import org.jwarp.mpa.MpaFrameLimits;
import org.jwarp.ground.TermCode;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** One test per MUST/SHOULD of RFC 6581 §§5–10 (and the RFC 5044 §7.1 rules they build on). */
class NegotiationRulesTest {
    private static final int NO_NEG = EnhancedConnectionData.NO_NEGOTIATION;

    private static InitiatorConfig.Builder ini() {
        return InitiatorConfig.builder();
    }

    private static ResponderConfig.Builder res() {
        return ResponderConfig.builder();
    }

    private static LoopbackNegotiation.Result run(InitiatorConfig.Builder i, ResponderConfig.Builder r) {
        return LoopbackNegotiation.run(i.build(), r.build());
    }

    /** A Reply as a peer might send it, for rules our own responder never breaks. */
    private static NegotiationDecision replyTo(InitiatorConfig cfg, MpaFrame reply) {
        InitiatorNegotiator in = new InitiatorNegotiator(cfg);
        in.createRequest();
        return in.onReply(reply);
    }

    private static MpaFrame enhancedReply(EnhancedConnectionData ed) {
        return MpaFrame.reply().crc(true).revision(2).enhancedData(ed).build();
    }

    // ---- §5 Enhanced MPA connection establishment ----

    @Test
    void p2pInitiatorSendsRtrFirstAndResponderAwaitsIt_6581_5() {
        LoopbackNegotiation.Result r = run(ini(), res());
        assertEquals(NegotiationStatus.ESTABLISHED, r.status());
        assertEquals(NegotiationAction.ESTABLISH, r.initiator().action());
        assertEquals(NegotiationAction.ESTABLISH, r.responder().action());
        assertEquals(RtrType.WRITE, r.initiator().outcome().rtr());
        assertEquals(RtrType.WRITE, r.responder().outcome().rtr(), "the responder knows which RTR to await");
        assertTrue(r.initiator().outcome().peerToPeer() && r.responder().outcome().peerToPeer());
        assertNotNull(r.responder().frame(), "the responder sends its Reply");
        assertNull(r.initiator().frame());
    }

    @Test
    void clientServerModeHasNoRtr_6581_5() {
        LoopbackNegotiation.Result r = run(ini().peerToPeer(false), res());
        assertEquals(NegotiationStatus.ESTABLISHED, r.status());
        assertNull(r.rtr());
        assertNull(r.responder().outcome().rtr());
        assertFalse(r.initiator().outcome().peerToPeer());
    }

    // ---- §6 Enhanced MPA Request/Reply frames ----

    @Test
    void enhancedRequestIsRev2WithSAndEnhancedDataFirst_6581_6() {
        MpaFrame req = new InitiatorNegotiator(ini().ird(5).ord(3).ulpPrivateData(new byte[] {42}).build()).createRequest();
        assertEquals(2, req.revision());
        assertTrue(req.enhanced());
        assertEquals(5, req.enhancedData().ird());
        assertEquals(3, req.enhancedData().ord());
        byte[] wire = req.toBytes();
        assertEquals(0x10, wire[16] & 0x10, "S bit");
        assertEquals(5, wire[19], "PD_Length includes the 4 enhanced bytes");
        assertEquals(42, wire[24], "ULP private data follows the enhanced data");
    }

    @Test
    void enhancedReplyIsRev2WithS_6581_6() {
        LoopbackNegotiation.Result r = run(ini(), res());
        assertEquals(2, r.reply().revision());
        assertTrue(r.reply().enhanced());
    }

    @Test
    void unenhancedRequestIsRev1WithoutS_6581_6() {
        MpaFrame req = new InitiatorNegotiator(ini().enhanced(false).build()).createRequest();
        assertEquals(1, req.revision());
        assertFalse(req.enhanced());
        assertEquals(0, req.toBytes()[16] & 0x10);
    }

    // ---- §8 MPA error reporting ----

    @Test
    void initiatorLackingIrdSendsTermCode6_6581_8() {
        // Our responder never exceeds the initiator's IRD; a relaxed peer (Linux siw) may.
        NegotiationDecision d = replyTo(ini().ird(2).maxIrd(4).build(),
                enhancedReply(new EnhancedConnectionData(true, false, true, false, 16, 8)));
        assertEquals(NegotiationStatus.TERMINATED, d.outcome().status());
        assertEquals(NegotiationAction.TERMINATE, d.action());
        assertEquals(new TermCode(2, 0, 6), d.term());
        assertEquals(8, d.outcome().peerOrd());
        assertEquals(NegotiationStatus.ESTABLISHED, run(ini().ird(2).maxIrd(4), res().ord(8)).status());
    }

    @Test
    void noMatchingRtrSendsTermCode7_6581_8() {
        LoopbackNegotiation.Result r = run(ini().rtrTypes(EnumSet.of(RtrType.SEND)), res().rtrTypes(EnumSet.of(RtrType.WRITE)));
        assertEquals(NegotiationStatus.TERMINATED, r.status());
        assertEquals(new TermCode(2, 0, 7), r.term());
        assertTrue(r.reply().enhancedData().writeRtr(), "the responder still offered what it supports");
    }

    @Test
    void localErrorDecisionIsTermCode5_6581_8() {
        InitiatorNegotiator in = new InitiatorNegotiator(ini().build());
        in.createRequest();
        NegotiationDecision d = in.localError("QP creation failed");
        assertEquals(NegotiationAction.TERMINATE, d.action());
        assertEquals(new TermCode(2, 0, 5), d.term());
        ResponderNegotiator rn = new ResponderNegotiator(res().build());
        rn.onRequest(new InitiatorNegotiator(ini().build()).createRequest());
        NegotiationDecision rd = rn.localError("no memory");
        assertEquals(TermCode.MPA_LOCAL_CATASTROPHIC, rd.term());
        assertEquals(NegotiationStatus.TERMINATED, rd.outcome().status());
    }

    @Test
    void mpaErrorsUseLayer2Etype0_6581_8() {
        for (TermCode t : new TermCode[] {TermCode.MPA_LOCAL_CATASTROPHIC, TermCode.MPA_INSUFFICIENT_IRD,
                TermCode.MPA_NO_MATCHING_RTR, TermCode.MPA_INVALID_REQ_REP}) {
            assertEquals(2, t.layer());
            assertEquals(0, t.etype());
        }
    }

    // ---- §9.1 IRD and ORD negotiation ----

    @Test
    void initiatorOrdLoweredToResponderIrd_6581_9_1() {
        LoopbackNegotiation.Result r = run(ini().ord(32), res().maxIrd(8));
        assertEquals(NegotiationStatus.ESTABLISHED, r.status());
        assertEquals(8, r.responder().outcome().ird());
        assertEquals(8, r.initiator().outcome().ord());
    }

    @Test
    void initiatorIrdRaisedToResponderOrdWithinMaxIrd_6581_9_1() {
        LoopbackNegotiation.Result r = run(ini().ird(2).maxIrd(16), res().ord(8));
        assertEquals(NegotiationStatus.ESTABLISHED, r.status());
        assertEquals(2, r.request().enhancedData().ird());
        assertEquals(2, r.responder().outcome().ord(), "responder ORD is capped by the initiator's IRD");
        assertEquals(2, r.initiator().outcome().ird());
    }

    @Test
    void initiatorAdoptsLargerResponderOrdWhenItCan_6581_9_1() {
        // A relaxed peer (Linux siw as responder) may answer with an ORD above the IRD offered.
        NegotiationDecision d = replyTo(ini().ird(2).maxIrd(16).build(),
                enhancedReply(new EnhancedConnectionData(true, false, true, false, 16, 10)));
        assertEquals(NegotiationAction.ESTABLISH, d.action());
        assertEquals(10, d.outcome().ird());
    }

    @Test
    void responderOrdNeverExceedsInitiatorIrd_6581_9_1() {
        LoopbackNegotiation.Result r = run(ini().ird(3), res().ord(100));
        assertEquals(3, r.reply().enhancedData().ord());
        assertEquals(3, r.responder().outcome().ord());
    }

    @Test
    void responderIrdRisesToOneForReadRtrWhenInitiatorOrdIsZero_6581_9_1() {
        LoopbackNegotiation.Result r = run(ini().ord(0).rtrTypes(EnumSet.of(RtrType.READ)), res());
        assertEquals(NegotiationStatus.ESTABLISHED, r.status());
        assertEquals(RtrType.READ, r.rtr());
        assertEquals(1, r.responder().outcome().ird());
        assertEquals(1, r.reply().enhancedData().ird());
        assertEquals(0, r.initiator().outcome().ord());
    }

    @Test
    void readRtrWithZeroResponderIrdTerminatesWithCode6_6581_9_1() {
        NegotiationDecision d = replyTo(ini().rtrTypes(EnumSet.of(RtrType.READ)).build(),
                enhancedReply(new EnhancedConnectionData(true, false, false, true, 0, 1)));
        assertEquals(TermCode.MPA_INSUFFICIENT_IRD, d.term());
    }

    @Test
    void responderRejectsWithRequiredOrdAndTermCode6_6581_9_1() {
        LoopbackNegotiation.Result r = run(ini().ird(2), res().ord(8).requiredOrd(4));
        assertEquals(NegotiationStatus.REJECTED, r.status());
        assertEquals(NegotiationAction.REJECT, r.responder().action());
        assertTrue(r.reply().reject());
        assertEquals(4, r.reply().enhancedData().ord(), "the Reject frame carries the required ORD");
        assertEquals(new TermCode(2, 0, 6), r.responder().term());
        assertEquals(NegotiationStatus.REJECTED, r.initiator().outcome().status());
        assertEquals(4, r.initiator().outcome().peerOrd(), "the initiator learns the ORD to retry with");
    }

    @Test
    void requiredOrdMetIsAccepted_6581_9_1() {
        LoopbackNegotiation.Result r = run(ini().ird(4), res().ord(8).requiredOrd(4));
        assertEquals(NegotiationStatus.ESTABLISHED, r.status());
        assertEquals(4, r.responder().outcome().ord());
    }

    @Test
    void noAutomaticNegotiationForIrdOrdOf3fff_6581_9_1() {
        // Initiator opts out in both directions: the responder echoes 0x3FFF and keeps its ULP values.
        LoopbackNegotiation.Result r = run(ini().ird(NO_NEG).ord(NO_NEG), res().maxIrd(4).ord(6).requiredOrd(5));
        assertEquals(NegotiationStatus.ESTABLISHED, r.status());
        assertEquals(NO_NEG, r.reply().enhancedData().ird());
        assertEquals(NO_NEG, r.reply().enhancedData().ord());
        assertEquals(4, r.responder().outcome().ird());
        assertEquals(6, r.responder().outcome().ord());
        assertEquals(NO_NEG, r.initiator().outcome().ird());
        assertEquals(NO_NEG, r.initiator().outcome().ord());
        // Responder opts out: the initiator keeps its values, no TERM although ORD "exceeds" IRD.
        LoopbackNegotiation.Result q = run(ini().ird(1).ord(2), res().maxIrd(NO_NEG).ord(NO_NEG));
        assertEquals(NegotiationStatus.ESTABLISHED, q.status());
        assertEquals(1, q.initiator().outcome().ird());
        assertEquals(2, q.initiator().outcome().ord());
    }

    @Test
    void peerIrdOrdAlwaysReportedToUlp_6581_9_1() {
        LoopbackNegotiation.Result r = run(ini().ird(7).ord(5), res().maxIrd(9).ord(3));
        NegotiationOutcome i = r.initiator().outcome();
        NegotiationOutcome s = r.responder().outcome();
        assertEquals(r.reply().enhancedData().ird(), i.peerIrd());
        assertEquals(r.reply().enhancedData().ord(), i.peerOrd());
        assertEquals(7, s.peerIrd());
        assertEquals(5, s.peerOrd());
        ResponderNegotiator rn = new ResponderNegotiator(res().build());
        assertEquals(NegotiationAction.AWAIT_ACCEPT,
                rn.onRequest(new InitiatorNegotiator(ini().ird(7).ord(5).build()).createRequest()).action());
        assertEquals(7, rn.peerRequest().ird());
        assertEquals(5, rn.peerRequest().ord());
        assertEquals(7, rn.reject(new byte[] {1}).outcome().peerIrd(), "also on rejection");
    }

    // ---- §9.2 Peer-to-peer connection setup ----

    @Test
    void responderEchoesA_6581_9_2() {
        assertTrue(run(ini().peerToPeer(true), res()).reply().enhancedData().peerToPeer());
        assertFalse(run(ini().peerToPeer(false), res()).reply().enhancedData().peerToPeer());
    }

    @Test
    void aNotEchoedGetsTermCode7_6581_9_2() {
        NegotiationDecision d = replyTo(ini().build(), enhancedReply(new EnhancedConnectionData(false, false, false, false, 16, 16)));
        assertEquals(TermCode.MPA_NO_MATCHING_RTR, d.term());
        NegotiationDecision e = replyTo(ini().peerToPeer(false).build(),
                enhancedReply(new EnhancedConnectionData(true, false, true, false, 16, 16)));
        assertEquals(TermCode.MPA_NO_MATCHING_RTR, e.term());
    }

    @Test
    void rtrFlagsZeroWhenANotSet_6581_9_2() {
        LoopbackNegotiation.Result r = run(ini().peerToPeer(false).rtrTypes(EnumSet.allOf(RtrType.class)), res());
        EnhancedConnectionData q = r.request().enhancedData();
        EnhancedConnectionData p = r.reply().enhancedData();
        assertFalse(q.sendRtr() || q.writeRtr() || q.readRtr());
        assertFalse(p.sendRtr() || p.writeRtr() || p.readRtr());
        assertThrows(IllegalArgumentException.class, () -> MpaFrame.request().revision(2)
                .enhancedData(new EnhancedConnectionData(false, true, false, false, 1, 1)).build());
    }

    @Test
    void rtrFlagsIgnoredOnReceiveWhenAIsZero_6581_9_2() throws MpaDecodeException {
        byte[] wire = MpaFrame.request().revision(2)
                .enhancedData(new EnhancedConnectionData(false, false, false, false, 4, 4)).build().toBytes();
        wire[20] |= 0x40; // B
        wire[22] |= (byte) 0xC0; // C and D
        ResponderNegotiator rn = new ResponderNegotiator(res().build());
        NegotiationDecision d = rn.respond(MpaFrame.decode(wire, MpaFrameLimits.RFC));
        assertEquals(NegotiationAction.ESTABLISH, d.action());
        assertNull(d.outcome().rtr());
        assertFalse(d.frame().enhancedData().offersRtr());
        assertEquals(Set.of(), rn.peerRequest().offeredRtrTypes());
    }

    @Test
    @DisplayName("RFC 6581 §9.2: the responder sets every RTR flag both sides support, and one it supports when none is common")
    void responderSetsEveryCommonRtrFlag_6581_9_2() {
        Set<RtrType> wr = EnumSet.of(RtrType.WRITE, RtrType.READ);
        assertEquals(wr, flags(run(ini().rtrTypes(EnumSet.allOf(RtrType.class)), res().rtrTypes(wr)).reply()),
                "Write and Read both common: both set (§9.2 SHOULD)");
        assertEquals(EnumSet.of(RtrType.READ), flags(run(ini().rtrTypes(EnumSet.of(RtrType.READ)), res().rtrTypes(wr))
                .reply()), "only Read common");
        assertEquals(EnumSet.of(RtrType.WRITE), flags(run(ini().rtrTypes(EnumSet.of(RtrType.SEND)), res().rtrTypes(wr))
                .reply()), "none common: one type the responder supports (§9.2 MUST)");
        // Read is not offered on top of Write when the IRD granted is 0 (initiator ORD 0): no slot for it.
        assertEquals(EnumSet.of(RtrType.WRITE), flags(run(ini().ord(0).rtrTypes(EnumSet.allOf(RtrType.class)),
                res().rtrTypes(wr)).reply()));
    }

    private static Set<RtrType> flags(MpaFrame reply) {
        EnhancedConnectionData p = reply.enhancedData();
        Set<RtrType> s = EnumSet.noneOf(RtrType.class);
        if (p.sendRtr()) {
            s.add(RtrType.SEND);
        }
        if (p.writeRtr()) {
            s.add(RtrType.WRITE);
        }
        if (p.readRtr()) {
            s.add(RtrType.READ);
        }
        return s;
    }

    @Test
    void initiatorPicksPreferredCommonRtrWriteReadSend_6581_9_2() {
        InitiatorConfig all = ini().rtrTypes(EnumSet.allOf(RtrType.class)).build();
        assertEquals(RtrType.WRITE, replyTo(all, enhancedReply(new EnhancedConnectionData(true, true, true, true, 4, 4)))
                .outcome().rtr());
        assertEquals(RtrType.READ, replyTo(all, enhancedReply(new EnhancedConnectionData(true, true, false, true, 4, 4)))
                .outcome().rtr());
        assertEquals(RtrType.SEND, replyTo(all, enhancedReply(new EnhancedConnectionData(true, true, false, false, 4, 4)))
                .outcome().rtr());
        InitiatorConfig readOnly = ini().rtrTypes(EnumSet.of(RtrType.READ)).build();
        assertEquals(RtrType.READ, replyTo(readOnly, enhancedReply(new EnhancedConnectionData(true, true, true, true, 4, 4)))
                .outcome().rtr(), "only types the initiator offered count");
    }

    @Test
    void singleRtrOfferLikeCxgb4IsHonoured_6581_9_2() {
        LoopbackNegotiation.Result r = run(ini().rtrTypes(EnumSet.of(RtrType.READ)), res());
        assertEquals(RtrType.READ, r.rtr());
        assertTrue(r.reply().enhancedData().readRtr());
        assertFalse(r.reply().enhancedData().writeRtr());
    }

    @Test
    void responderRequiringP2pLikeIrdmaRejectsClientServer_6581_9_2() {
        LoopbackNegotiation.Result r = run(ini().peerToPeer(false), res().requireP2p(true));
        assertEquals(NegotiationStatus.REJECTED, r.status());
        assertTrue(r.reply().reject());
        assertEquals(NegotiationStatus.ESTABLISHED, run(ini(), res().requireP2p(true)).status());
    }

    @Test
    void readRtrNotChosenByResponderWithoutIrd_6581_9_2() {
        LoopbackNegotiation.Result r = run(ini().rtrTypes(EnumSet.of(RtrType.READ)), res().maxIrd(0));
        assertEquals(NegotiationStatus.TERMINATED, r.status());
        assertEquals(TermCode.MPA_NO_MATCHING_RTR, r.term());
        assertThrows(IllegalArgumentException.class, () -> res().maxIrd(0).rtrTypes(EnumSet.of(RtrType.READ)).build());
    }

    // ---- §9.3 / §10 Interoperability ----

    @Test
    @DisplayName("RFC 6581 §10: a Reply without S (Rev 2 or Rev 1) to an enhanced Request fails the connect with TERM code 4")
    void replyWithoutSToEnhancedRequestFails_6581_10() {
        for (int rev : new int[] {1, 2}) {
            NegotiationDecision d = replyTo(ini().build(), MpaFrame.reply().crc(true).revision(rev)
                    .ulpPrivateData(new byte[] {7}).build());
            assertEquals(NegotiationAction.TERMINATE, d.action(), "Rev " + rev);
            assertEquals(TermCode.MPA_INVALID_REQ_REP, d.term());
            assertEquals(NegotiationStatus.TERMINATED, d.outcome().status());
        }
        // An unenhanced Request still takes an unenhanced Reply.
        assertEquals(NegotiationAction.ESTABLISH, replyTo(ini().enhanced(false).build(),
                MpaFrame.reply().revision(1).build()).action());
    }

    @Test
    void rev2RequestWithoutSGetsRev2ReplyWithoutS_6581_9_3() {
        ResponderNegotiator rn = new ResponderNegotiator(res().build());
        NegotiationDecision d = rn.respond(MpaFrame.request().revision(2).ulpPrivateData(new byte[] {1, 2}).build());
        assertEquals(2, d.frame().revision());
        assertFalse(d.frame().enhanced());
        assertArrayEquals(new byte[] {1, 2}, d.outcome().peerPrivateData());
    }

    @Test
    @DisplayName("RFC 6581 §6 / RFC 5044 §7.1.1: a Rev 3 Request with S is enhanced, and this Rev 2 responder closes on it")
    void rev3EnhancedRequestIsClosed_6581_6() throws Exception {
        MpaFrame req = MpaFrame.request().revision(3)
                .enhancedData(new EnhancedConnectionData(true, false, true, false, 4, 4)).build();
        MpaFrame decoded = MpaFrame.decode(req.toBytes(), MpaFrameLimits.RFC);
        assertTrue(decoded.enhanced());
        for (boolean enhanced : new boolean[] {true, false}) {
            NegotiationDecision d = new ResponderNegotiator(res().enhanced(enhanced).build()).onRequest(decoded);
            assertEquals(NegotiationAction.CLOSE, d.action(), "enhanced " + enhanced);
            assertNull(d.frame(), "no Reply to a revision this side cannot interoperate with");
            assertEquals(NegotiationStatus.CLOSED, d.outcome().status());
        }
    }

    @Test
    void enhancedBothSides_6581_10() {
        LoopbackNegotiation.Result r = run(ini(), res());
        assertTrue(r.initiator().outcome().enhanced() && r.responder().outcome().enhanced());
        assertEquals(1, r.attempts());
    }

    @Test
    @DisplayName("RFC 6581 §10: an unenhanced responder closes on an enhanced Request; the initiator reports the close")
    void unenhancedResponderClosesOnEnhancedRequest_6581_10() {
        LoopbackNegotiation.Result r = run(ini().ulpPrivateData(new byte[] {5}), res().enhanced(false));
        assertEquals(NegotiationStatus.CLOSED, r.status());
        assertNull(r.reply(), "no Reply is sent");
        assertEquals(NegotiationStatus.CLOSED, r.responder().outcome().status());
        assertEquals(1, r.attempts(), "no unenhanced retry unless asked for");
    }

    @Test
    @DisplayName("RFC 6581 §10: a lax RFC 5044 responder's Rev 1 Reply (enhanced bytes taken as ULP data) fails the connect")
    void enhancedInitiatorFailsOnRev1Reply_6581_10() {
        LoopbackNegotiation.Result r = run(ini().ulpPrivateData(new byte[] {5}),
                res().enhanced(false).unenhancedPolicy(ResponderConfig.UnenhancedPolicy.REPLY_REV1));
        assertEquals(1, r.reply().revision());
        assertEquals(5, r.responder().outcome().peerPrivateData().length, "the peer took 4 + 1 bytes as ULP data");
        assertEquals(NegotiationStatus.TERMINATED, r.initiator().outcome().status());
        assertEquals(TermCode.MPA_INVALID_REQ_REP, r.initiator().outcome().term());
        assertFalse(r.initiator().outcome().enhanced());
    }

    @Test
    void unenhancedInitiatorAndEnhancedResponderUseRev1_6581_10() {
        LoopbackNegotiation.Result r = run(ini().enhanced(false), res());
        assertEquals(NegotiationStatus.ESTABLISHED, r.status());
        assertEquals(1, r.request().revision());
        assertEquals(1, r.reply().revision(), "a Rev 1 request gets a Rev 1 reply");
        assertFalse(r.reply().enhanced());
        assertEquals(NegotiationOutcome.NOT_EXCHANGED, r.responder().outcome().peerIrd());
    }

    @Test
    void initiatorRetriesUnenhancedWhenRev1PeerCloses_6581_10() {
        LoopbackNegotiation.Result r = run(ini().fallbackToUnenhanced(true), res().enhanced(false));
        assertEquals(2, r.attempts());
        assertEquals(NegotiationStatus.ESTABLISHED, r.status());
        assertEquals(1, r.request().revision());
        assertFalse(r.request().enhanced());
        InitiatorNegotiator in = new InitiatorNegotiator(ini().fallbackToUnenhanced(true).build());
        in.createRequest();
        assertEquals(NegotiationAction.RETRY_UNENHANCED, in.onConnectionClosed().action());
        assertEquals(1, in.createRequest().revision());
        assertEquals(NegotiationAction.CLOSE, in.onConnectionClosed().action(), "only one retry");
    }

    @Test
    void noRetryWhenFallbackDisabled_6581_10() {
        LoopbackNegotiation.Result r = run(ini().fallbackToUnenhanced(false),
                res().enhanced(false).unenhancedPolicy(ResponderConfig.UnenhancedPolicy.CLOSE));
        assertEquals(NegotiationStatus.CLOSED, r.status());
        assertEquals(1, r.attempts());
    }

    @Test
    void replyRevisionAboveRequestIsInvalid_6581_10() {
        InitiatorNegotiator in = new InitiatorNegotiator(ini().enhanced(false).build());
        in.createRequest();
        NegotiationDecision d = in.onReply(MpaFrame.reply().revision(2).build());
        assertEquals(TermCode.MPA_INVALID_REQ_REP, d.term());
    }

    // ---- RFC 5044 §7.1 rules the enhanced setup keeps; §12 sanity checks ----

    @Test
    void crcOnWhenEitherSideSetsC_5044_7_1_1() {
        assertTrue(run(ini().crc(true), res().crc(false)).initiator().outcome().crc());
        assertTrue(run(ini().crc(true), res().crc(false)).reply().crc(), "the Reply's C is the decision");
        assertTrue(run(ini().crc(false), res().crc(true)).responder().outcome().crc());
        assertFalse(run(ini().crc(false), res().crc(false)).initiator().outcome().crc());
    }

    @Test
    void markersUnsupportedRejectedWithMZero_5044_7_1_1() {
        LoopbackNegotiation.Result r = run(ini().markers(true), res());
        assertEquals(NegotiationStatus.REJECTED, r.status());
        assertFalse(r.reply().marker());
        InitiatorNegotiator in = new InitiatorNegotiator(ini().build());
        in.createRequest();
        assertEquals(NegotiationAction.CLOSE, in.onReply(MpaFrame.reply().marker(true).revision(2)
                .enhancedData(new EnhancedConnectionData(true, false, true, false, 1, 1)).build()).action());
    }

    @Test
    void unsupportedRevisionClosed_5044_7_1_1() {
        for (int rev : new int[] {0, 3, 255}) {
            NegotiationDecision d = new ResponderNegotiator(res().build()).respond(MpaFrame.request().revision(rev).build());
            assertEquals(NegotiationAction.CLOSE, d.action(), "Rev " + rev);
            assertNull(d.frame());
        }
    }

    @Test
    void malformedFramesGetTermCode4_6581_12() {
        MpaDecodeException e = new MpaDecodeException("MPA Key", "garbage", "RFC 5044 §7.1.1");
        NegotiationDecision r = new ResponderNegotiator(res().build()).onMalformedRequest(e);
        assertEquals(TermCode.MPA_INVALID_REQ_REP, r.term());
        assertTrue(r.outcome().reason().contains("MPA Key"));
        InitiatorNegotiator in = new InitiatorNegotiator(ini().build());
        in.createRequest();
        assertEquals(TermCode.MPA_INVALID_REQ_REP, in.onMalformedReply(e).term());
        InitiatorNegotiator in2 = new InitiatorNegotiator(ini().build());
        in2.createRequest();
        assertEquals(TermCode.MPA_INVALID_REQ_REP, in2.onReply(MpaFrame.request().revision(2).build()).term());
    }

    @Test
    void siwLimitsKeepUserPrivateDataAt251() {
        assertThrows(IllegalArgumentException.class,
                () -> ini().limits(MpaFrameLimits.SIW).ulpPrivateData(new byte[252]).build());
        LoopbackNegotiation.Result r = run(ini().limits(MpaFrameLimits.SIW).ulpPrivateData(new byte[251]),
                res().limits(MpaFrameLimits.SIW).ulpPrivateData(new byte[251]));
        assertEquals(NegotiationStatus.ESTABLISHED, r.status());
        assertEquals(255, r.request().privateDataLength());
        // An RFC-sized request against a siw-limited responder is a malformed request there.
        LoopbackNegotiation.Result big = run(ini().ulpPrivateData(new byte[300]), res().limits(MpaFrameLimits.SIW));
        assertEquals(NegotiationStatus.TERMINATED, big.status());
        assertEquals(TermCode.MPA_INVALID_REQ_REP, big.term());
    }

    @Test
    void ulpPrivateDataDeliveredBothWays_5044_7_1_1() {
        LoopbackNegotiation.Result r = run(ini().ulpPrivateData(new byte[] {1, 2, 3}), res().ulpPrivateData(new byte[] {9}));
        assertArrayEquals(new byte[] {1, 2, 3}, r.responder().outcome().peerPrivateData());
        assertArrayEquals(new byte[] {9}, r.initiator().outcome().peerPrivateData());
    }

    @Test
    void twoStepAcceptUsesAcceptTimeParameters() {
        ResponderNegotiator rn = new ResponderNegotiator(res().build());
        assertEquals(NegotiationAction.AWAIT_ACCEPT,
                rn.onRequest(new InitiatorNegotiator(ini().ird(8).ord(8).build()).createRequest()).action());
        NegotiationDecision d = rn.accept(res().maxIrd(2).ord(1).build());
        assertEquals(2, d.frame().enhancedData().ird());
        assertEquals(1, d.frame().enhancedData().ord());
        assertThrows(IllegalStateException.class, rn::accept);
    }
}
