package org.jwarp.negotiation;

import org.jwarp.ground.RtrType;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.jwarp.mpa.EnhancedConnectionData;
import org.jwarp.mpa.MpaFrame;
import org.junit.jupiter.api.Test;

/** RFC 6581 rules not already pinned by {@link NegotiationRulesTest}, one test per rule. */
class Rfc6581ConformanceTest {

    private static List<Set<RtrType>> nonEmptySubsets() {
        List<Set<RtrType>> out = new ArrayList<>();
        RtrType[] all = RtrType.values();
        for (int m = 1; m < (1 << all.length); m++) {
            Set<RtrType> s = EnumSet.noneOf(RtrType.class);
            for (int i = 0; i < all.length; i++) {
                if ((m & (1 << i)) != 0) {
                    s.add(all[i]);
                }
            }
            out.add(s);
        }
        return out;
    }

    private static Set<RtrType> flags(EnhancedConnectionData ed) {
        Set<RtrType> s = EnumSet.noneOf(RtrType.class);
        if (ed.sendRtr()) {
            s.add(RtrType.SEND);
        }
        if (ed.writeRtr()) {
            s.add(RtrType.WRITE);
        }
        if (ed.readRtr()) {
            s.add(RtrType.READ);
        }
        return s;
    }

    @Test
    void initiatorOffersExactlyItsRtrTypes_6581_9_2() {
        for (Set<RtrType> supported : nonEmptySubsets()) {
            MpaFrame req = new InitiatorNegotiator(InitiatorConfig.builder().ord(2).rtrTypes(supported).build())
                    .createRequest();
            EnhancedConnectionData ed = req.enhancedData();
            assertTrue(ed.peerToPeer(), "A set in P2P mode");
            assertEquals(supported, flags(ed), "B/C/D are the supported RTR types");
            byte[] wire = req.toBytes();
            assertEquals(supported.contains(RtrType.SEND), (wire[20] & 0x40) != 0, "B on the wire");
            assertEquals(supported.contains(RtrType.WRITE), (wire[22] & 0x80) != 0, "C on the wire");
            assertEquals(supported.contains(RtrType.READ), (wire[22] & 0x40) != 0, "D on the wire");
        }
    }

    @Test
    void responderPicksAnOfferedRtrAndBothAgree_6581_9_2() {
        for (Set<RtrType> offered : nonEmptySubsets()) {
            for (Set<RtrType> supported : nonEmptySubsets()) {
                LoopbackNegotiation.Result r = LoopbackNegotiation.run(
                        InitiatorConfig.builder().ord(2).rtrTypes(offered).build(),
                        ResponderConfig.builder().maxIrd(2).rtrTypes(supported).build());
                Set<RtrType> common = EnumSet.copyOf(offered);
                common.retainAll(supported);
                Set<RtrType> replied = flags(r.reply().enhancedData());
                String ctx = "offered " + offered + ", responder supports " + supported;
                if (common.isEmpty()) {
                    assertEquals(1, replied.size(), ctx + ": one type the responder supports");
                    assertEquals(NegotiationStatus.TERMINATED, r.status(), ctx);
                    assertEquals(org.jwarp.ground.TermCode.MPA_NO_MATCHING_RTR, r.term(), ctx);
                } else {
                    assertTrue(common.containsAll(replied), ctx + ": the reply sets only common types");
                    assertEquals(common, replied, ctx + ": every common type is set (§9.2 SHOULD)");
                    assertEquals(NegotiationStatus.ESTABLISHED, r.status(), ctx);
                    assertTrue(replied.contains(r.initiator().outcome().rtr()), ctx);
                    assertEquals(r.initiator().outcome().rtr(), r.responder().outcome().rtr(), ctx + ": both agree");
                }
            }
        }
    }

    @Test
    void enhancedReplyCarriesEnhancedDataFirst_6581_6() {
        LoopbackNegotiation.Result r = LoopbackNegotiation.run(InitiatorConfig.builder().ird(6).ord(5).build(),
                ResponderConfig.builder().maxIrd(4).ord(3).ulpPrivateData(new byte[] {0x11, 0x22}).build());
        byte[] wire = r.reply().toBytes();
        assertEquals(2, wire[17], "Rev 2");
        assertEquals(0x10, wire[16] & 0x10, "S");
        assertEquals(6, ((wire[18] & 0xFF) << 8) | (wire[19] & 0xFF), "PD_Length = 4 enhanced + 2 ULP bytes");
        EnhancedConnectionData ed = r.reply().enhancedData();
        int ird = ((wire[20] & 0x3F) << 8) | (wire[21] & 0xFF);
        int ord = ((wire[22] & 0x3F) << 8) | (wire[23] & 0xFF);
        assertEquals(ed.ird(), ird);
        assertEquals(ed.ord(), ord);
        assertEquals(4, ird);
        assertEquals(3, ord);
        assertArrayEquals(new byte[] {0x11, 0x22}, new byte[] {wire[24], wire[25]}, "ULP data after the enhanced data");
        assertArrayEquals(new byte[] {0x11, 0x22}, r.initiator().outcome().peerPrivateData());
    }

    @Test
    void irdOrdNegotiatedWithoutP2p_6581_9_1() {
        LoopbackNegotiation.Result r = LoopbackNegotiation.run(
                InitiatorConfig.builder().peerToPeer(false).ird(2).ord(9).maxIrd(2).build(),
                ResponderConfig.builder().maxIrd(5).ord(7).build());
        assertEquals(NegotiationStatus.ESTABLISHED, r.status());
        assertFalse(r.request().enhancedData().peerToPeer());
        assertNull(r.rtr());
        NegotiationOutcome i = r.initiator().outcome();
        NegotiationOutcome s = r.responder().outcome();
        assertEquals(5, i.ord(), "initiator ORD lowered to the responder IRD");
        assertEquals(2, s.ord(), "responder ORD capped by the initiator IRD");
        assertTrue(i.ord() <= s.ird());
        assertTrue(s.ord() <= i.ird());
        assertEquals(5, i.peerIrd());
        assertEquals(2, s.peerIrd());
    }
}
