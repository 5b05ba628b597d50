package org.jwarp.disni.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.jwarp.verbs.ConnectionParameters;
import org.junit.jupiter.api.Test;

class IrdOrdTest {
    @Property
    void ordNeverExceedsPeerIrd_6581_9_1(@ForAll @IntRange(max = 255) int localOrd, @ForAll @IntRange(max = 0x3FFF) int peerIrd) {
        int ord = IrdOrd.ordWithin(localOrd, peerIrd);
        assertTrue(ord <= peerIrd && ord <= localOrd);
    }

    @Property
    void offerStaysWithinDeviceAndConnParam(@ForAll @IntRange(max = 0x3FFF) int req, @ForAll @IntRange(max = 1024) int dev) {
        int v = IrdOrd.offer(req, dev);
        assertTrue(v <= dev && v <= IrdOrd.CONN_PARAM_MAX && v >= 0);
    }

    @Test
    void noNegotiationMeansDeviceMaximum_6581_9_1() {
        assertEquals(128, IrdOrd.offer(ConnectionParameters.NO_NEGOTIATION, 128));
        assertEquals(255, IrdOrd.offer(ConnectionParameters.NO_NEGOTIATION, 4096));
    }

    @Test
    void responderRaisesIrdToInitiatorOrdWhenTheDeviceAllows() {
        assertEquals(8, IrdOrd.responderIrd(2, 8, 16));
        assertEquals(16, IrdOrd.responderIrd(2, 64, 16));
        assertEquals(4, IrdOrd.responderIrd(4, IrdOrd.UNKNOWN, 16));
    }

    @Test
    void unknownPeerIrdLeavesLocalOrd() {
        assertEquals(5, IrdOrd.ordWithin(5, IrdOrd.UNKNOWN));
    }

    @Test
    void outOfRangeKernelValueIsRefused() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> IrdOrd.checkedPeer("peer IRD", 0x4000));
        assertTrue(e.getMessage().contains("peer IRD") && e.getMessage().contains("6581"));
    }
}
