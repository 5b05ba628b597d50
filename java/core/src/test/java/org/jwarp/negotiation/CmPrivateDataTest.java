package org.jwarp.negotiation;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.jwarp.mpa.MpaDecodeException;
import org.jwarp.mpa.MpaFrame;
import org.jwarp.mpa.MpaFrameLimits;
import java.util.Arrays;
import net.jqwik.api.ForAll;
import net.jqwik.api.Label;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class CmPrivateDataTest {

    @Test
    void negotiationRunsOverCmPrivateData_6581_9() throws Exception {
        InitiatorNegotiator in = new InitiatorNegotiator(InitiatorConfig.builder().ird(2).ord(4)
                .ulpPrivateData(new byte[] {1}).build());
        byte[] connectPd = CmPrivateData.toPrivateData(in.createRequest());
        assertEquals(6, connectPd.length, "4 bytes enhanced data, the length byte, 1 ULP byte");
        assertEquals(1, connectPd[CmPrivateData.ULP_LENGTH_OFFSET]);
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
        MpaFrame f = CmPrivateData.toFrame(MpaFrame.Kind.REPLY, true, new byte[] {0x40, 1, (byte) 0xC0, 2, 0},
                MpaFrameLimits.RFC);
        assertFalse(f.enhancedData().offersRtr());
        assertFalse(f.enhancedData().sendRtr());
        assertTrue(f.reject());
        assertEquals(1, f.enhancedData().ird());
    }

    /** What the IB CM delivers: the sent bytes followed by zeros up to the message's fixed size. */
    static byte[] pad(byte[] b, int size) {
        return Arrays.copyOf(b, Math.max(size, b.length));
    }

    static MpaFrame request(byte[] ulp) {
        return new InitiatorNegotiator(InitiatorConfig.builder().ird(3).ord(2).ulpPrivateData(ulp).build())
                .createRequest();
    }

    @Test
    @DisplayName("RFC 6581 §9 over the IB CM: REQ/REP/REJ zero padding (56/196/148 bytes) is not ULP data")
    void paddingIsNotUlpData_6581_9() throws Exception {
        byte[] ulp = {7, 0, 5, 0, 0}; // ends in zeros, like the padding
        byte[] wire = CmPrivateData.toPrivateData(request(ulp));
        assertEquals(CmPrivateData.OVERHEAD + ulp.length, wire.length);
        for (int size : new int[] {wire.length, 56, 148, 196}) {
            MpaFrame f = CmPrivateData.toFrame(MpaFrame.Kind.REQUEST, false, pad(wire, size), ROCE);
            assertArrayEquals(ulp, f.ulpPrivateData(), "padded to " + size);
            assertEquals(3, f.enhancedData().ird());
            assertEquals(2, f.enhancedData().ord());
        }
        MpaFrame empty = CmPrivateData.toFrame(MpaFrame.Kind.REPLY, false,
                pad(CmPrivateData.toPrivateData(request(new byte[0])), 196), ROCE);
        assertArrayEquals(new byte[0], empty.ulpPrivateData(), "no ULP data: 191 zero bytes of padding stay out");
    }

    @Test
    @DisplayName("RFC 6581 §9: a missing ULP length byte is a typed error naming the field")
    void missingUlpLengthIsTypedError_6581_9() {
        MpaDecodeException e = assertThrows(MpaDecodeException.class,
                () -> CmPrivateData.toFrame(MpaFrame.Kind.REQUEST, false, new byte[] {0, 1, 0, 1}, ROCE));
        assertEquals("CM private data ULP length", e.field());
        assertEquals("RFC 6581 §9", e.rfcSection());
    }

    @Test
    @DisplayName("RFC 6581 §9: a ULP length past the received bytes is a typed error naming the field")
    void ulpLengthPastTheDataIsTypedError_6581_9() {
        byte[] wire = CmPrivateData.toPrivateData(request(new byte[] {1, 2, 3}));
        byte[] cut = Arrays.copyOf(wire, wire.length - 1);
        MpaDecodeException e = assertThrows(MpaDecodeException.class,
                () -> CmPrivateData.toFrame(MpaFrame.Kind.REQUEST, false, cut, ROCE));
        assertEquals("CM private data ULP length", e.field());
        assertTrue(e.getMessage().contains("3 exceeds the 2 bytes"), e.getMessage());
        byte[] lying = pad(wire, 56);
        lying[CmPrivateData.ULP_LENGTH_OFFSET] = (byte) 52; // 5 + 52 > 56
        assertThrows(MpaDecodeException.class, () -> CmPrivateData.toFrame(MpaFrame.Kind.REQUEST, false, lying, ROCE));
        lying[CmPrivateData.ULP_LENGTH_OFFSET] = (byte) 51; // exactly fills the REQ
        assertDoesNotThrow(() -> CmPrivateData.toFrame(MpaFrame.Kind.REQUEST, false, lying, ROCE));
    }

    @Test
    @DisplayName("RFC 6581 §9: the u8 ULP length bounds what can be encoded")
    void ulpLongerThanTheLengthFieldRefused_6581_9() {
        MpaFrame big = MpaFrame.request().revision(2)
                .enhancedData(new org.jwarp.mpa.EnhancedConnectionData(false, false, false, false, 1, 1))
                .ulpPrivateData(new byte[256]).build();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CmPrivateData.toPrivateData(big));
        assertTrue(e.getMessage().startsWith("CM private data ULP length"), e.getMessage());
    }

    @Property
    @Label("RFC 6581 §9: any ULP private data round-trips through any amount of zero padding")
    void ulpRoundTripsThroughAnyPadding_6581_9(@ForAll @Size(max = 250) byte[] ulp,
            @ForAll @IntRange(max = 200) int extra) throws Exception {
        byte[] wire = CmPrivateData.toPrivateData(request(ulp));
        MpaFrame f = CmPrivateData.toFrame(MpaFrame.Kind.REPLY, false, pad(wire, Math.min(255, wire.length + extra)),
                ROCE);
        assertArrayEquals(ulp, f.ulpPrivateData());
    }

    static final MpaFrameLimits ROCE = new MpaFrameLimits(255, 255);
}
