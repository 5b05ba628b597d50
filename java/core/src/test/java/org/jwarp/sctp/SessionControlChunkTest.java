package org.jwarp.sctp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.HexFormat;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.Size;
import org.jwarp.mpa.EnhancedConnectionData;
import org.jwarp.mpa.MpaFrame;
import org.jwarp.negotiation.InitiatorConfig;
import org.jwarp.negotiation.InitiatorNegotiator;
import org.jwarp.negotiation.NegotiationAction;
import org.jwarp.negotiation.NegotiationDecision;
import org.jwarp.negotiation.ResponderConfig;
import org.jwarp.negotiation.ResponderNegotiator;
import org.jwarp.ground.RtrType;
import org.junit.jupiter.api.Test;

class SessionControlChunkTest {
    private static final EnhancedConnectionData ED = new EnhancedConnectionData(true, false, true, false, 8, 4);

    @Test
    void enhancedCodesAre5To7_6581_7() {
        assertEquals(5, SessionControlFunction.ENHANCED_INITIATE.code());
        assertEquals(6, SessionControlFunction.ENHANCED_ACCEPT.code());
        assertEquals(7, SessionControlFunction.ENHANCED_REJECT.code());
        assertTrue(SessionControlFunction.ENHANCED_REJECT.carriesEnhancedData());
        for (int c = 1; c <= 7; c++) {
            assertEquals(c, SessionControlFunction.fromCode(c).code());
        }
        assertNull(SessionControlFunction.fromCode(8));
    }

    @Test
    void enhancedDataFirstThenUlpPrivateData_6581_7() {
        byte[] b = SessionControlChunk.of(SessionControlFunction.ENHANCED_INITIATE, ED, new byte[] {(byte) 0xEE}).toBytes();
        assertEquals("0005" + "0000" + "80088004" + "ee", HexFormat.of().formatHex(b));
    }

    @Test
    void roundTripEveryFunction_5043_4() throws Exception {
        for (SessionControlFunction f : SessionControlFunction.values()) {
            SessionControlChunk c = SessionControlChunk.of(f, f.carriesEnhancedData() ? ED : null,
                    f.carriesPrivateData() ? new byte[] {1, 2} : null);
            assertEquals(c, SessionControlChunk.decode(c.toBytes()));
        }
    }

    @Test
    void privateDataLimitedTo512IncludingEnhancedData_6581_7() {
        SessionControlChunk.of(SessionControlFunction.ENHANCED_ACCEPT, ED, new byte[508]);
        assertThrows(IllegalArgumentException.class,
                () -> SessionControlChunk.of(SessionControlFunction.ENHANCED_ACCEPT, ED, new byte[509]));
        byte[] big = new byte[4 + 513];
        big[1] = 2;
        SessionControlDecodeException e = assertThrows(SessionControlDecodeException.class, () -> SessionControlChunk.decode(big));
        assertEquals("Private Data", e.field());
    }

    @Test
    void terminateCarriesNoPrivateData_6581_7() throws Exception {
        assertThrows(IllegalArgumentException.class,
                () -> SessionControlChunk.of(SessionControlFunction.TERMINATE, null, new byte[] {1}));
        assertThrows(SessionControlDecodeException.class,
                () -> SessionControlChunk.decode(new byte[] {0, 4, 0, 0, 1}));
        assertEquals(0, SessionControlChunk.decode(new byte[] {0, 4, 0, 0}).ulpPrivateData().length);
    }

    @Test
    void enhancedCodesNeedEnhancedData_6581_7() {
        assertThrows(IllegalArgumentException.class,
                () -> SessionControlChunk.of(SessionControlFunction.ENHANCED_INITIATE, null, null));
        assertThrows(IllegalArgumentException.class, () -> SessionControlChunk.of(SessionControlFunction.INITIATE, ED, null));
        assertThrows(SessionControlDecodeException.class, () -> SessionControlChunk.decode(new byte[] {0, 6, 0, 0, 1, 2}));
    }

    @Test
    void reservedIgnoredOnReceiveUnknownCodeRejected_5043_4() throws Exception {
        assertEquals(SessionControlFunction.ACCEPT, SessionControlChunk.decode(new byte[] {0, 2, (byte) 0xFF, 0x12}).function());
        SessionControlDecodeException e = assertThrows(SessionControlDecodeException.class,
                () -> SessionControlChunk.decode(new byte[] {0, 9, 0, 0}));
        assertEquals("Function Code", e.field());
    }

    @Test
    void negotiationEnginesDriveSctpThroughFrameMapping_6581_7() throws Exception {
        InitiatorNegotiator in = new InitiatorNegotiator(InitiatorConfig.builder().ird(4).ord(2).build());
        SessionControlChunk init = SessionControlChunk.fromFrame(in.createRequest());
        assertEquals(SessionControlFunction.ENHANCED_INITIATE, init.function());
        ResponderNegotiator rn = new ResponderNegotiator(ResponderConfig.builder().maxIrd(8).ord(3)
                .ulpPrivateData(new byte[] {7}).build());
        NegotiationDecision rd = rn.respond(SessionControlChunk.decode(init.toBytes()).toFrame());
        SessionControlChunk accept = SessionControlChunk.fromFrame(rd.frame());
        assertEquals(SessionControlFunction.ENHANCED_ACCEPT, accept.function());
        NegotiationDecision id = in.onReply(SessionControlChunk.decode(accept.toBytes()).toFrame());
        assertEquals(NegotiationAction.ESTABLISH, id.action());
        assertEquals(RtrType.WRITE, id.outcome().rtr());
        assertEquals(3, id.outcome().peerOrd());
        assertEquals(2, id.outcome().ord());
        assertArrayEquals(new byte[] {7}, id.outcome().peerPrivateData());
        MpaFrame rej = MpaFrame.reply().reject(true).revision(1).ulpPrivateData(new byte[] {1}).build();
        assertEquals(SessionControlFunction.REJECT, SessionControlChunk.fromFrame(rej).function());
        assertTrue(SessionControlChunk.fromFrame(rej).toFrame().reject());
        // An enhanced Reject keeps the ORD the responder requires (RFC 6581 §7, §9.1).
        MpaFrame erej = MpaFrame.reply().reject(true).revision(2)
                .enhancedData(new EnhancedConnectionData(true, false, false, false, 9, 0)).build();
        SessionControlChunk ec = SessionControlChunk.fromFrame(erej);
        assertEquals(SessionControlFunction.ENHANCED_REJECT, ec.function());
        assertEquals(9, SessionControlChunk.decode(ec.toBytes()).toFrame().enhancedData().ird());
    }

    @Property(tries = 3000)
    void randomPayloadsOnlyTypedError_6581_12(@ForAll @Size(max = 600) byte[] payload) {
        for (int cut = 0; cut <= Math.min(payload.length, 6); cut++) {
            byte[] t = Arrays.copyOf(payload, payload.length - cut);
            try {
                SessionControlChunk c = SessionControlChunk.decode(t);
                assertEquals(t.length, c.encodedLength());
            } catch (SessionControlDecodeException expected) {
                assertTrue(expected.getMessage().contains("RFC"));
            }
        }
    }
}
