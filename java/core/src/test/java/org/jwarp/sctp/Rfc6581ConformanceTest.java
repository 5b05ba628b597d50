package org.jwarp.sctp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.jwarp.mpa.EnhancedConnectionData;
import org.jwarp.mpa.MpaFrame;
import org.jwarp.negotiation.InitiatorConfig;
import org.jwarp.negotiation.InitiatorNegotiator;
import org.jwarp.negotiation.NegotiationDecision;
import org.jwarp.negotiation.NegotiationStatus;
import org.jwarp.negotiation.ResponderConfig;
import org.jwarp.negotiation.ResponderNegotiator;
import org.jwarp.ground.TermCode;
import org.junit.jupiter.api.Test;

/** RFC 6581 §7 (enhanced SCTP session control) rules and §12 robustness of the chunk decoder. */
class Rfc6581ConformanceTest {

    @Test
    void enhancedRejectCarriesRequiredOrd_6581_7() throws Exception {
        InitiatorNegotiator in = new InitiatorNegotiator(InitiatorConfig.builder().ird(2).ord(2).build());
        SessionControlChunk init = SessionControlChunk.fromFrame(in.createRequest());
        ResponderNegotiator rn = new ResponderNegotiator(ResponderConfig.builder().ord(8).requiredOrd(6).build());
        NegotiationDecision rd = rn.respond(SessionControlChunk.decode(init.toBytes()).toFrame());
        assertEquals(TermCode.MPA_INSUFFICIENT_IRD, rd.term());
        SessionControlChunk rej = SessionControlChunk.fromFrame(rd.frame());
        assertEquals(SessionControlFunction.ENHANCED_REJECT, rej.function());
        byte[] wire = rej.toBytes();
        assertEquals(0x7, ((wire[0] & 0xFF) << 8) | (wire[1] & 0xFF), "function code 0x7");
        assertEquals(6, ((wire[6] & 0x3F) << 8) | (wire[7] & 0xFF), "the required ORD right after the header");
        NegotiationDecision id = in.onReply(SessionControlChunk.decode(wire).toFrame());
        assertEquals(NegotiationStatus.REJECTED, id.outcome().status());
        assertEquals(6, id.outcome().peerOrd(), "the initiator learns the ORD it must offer as IRD");
    }

    @Property(tries = 1500)
    void truncatedOrMutatedChunksOnlyTypedError_6581_12(@ForAll("chunks") SessionControlChunk chunk,
            @ForAll @IntRange(min = 0, max = 600) int pos, @ForAll byte value, @ForAll boolean mutate,
            @ForAll @IntRange(min = 0, max = 520) int cut) {
        byte[] b = chunk.toBytes();
        if (mutate) {
            b[pos % b.length] = value;
        }
        byte[] t = Arrays.copyOf(b, Math.max(0, b.length - cut));
        try {
            SessionControlChunk c = SessionControlChunk.decode(t);
            assertEquals(t.length, c.encodedLength());
            if (c.function() != SessionControlFunction.TERMINATE) {
                MpaFrame f = c.toFrame(); // what the engines consume must always build
                assertEquals(c.enhancedData() != null, f.enhanced());
            }
        } catch (SessionControlDecodeException expected) {
            assertTrue(expected.getMessage().contains("RFC"), expected.getMessage());
        }
    }

    @Provide
    Arbitrary<SessionControlChunk> chunks() {
        Arbitrary<EnhancedConnectionData> ed = Combinators.combine(Arbitraries.of(true, false), Arbitraries.of(true, false),
                Arbitraries.of(true, false), Arbitraries.of(true, false), Arbitraries.integers().between(0, 0x3FFF),
                Arbitraries.integers().between(0, 0x3FFF))
                .as((a, b, c, d, ird, ord) -> new EnhancedConnectionData(a, a && b, a && c, a && d, ird, ord));
        return Combinators.combine(Arbitraries.of(SessionControlFunction.values()), ed,
                Arbitraries.bytes().array(byte[].class).ofMaxSize(508))
                .as((f, e, pd) -> SessionControlChunk.of(f, f.carriesEnhancedData() ? e : null,
                        f.carriesPrivateData() ? pd : new byte[0]));
    }
}
