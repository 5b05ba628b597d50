package org.jwarp.negotiation;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.jwarp.mpa.MpaDecodeException;
import org.jwarp.mpa.MpaFrame;
import org.jwarp.mpa.MpaFrameLimits;
import org.junit.jupiter.api.Test;

class CmPrivateDataTest {

    @Test
    void negotiationRunsOverCmPrivateData_6581_9() throws Exception {
        InitiatorNegotiator in = new InitiatorNegotiator(InitiatorConfig.builder().ird(2).ord(4)
                .ulpPrivateData(new byte[] {1}).build());
        byte[] connectPd = CmPrivateData.toPrivateData(in.createRequest());
        assertEquals(5, connectPd.length);
        ResponderNegotiator rn = new ResponderNegotiator(ResponderConfig.builder().maxIrd(3).ord(8).build());
        NegotiationDecision rd = rn.respond(CmPrivateData.toFrame(MpaFrame.Kind.REQUEST, false, connectPd, MpaFrameLimits.RFC));
        assertArrayEquals(new byte[] {1}, rd.outcome().peerPrivateData());
        byte[] acceptPd = CmPrivateData.toPrivateData(rd.frame());
        NegotiationDecision id = in.onReply(CmPrivateData.toFrame(MpaFrame.Kind.REPLY, false, acceptPd, MpaFrameLimits.RFC));
        assertEquals(NegotiationAction.ESTABLISH, id.action());
        assertEquals(3, id.outcome().ord());
        assertEquals(2, rd.outcome().ord());
    }

    @Test
    void shortPrivateDataIsTypedError_6581_9() {
        MpaDecodeException e = assertThrows(MpaDecodeException.class,
                () -> CmPrivateData.toFrame(MpaFrame.Kind.REPLY, true, new byte[3], MpaFrameLimits.RFC));
        assertEquals("RFC 6581 §9", e.rfcSection());
        assertThrows(IllegalArgumentException.class,
                () -> CmPrivateData.toPrivateData(MpaFrame.request().revision(1).build()));
    }

    @Test
    void rtrFlagsDroppedWithoutA_6581_9_2() throws Exception {
        MpaFrame f = CmPrivateData.toFrame(MpaFrame.Kind.REPLY, true, new byte[] {0x40, 1, (byte) 0xC0, 2}, MpaFrameLimits.RFC);
        assertFalse(f.enhancedData().offersRtr());
        assertFalse(f.enhancedData().sendRtr());
        assertTrue(f.reject());
        assertEquals(1, f.enhancedData().ird());
    }
}
