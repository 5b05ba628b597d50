package org.jwarp.provider;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.EnumSet;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.jwarp.mpa.EnhancedConnectionData;
import org.jwarp.mpa.MpaDecodeException;
import org.jwarp.negotiation.NegotiationAction;
import org.jwarp.negotiation.NegotiationDecision;
import org.jwarp.negotiation.NegotiationOutcome;
import org.jwarp.negotiation.NegotiationStatus;
import org.jwarp.ground.RtrType;
import org.jwarp.ground.TermCode;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.ConnectionRejectedException;
import org.jwarp.verbs.DeviceInfo;
import org.jwarp.verbs.RdmaException;
import org.junit.jupiter.api.Test;

/**
 * The device providers' use of the RFC 6581 §9 engines over rdma_cm, without a device: CM events
 * as the kernel iWARP providers fill them, and CmPrivateData as the padded IB CM carries it.
 */
class CmNegotiationTest {
    static final CmNegotiation SIW = new CmNegotiation(false, CmNegotiation.EventReading.STANDARD, 128, 128);
    static final CmNegotiation ROCE = new CmNegotiation(true, CmNegotiation.EventReading.STANDARD, 128, 128);

    /** rdma_cm_event_type values of the events these tests stand in for (only the name matters here). */
    static final int CONNECT_REQUEST = 4;
    static final int REJECTED = 8;
    static final int ESTABLISHED = 9;

    static CmEventValues ev(int type, int rr, int id, byte[] pd) {
        return CmEventValues.of(rr, id, pd);
    }

    static ConnectionParameters params(int ird, int ord, String pd) {
        return ConnectionParameters.builder().ird(ird).ord(ord).privateData(pd.getBytes(StandardCharsets.US_ASCII))
                .build();
    }

    static byte[] pad(byte[] b, int size) {
        return Arrays.copyOf(b, size);
    }

    @Test
    void iwarpConnectRequestReportsInitiatorIrdOrdToUlp_6581_9_1() throws Exception {
        // siw at CONNECT_REQUEST: initiator_depth = the initiator's IRD, responder_resources = its ORD
        CmNegotiation.Responder r = SIW.responder(ev(CONNECT_REQUEST, 2, 4, "hi".getBytes()));
        assertEquals(4, r.peerIrd());
        assertEquals(2, r.peerOrd());
        assertArrayEquals("hi".getBytes(), r.peerPrivateData());
        assertFalse(r.peer().peerToPeer(), "rdma_cm does not report A: client-server");
    }

    @Test
    void responderOrdNeverExceedsInitiatorIrdAndIrdCoversItsOrd_6581_9_1() throws Exception {
        CmNegotiation.Responder r = SIW.responder(ev(CONNECT_REQUEST, 2, 4, new byte[0]));
        NegotiationDecision d = r.accept(params(8, 16, ""));
        assertEquals(NegotiationAction.ESTABLISH, d.action());
        assertEquals(4, d.outcome().ord(), "ORD lowered to the initiator's IRD");
        assertEquals(2, d.outcome().ird(), "IRD = the initiator's ORD, within what the ULP offers");
    }

    @Property
    void responderValuesStayWithinPeerDeviceAndConnParam_6581_9_1(@ForAll @IntRange(max = 255) int peerIrd,
            @ForAll @IntRange(max = 255) int peerOrd, @ForAll @IntRange(max = 0x3FFF) int ird,
            @ForAll @IntRange(max = 0x3FFF) int ord, @ForAll @IntRange(min = 1, max = 512) int devMax) throws Exception {
        CmNegotiation n = new CmNegotiation(false, CmNegotiation.EventReading.STANDARD, devMax, devMax);
        CmNegotiation.Responder r = n.responder(ev(CONNECT_REQUEST, peerOrd, peerIrd, new byte[0]));
        NegotiationOutcome o = r.accept(ConnectionParameters.builder().ird(ird).ord(ord).build()).outcome();
        int cap = Math.min(devMax, 255);
        assertTrue(o.ird() <= cap && o.ord() <= cap, o.toString());
        if (peerIrd != 0 || peerOrd != 0) {
            assertTrue(o.ord() <= peerIrd, "ORD " + o.ord() + " above the initiator's IRD " + peerIrd);
        }
    }

    @Test
    void zeroZeroAtConnectRequestIsARev1InitiatorWithoutEnhancedData_6581_10() throws Exception {
        CmNegotiation.Responder r = SIW.responder(ev(CONNECT_REQUEST, 0, 0, new byte[0]));
        assertEquals(-1, r.peerIrd());
        assertEquals(-1, r.peerOrd());
        NegotiationOutcome o = r.accept(params(6, 3, "")).outcome();
        assertEquals(6, o.ird());
        assertEquals(3, o.ord());
        assertFalse(o.enhanced());
    }

    @Test
    void irdmaRequestOrdZeroIsUnknownNotZero_6581_9_1() throws Exception {
        CmNegotiation irdma = new CmNegotiation(false, CmNegotiation.EventReading.NO_ORD_AT_REQUEST, 64, 64);
        CmNegotiation.Responder r = irdma.responder(ev(CONNECT_REQUEST, 0, 8, new byte[0]));
        assertEquals(8, r.peerIrd());
        assertEquals(-1, r.peerOrd(), "irdma leaves ORD 0: not a value the initiator sent");
        NegotiationOutcome o = r.accept(params(12, 16, "")).outcome();
        assertEquals(12, o.ird(), "grants the IRD the ULP offers rather than 0");
        assertEquals(8, o.ord());
        assertEquals(CmNegotiation.EventReading.NO_ORD_AT_REQUEST, CmNegotiation.EventReading.of("irdma0"));
        assertEquals(CmNegotiation.EventReading.SWAPPED_AT_ESTABLISHED, CmNegotiation.EventReading.of("cxgb4_0"));
        assertEquals(CmNegotiation.EventReading.STANDARD, CmNegotiation.EventReading.of("siw0"));
    }

    @Test
    void initiatorOrdLoweredToResponderIrd_6581_9_1() throws Exception {
        CmNegotiation.Initiator i = SIW.initiator(params(4, 6, "x"));
        assertEquals(4, i.responderResources());
        assertEquals(6, i.initiatorDepth());
        assertArrayEquals("x".getBytes(), i.privateData(), "kernel iWARP adds the enhanced data itself");
        // siw at ESTABLISHED: responder_resources = the responder's IRD, initiator_depth = its ORD
        NegotiationDecision d = i.onReply(ev(ESTABLISHED, 2, 3, "key".getBytes()), false);
        assertEquals(NegotiationAction.ESTABLISH, d.action());
        assertEquals(2, d.outcome().ord());
        assertEquals(4, d.outcome().ird());
        assertEquals(2, d.outcome().peerIrd());
        assertEquals(3, d.outcome().peerOrd());
        assertArrayEquals("key".getBytes(), i.peerPrivateData(d.outcome()));
        assertNull(d.outcome().rtr());
    }

    @Test
    void cxgb4SwapsEstablishedValues_6581_9_1() throws Exception {
        CmNegotiation cxgb4 = new CmNegotiation(false, CmNegotiation.EventReading.SWAPPED_AT_ESTABLISHED, 32, 32);
        NegotiationOutcome o = cxgb4.initiator(params(4, 6, "")).onReply(ev(ESTABLISHED, 3, 2, new byte[0]),
                false).outcome();
        assertEquals(2, o.peerIrd());
        assertEquals(3, o.peerOrd());
        assertEquals(2, o.ord());
    }

    @Test
    void onlyTheReadingAConformingResponderCanSendIsTaken_6581_9_1() throws Exception {
        // our IRD is 4: a responder ORD of 16 cannot be, the swapped reading (ORD 3) can
        NegotiationOutcome o = SIW.initiator(params(4, 16, "")).onReply(ev(ESTABLISHED, 3, 16, new byte[0]),
                false).outcome();
        assertEquals(16, o.peerIrd());
        assertEquals(3, o.peerOrd());
        assertEquals(16, o.ord());
    }

    @Test
    void responderOrdAboveOurIrdLimitTerminatesWithCode6_6581_9_1() throws Exception {
        CmNegotiation small = new CmNegotiation(false, CmNegotiation.EventReading.STANDARD, 8, 8);
        NegotiationDecision d = small.initiator(params(4, 4, "")).onReply(ev(ESTABLISHED, 64, 64, new byte[0]),
                false);
        assertEquals(NegotiationAction.TERMINATE, d.action());
        assertEquals(TermCode.MPA_INSUFFICIENT_IRD, d.term());
    }

    @Test
    void iwarpRejectCarriesUlpPrivateData_5044_7_1_1() throws Exception {
        NegotiationOutcome o = SIW.initiator(params(4, 4, "")).onReply(ev(REJECTED, 0, 0, "busy".getBytes()),
                true).outcome();
        assertEquals(NegotiationStatus.REJECTED, o.status());
        assertArrayEquals("busy".getBytes(), o.peerPrivateData());
        assertFalse(o.peerValuesKnown());
    }

    static final java.net.InetSocketAddress PEER = new java.net.InetSocketAddress("10.0.0.2", 7471);

    @Test
    void iwarpMpaRejectIsTheUlpsRefusalWithItsPrivateData_5044_7_1_1() {
        RdmaException e = SIW.initiator(params(4, 4, "")).rejected(ev(REJECTED, 0, 0, "busy".getBytes()),
                CmNegotiation.IW_MPA_REJECT, PEER);
        ConnectionRejectedException r = assertInstanceOf(ConnectionRejectedException.class, e);
        assertArrayEquals("busy".getBytes(), r.privateData());
        // a TCP refusal (-ECONNREFUSED): nobody listens, no ULP said no
        RdmaException refused = SIW.initiator(params(4, 4, "")).rejected(ev(REJECTED, 0, 0, new byte[0]), -111, PEER);
        assertFalse(refused instanceof ConnectionRejectedException, refused.toString());
        assertTrue(refused.getMessage().contains("status -111"), refused.getMessage());
    }

    @Test
    void roceConsumerRejectCarriesPeerValuesOtherReasonsAreNoListener_6581_9_1() {
        CmNegotiation.Initiator i = ROCE.initiator(params(4, 4, ""));
        CmNegotiation.Responder r;
        try {
            r = ROCE.responder(ev(CONNECT_REQUEST, 0, 0, pad(i.privateData(), CmNegotiation.IB_REQ_PRIVATE_DATA)));
        } catch (MpaDecodeException e) {
            throw new AssertionError(e);
        }
        byte[] rej = pad(r.privateData(r.reject("go-away".getBytes())), CmNegotiation.IB_REJ_PRIVATE_DATA);
        ConnectionRejectedException e = assertInstanceOf(ConnectionRejectedException.class,
                i.rejected(ev(REJECTED, 0, 0, rej), CmNegotiation.IB_REJ_CONSUMER_DEFINED, PEER));
        assertArrayEquals("go-away".getBytes(), e.privateData());
        assertTrue(e.peerIrd() >= 0 && e.requiredOrd() >= 0, e.toString());
        // IB CM reject reason 8 (invalid service ID): no listener
        RdmaException none = ROCE.initiator(params(4, 4, "")).rejected(ev(REJECTED, 0, 0, new byte[0]), 8, PEER);
        assertFalse(none instanceof ConnectionRejectedException, none.toString());
        // a consumer reject whose private data is not RFC 6581 §9 data keeps the raw bytes
        ConnectionRejectedException raw = assertInstanceOf(ConnectionRejectedException.class, ROCE.initiator(
                params(4, 4, "")).rejected(ev(REJECTED, 0, 0, new byte[3]), CmNegotiation.IB_REJ_CONSUMER_DEFINED, PEER));
        assertArrayEquals(new byte[3], raw.privateData());
    }

    @Test
    void noNegotiation3fffBecomesTheDeviceMaximum_6581_9_1() {
        CmNegotiation dev = new CmNegotiation(new DeviceInfo("siw0", DeviceInfo.Transport.IWARP, 32, 16, 1024, 1024, 1L << 30));
        CmNegotiation.Initiator i = dev.initiator(params(ConnectionParameters.NO_NEGOTIATION,
                ConnectionParameters.NO_NEGOTIATION, ""));
        assertEquals(32, i.responderResources());
        assertEquals(16, i.initiatorDepth());
        CmNegotiation big = new CmNegotiation(false, CmNegotiation.EventReading.STANDARD, 4096, 4096);
        assertEquals(255, big.initiator(params(1000, 1000, "")).responderResources(), "rdma_conn_param is u8");
    }

    @Test
    void eventValuesOutsideU8AreRefused_6581_9_1() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SIW.responder(ev(CONNECT_REQUEST, 300, 1, new byte[0])));
        assertTrue(e.getMessage().contains("responder_resources") && e.getMessage().contains("9.1"), e.getMessage());
    }

    @Test
    void iwarpPrivateDataAboveSiwSafeLengthRefused_6581_9() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SIW.initiator(ConnectionParameters.builder().privateData(new byte[252]).build()));
        assertTrue(e.getMessage().startsWith("privateData"), e.getMessage());
    }

    @Test
    void roceRequestCarriesEnhancedDataFirst_6581_9() {
        CmNegotiation.Initiator i = ROCE.initiator(ConnectionParameters.builder().ird(5).ord(7)
                .privateData(new byte[] {9, 8}).peerToPeer(true).rtrTypes(RtrType.WRITE, RtrType.READ).build());
        byte[] pd = i.privateData();
        EnhancedConnectionData ed = CmNegotiation.enhancedOf(pd);
        assertEquals(new EnhancedConnectionData(true, false, true, true, 5, 7), ed);
        assertArrayEquals(new byte[] {2, 9, 8}, Arrays.copyOfRange(pd, 4, pd.length), "length byte, then the ULP's");
    }

    @Test
    void roceSetupThroughPaddedIbCmPrivateData_6581_9_1() throws Exception {
        byte[] hello = "jwarp-hello\0".getBytes(StandardCharsets.US_ASCII); // a trailing 0 must survive the padding
        CmNegotiation.Initiator i = ROCE.initiator(ConnectionParameters.builder().ird(4).ord(2).privateData(hello)
                .build());
        CmNegotiation.Responder r = ROCE.responder(ev(CONNECT_REQUEST, 0, 0,
                pad(i.privateData(), CmNegotiation.IB_REQ_PRIVATE_DATA)));
        assertEquals(4, r.peerIrd());
        assertEquals(2, r.peerOrd());
        assertTrue(r.peer().peerToPeer());
        assertEquals(EnumSet.of(RtrType.WRITE, RtrType.READ), r.peer().offeredRtrTypes());
        assertArrayEquals(hello, r.peerPrivateData());
        NegotiationDecision acc = r.accept(params(8, 3, "key"));
        assertEquals(2, acc.outcome().ird());
        assertEquals(3, acc.outcome().ord(), "responder ORD within the initiator's IRD 4");
        assertEquals(RtrType.WRITE, acc.outcome().rtr());
        byte[] rep = pad(r.privateData(acc), CmNegotiation.IB_REP_PRIVATE_DATA);
        NegotiationDecision d = i.onReply(ev(ESTABLISHED, 0, 0, rep), false);
        assertEquals(NegotiationAction.ESTABLISH, d.action());
        assertEquals(2, d.outcome().ord());
        assertEquals(2, d.outcome().peerIrd());
        assertEquals(3, d.outcome().peerOrd());
        assertEquals(RtrType.WRITE, d.outcome().rtr());
        assertArrayEquals("key".getBytes(), i.peerPrivateData(d.outcome()));
    }

    @Test
    void roceRequestOfAPlainRdmaCmPeerTakesTheIbCmValues_6581_9_1() throws Exception {
        // rdma-core's rping: no private data (the IB CM pads 56 zero bytes), IRD 1 / ORD 1 in the REQ
        CmNegotiation.Responder r = ROCE.responder(ev(CONNECT_REQUEST, 1, 1,
                new byte[CmNegotiation.IB_REQ_PRIVATE_DATA]));
        assertEquals(1, r.peerIrd());
        assertEquals(1, r.peerOrd());
        assertFalse(r.peer().peerToPeer());
        assertArrayEquals(new byte[0], r.peerPrivateData());
        NegotiationDecision acc = r.accept(params(1, 1, ""));
        assertEquals(1, acc.outcome().ird());
        assertEquals(1, acc.outcome().ord(), "an RDMA Read toward rping's IRD 1 is allowed");
        // the REQ's values only stand in when the private data has none: a jwarp peer's win
        CmNegotiation.Initiator i = ROCE.initiator(params(4, 2, ""));
        CmNegotiation.Responder j = ROCE.responder(ev(CONNECT_REQUEST, 7, 7,
                pad(i.privateData(), CmNegotiation.IB_REQ_PRIVATE_DATA)));
        assertEquals(4, j.peerIrd());
        assertEquals(2, j.peerOrd());
    }

    @Test
    void roceRejectCarriesUlpPrivateDataAndPeerValues_6581_9_1() throws Exception {
        CmNegotiation.Initiator i = ROCE.initiator(params(4, 4, ""));
        CmNegotiation.Responder r = ROCE.responder(ev(CONNECT_REQUEST, 0, 0,
                pad(i.privateData(), CmNegotiation.IB_REQ_PRIVATE_DATA)));
        byte[] rej = pad(r.privateData(r.reject("go-away".getBytes())), CmNegotiation.IB_REJ_PRIVATE_DATA);
        NegotiationOutcome o = i.onReply(ev(REJECTED, 0, 0, rej), true).outcome();
        assertEquals(NegotiationStatus.REJECTED, o.status());
        assertArrayEquals("go-away".getBytes(), i.peerPrivateData(o));
        assertTrue(o.peerValuesKnown());
    }

    @Test
    void roceUlpLimitsAreTheIbCmSizes_6581_9() {
        assertEquals(51, CmNegotiation.IB_REQ_PRIVATE_DATA - 5);
        ROCE.initiator(ConnectionParameters.builder().privateData(new byte[51]).build());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ROCE.initiator(ConnectionParameters.builder().privateData(new byte[52]).build()));
        assertTrue(e.getMessage().contains("RoCE connect request"), e.getMessage());
    }

    @Test
    void roceLengthBytePastTheDataIsRefused_6581_9() {
        byte[] pd = new byte[] {0, 4, 0, 4, 9, 1, 2};
        assertThrows(MpaDecodeException.class, () -> ROCE.responder(ev(CONNECT_REQUEST, 0, 0, pd)));
        assertThrows(MpaDecodeException.class, () -> ROCE.responder(ev(CONNECT_REQUEST, 0, 0, new byte[3])));
    }

    @Property
    void offerStaysWithinDeviceAndU8(@ForAll @IntRange(max = 0x3FFF) int req, @ForAll @IntRange(max = 255) int cap) {
        int v = CmNegotiation.offer(req, cap);
        assertTrue(v >= 0 && v <= cap && (req == ConnectionParameters.NO_NEGOTIATION || v <= req));
    }
}
