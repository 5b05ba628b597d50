package org.jwarp.negotiation;

import org.jwarp.provider.SetupConfigs;
import org.jwarp.ground.RtrType;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.EnumSet;
import java.util.Set;
import org.jwarp.mpa.MpaFrameLimits;
import org.jwarp.verbs.ConnectionParameters;
import org.junit.jupiter.api.Test;

class ConnectionParametersMappingTest {

    @Test
    void rdmaCmNamesMapToIrdAndOrd_6581_9_1() {
        ConnectionParameters p = ConnectionParameters.builder().responderResources(3).initiatorDepth(5).build();
        assertEquals(3, p.ird());
        assertEquals(5, p.ord());
        assertEquals(3, p.responderResources());
        assertEquals(5, p.initiatorDepth());
        ConnectionParameters big = ConnectionParameters.builder().ird(1000).ord(ConnectionParameters.NO_NEGOTIATION).build();
        assertEquals(255, big.responderResources(), "librdmacm u8: 0xFF = device maximum");
        assertEquals(255, big.initiatorDepth());
    }

    @Test
    void builderValidatesEveryField() {
        assertThrows(IllegalArgumentException.class, () -> ConnectionParameters.builder().ird(0x4000));
        assertThrows(IllegalArgumentException.class, () -> ConnectionParameters.builder().ord(-1));
        assertThrows(IllegalArgumentException.class, () -> ConnectionParameters.builder().retryCount(8));
        assertThrows(IllegalArgumentException.class, () -> ConnectionParameters.builder().rnrRetryCount(-1));
        assertThrows(IllegalArgumentException.class, () -> ConnectionParameters.builder().privateData(new byte[513]));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ConnectionParameters.builder().rtrTypes(Set.of()).build());
        assertTrue(e.getMessage().contains("RFC 6581 §9.2"), e.getMessage());
        ConnectionParameters.builder().peerToPeer(false).rtrTypes(Set.of()).build();
    }

    @Test
    void immutableAndValueEquality() {
        byte[] pd = {1, 2};
        ConnectionParameters a = ConnectionParameters.builder().privateData(pd).build();
        pd[0] = 9;
        assertEquals(1, a.privateData()[0]);
        a.privateData()[1] = 7;
        assertEquals(2, a.privateData()[1]);
        assertEquals(a, a.toBuilder().build());
        assertEquals(a.hashCode(), a.toBuilder().build().hashCode());
        assertNotEquals(a, a.toBuilder().crc(false).build());
    }

    @Test
    void mapsOntoTheNegotiationEngines_6581_9_1() {
        ConnectionParameters init = ConnectionParameters.builder().ird(2).ord(8).rtrTypes(RtrType.READ)
                .privateData(new byte[] {5}).build();
        ConnectionParameters acc = ConnectionParameters.builder().ird(4).ord(6).rtrTypes(EnumSet.allOf(RtrType.class)).build();
        LoopbackNegotiation.Result r = LoopbackNegotiation.run(SetupConfigs.initiator(init, 16, MpaFrameLimits.SIW),
                SetupConfigs.responder(acc, 0, MpaFrameLimits.SIW));
        assertEquals(NegotiationStatus.ESTABLISHED, r.status());
        assertEquals(RtrType.READ, r.rtr());
        assertEquals(4, r.initiator().outcome().ord(), "ORD lowered to the responder's IRD");
        assertEquals(2, r.responder().outcome().ord(), "responder ORD capped by the initiator's IRD");
        assertThrows(IllegalArgumentException.class, () -> SetupConfigs.initiator(
                ConnectionParameters.builder().privateData(new byte[300]).build(), 16, MpaFrameLimits.SIW));
    }

    @Test
    void clientServerAcceptRejectsPeerToPeerRequest_6581_9_2() {
        // the accept side asks for the client-server model: no RTR types, no A bit
        ConnectionParameters acc = ConnectionParameters.builder().peerToPeer(false).rtrTypes(Set.of()).build();
        ConnectionParameters init = ConnectionParameters.builder().rtrTypes(RtrType.READ).build();
        LoopbackNegotiation.Result r = LoopbackNegotiation.run(SetupConfigs.initiator(init, 16, MpaFrameLimits.SIW),
                SetupConfigs.responder(acc, 0, MpaFrameLimits.SIW));
        assertEquals(NegotiationStatus.REJECTED, r.status(), "an empty RTR set is not 'any RTR'");
        assertTrue(r.responder().outcome().reason().contains("§9.2"), r.responder().outcome().reason());
        // a client-server request still gets through
        LoopbackNegotiation.Result cs = LoopbackNegotiation.run(SetupConfigs.initiator(acc, 16, MpaFrameLimits.SIW),
                SetupConfigs.responder(acc, 0, MpaFrameLimits.SIW));
        assertEquals(NegotiationStatus.ESTABLISHED, cs.status());
        assertEquals(null, cs.rtr());
        assertThrows(IllegalArgumentException.class, () -> ResponderConfig.builder().requireP2p(true).acceptP2p(false).build());
    }
}
