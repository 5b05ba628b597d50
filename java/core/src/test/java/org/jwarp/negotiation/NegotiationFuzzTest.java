package org.jwarp.negotiation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.Set;
import org.jwarp.ground.RtrType;
import org.jwarp.mpa.EnhancedConnectionData;
import org.jwarp.mpa.MpaDecodeException;
import org.jwarp.mpa.MpaFrame;
import org.jwarp.mpa.MpaFrameLimits;
import org.jwarp.mpa.MpaFrameReader;

/**
 * Coverage-guided fuzzing of the RFC 6581 negotiation engines (§9.1 IRD/ORD, §9.2 peer-to-peer
 * and RTR, §10 interoperability; RFC 5044 §7.1): a fuzzer-chosen configuration on one side, fuzzer
 * bytes as the peer's frame on the other. Whatever arrives, the engine decides (no exception but
 * the typed decode error it is handed), a Reply it sends reads back as the same frame, an accepted
 * peer-to-peer Request is answered with A=1 and at least one RTR type, a client-server one with A=0
 * and no RTR, and an initiator only establishes on an RTR type it offered.
 * Corpus: {@code src/test/resources/org/jwarp/negotiation/NegotiationFuzzTestInputs/}.
 */
class NegotiationFuzzTest {

    private static Set<RtrType> rtrSet(int bits) {
        EnumSet<RtrType> s = EnumSet.noneOf(RtrType.class);
        if ((bits & 1) != 0) {
            s.add(RtrType.SEND);
        }
        if ((bits & 2) != 0) {
            s.add(RtrType.WRITE);
        }
        if ((bits & 4) != 0) {
            s.add(RtrType.READ);
        }
        return s;
    }

    private static int irdOrd(FuzzedDataProvider data) {
        return data.consumeBoolean() ? EnhancedConnectionData.NO_NEGOTIATION : data.consumeInt(0, 300);
    }

    /** Reads {@code bytes} as a frame of {@code kind}: the frame, or null after reporting the decode error. */
    private static MpaFrame read(MpaFrameReader reader, byte[] bytes, int chunk) {
        ByteBuffer in = ByteBuffer.wrap(bytes);
        while (in.hasRemaining()) {
            ByteBuffer part = in.slice(in.position(), Math.min(chunk, in.remaining()));
            MpaFrameReader.Status st = reader.feed(part);
            in.position(in.position() + part.position());
            if (st == MpaFrameReader.Status.COMPLETE) {
                return reader.frame();
            }
        }
        return null;
    }

    @FuzzTest(maxDuration = "30s")
    void negotiation_6581_9(FuzzedDataProvider data) {
        boolean responderSide = data.consumeBoolean();
        MpaFrameLimits limits = data.consumeBoolean() ? MpaFrameLimits.RFC : MpaFrameLimits.SIW;
        int chunk = data.consumeInt(1, 64);
        if (responderSide) {
            responder(data, limits, chunk);
        } else {
            initiator(data, limits, chunk);
        }
    }

    private static void responder(FuzzedDataProvider data, MpaFrameLimits limits, int chunk) {
        ResponderConfig cfg;
        try {
            int ord = irdOrd(data);
            boolean requireP2p = data.consumeBoolean();
            cfg = ResponderConfig.builder().maxIrd(irdOrd(data)).ord(ord)
                    .requiredOrd(data.consumeInt(0, ord == EnhancedConnectionData.NO_NEGOTIATION ? 300 : ord))
                    .rtrTypes(rtrSet(data.consumeInt(1, 7))).enhanced(data.consumeBoolean())
                    .unenhancedPolicy(data.consumeBoolean() ? ResponderConfig.UnenhancedPolicy.REPLY_REV1
                            : ResponderConfig.UnenhancedPolicy.CLOSE)
                    .requireP2p(requireP2p).acceptP2p(requireP2p || data.consumeBoolean()).crc(data.consumeBoolean())
                    .markers(data.consumeBoolean()).ulpPrivateData(data.consumeBytes(data.consumeInt(0, 40)))
                    .limits(limits).build();
        } catch (IllegalArgumentException e) {
            return; // a configuration the builder refuses is not a peer's input
        }
        ResponderNegotiator r = new ResponderNegotiator(cfg);
        byte[] bytes = data.consumeRemainingAsBytes();
        NegotiationDecision d;
        MpaFrame req = null;
        try {
            req = read(r.newRequestReader(), bytes, chunk);
            if (req == null) {
                return; // incomplete: the engine waits (the handshake timer ends it)
            }
            d = r.onRequest(req);
            if (d.action() == NegotiationAction.AWAIT_ACCEPT) {
                assertNotNull(r.peerRequest());
                d = r.accept();
            }
        } catch (MpaDecodeException e) {
            d = r.onMalformedRequest(e);
            assertEquals(NegotiationAction.TERMINATE, d.action());
        }
        assertNotNull(d.outcome(), "a final decision has an outcome");
        assertEquals(d.outcome(), r.outcome());
        MpaFrame reply = d.frame();
        if (d.action() == NegotiationAction.ESTABLISH || d.action() == NegotiationAction.REJECT) {
            assertNotNull(reply, d.action() + " without a Reply");
        }
        if (reply == null) {
            return;
        }
        assertEquals(d.action() == NegotiationAction.REJECT, reply.reject());
        MpaFrame back = read(new MpaFrameReader(MpaFrame.Kind.REPLY, limits), reply.toBytes(), 512);
        assertEquals(reply, back, "the Reply sent reads back as itself");
        if (req != null && r.peerRequest() != null && reply.enhanced() && req.enhanced() && d.action() == NegotiationAction.ESTABLISH) {
            EnhancedConnectionData q = req.enhancedData();
            EnhancedConnectionData a = reply.enhancedData();
            assertEquals(q.peerToPeer(), a.peerToPeer(), "RFC 6581 §9.2: the Reply echoes A");
            int rtrs = (a.sendRtr() ? 1 : 0) + (a.writeRtr() ? 1 : 0) + (a.readRtr() ? 1 : 0);
            // §9.2: at least one RTR option with A=1 (extra ones the responder supports MAY be set), none with A=0
            assertTrue(a.peerToPeer() ? rtrs >= 1 : rtrs == 0, "RTR flags in the Reply: " + a);
            assertTrue(!q.peerToPeer() || cfg.acceptP2p(), "peer-to-peer accepted by a client-server responder");
        }
        assertTrue(reply.revision() >= 1 && reply.revision() <= 2, "Reply revision " + reply.revision());
    }

    private static void initiator(FuzzedDataProvider data, MpaFrameLimits limits, int chunk) {
        InitiatorConfig cfg;
        try {
            boolean p2p = data.consumeBoolean();
            cfg = InitiatorConfig.builder().ird(irdOrd(data)).ord(irdOrd(data)).peerToPeer(p2p)
                    .rtrTypes(rtrSet(data.consumeInt(p2p ? 1 : 0, 7))).enhanced(data.consumeBoolean())
                    .crc(data.consumeBoolean()).ulpPrivateData(data.consumeBytes(data.consumeInt(0, 40)))
                    .limits(limits).fallbackToUnenhanced(data.consumeBoolean()).build();
        } catch (IllegalArgumentException e) {
            return;
        }
        InitiatorNegotiator n = new InitiatorNegotiator(cfg);
        MpaFrame request = n.createRequest();
        assertEquals(request, MpaFrame.decode(request.toBytes(), limits), "the Request sent reads back as itself");
        byte[] bytes = data.consumeRemainingAsBytes();
        NegotiationDecision d;
        try {
            MpaFrame reply = read(n.newReplyReader(), bytes, chunk);
            if (reply == null) {
                return;
            }
            d = n.onReply(reply);
        } catch (MpaDecodeException e) {
            d = n.onMalformedReply(e);
            assertFalse(d.action() == NegotiationAction.ESTABLISH, "established on a malformed Reply");
        }
        assertNotNull(d.outcome(), "a final decision has an outcome");
        if (d.action() == NegotiationAction.ESTABLISH && d.outcome().peerToPeer()) {
            RtrType rtr = d.outcome().rtr();
            assertNotNull(rtr, "peer-to-peer without an RTR type");
            assertTrue(cfg.rtrTypes().contains(rtr), "RTR " + rtr + " was not offered: " + cfg.rtrTypes());
        }
        if (d.action() == NegotiationAction.ESTABLISH) {
            assertTrue(request.enhanced() || !d.outcome().peerToPeer(), "peer-to-peer without enhanced data");
        }
    }
}
