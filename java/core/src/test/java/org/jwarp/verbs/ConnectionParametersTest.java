package org.jwarp.verbs;

import org.jwarp.ground.RtrType;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ConnectionParametersTest {

    @Test
    void irdOrdAre14BitAndNoNegotiationIsAccepted_6581_9_1() {
        ConnectionParameters p = ConnectionParameters.builder().ird(0x3FFF).ord(0).build();
        assertEquals(0x3FFF, p.ird());
        assertEquals(0, p.ord());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ConnectionParameters.builder().ird(0x4000));
        assertTrue(e.getMessage().contains("ird") && e.getMessage().contains("6581"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ConnectionParameters.builder().ord(-1));
    }

    @Test
    void privateDataOver512IsRefused_5044_7_1() {
        assertEquals(512, ConnectionParameters.builder().privateData(new byte[512]).build().privateDataLength());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ConnectionParameters.builder().privateData(new byte[513]));
        assertTrue(e.getMessage().contains("privateData"), e.getMessage());
    }

    @Test
    void peerToPeerNeedsAnRtrType_6581_9_2() {
        assertThrows(IllegalArgumentException.class,
                () -> ConnectionParameters.builder().peerToPeer(true).rtrTypes(java.util.Set.of()).build());
        ConnectionParameters cs = ConnectionParameters.builder().peerToPeer(false).rtrTypes(java.util.Set.of()).build();
        assertTrue(cs.rtrTypes().isEmpty());
    }

    @Test
    void privateDataIsDefensivelyCopied() {
        byte[] d = {1, 2, 3};
        ConnectionParameters p = ConnectionParameters.builder().privateData(d).build();
        d[0] = 9;
        assertArrayEquals(new byte[] {1, 2, 3}, p.privateData());
        p.privateData()[1] = 9;
        assertArrayEquals(new byte[] {1, 2, 3}, p.privateData());
        assertEquals(p, p.toBuilder().build());
    }

    @Test
    void unknownProviderIsATypedError() {
        ProviderUnavailableException e = assertThrows(ProviderUnavailableException.class, () -> Rdma.open("nosuch"));
        assertEquals("nosuch", e.provider());
    }
}
