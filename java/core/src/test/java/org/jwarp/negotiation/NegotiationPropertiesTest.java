package org.jwarp.negotiation;

import org.jwarp.ground.RtrType;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.EnumSet;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.statistics.Statistics;
import org.jwarp.mpa.EnhancedConnectionData;
import org.jwarp.mpa.MpaFrame;
import org.jwarp.ground.TermCode;

/** Random parameters: RFC 6581 §9.1 inequalities and §9.2 flag rules hold for every accepted outcome. */
class NegotiationPropertiesTest {
    private static final int NO_NEG = EnhancedConnectionData.NO_NEGOTIATION;

    @Property(tries = 3000)
    void ordNeverExceedsPeerIrdAfterSuccess_6581_9_1(@ForAll("initiators") InitiatorConfig i,
                                                     @ForAll("responders") ResponderConfig r) {
        LoopbackNegotiation.Result x = LoopbackNegotiation.run(i, r);
        boolean checked = x.status() == NegotiationStatus.ESTABLISHED && x.initiator().outcome().enhanced();
        Statistics.label("enhanced established").collect(checked);
        Statistics.label("enhanced established").coverage(c -> c.check(true).percentage(p -> p > 25));
        if (!checked) {
            return;
        }
        NegotiationOutcome in = x.initiator().outcome();
        NegotiationOutcome re = x.responder().outcome();
        EnhancedConnectionData reply = x.reply().enhancedData();
        if (i.ord() != NO_NEG && reply.ird() != NO_NEG) {
            assertTrue(in.ord() <= re.ird(), "initiator ORD " + in.ord() + " > responder IRD " + re.ird());
            assertTrue(in.ord() <= i.ord(), "initiator ORD never rises");
        }
        if (i.ird() != NO_NEG && reply.ord() != NO_NEG) {
            assertTrue(re.ord() <= in.ird(), "responder ORD " + re.ord() + " > initiator IRD " + in.ird());
            assertTrue(in.ird() <= i.maxIrd(), "initiator IRD within its limit");
        }
        if (r.maxIrd() != NO_NEG && i.ord() != NO_NEG) {
            assertTrue(re.ird() <= Math.max(r.maxIrd(), 1), "responder IRD within its limit");
        }
        if (r.ord() != NO_NEG && i.ird() != NO_NEG) {
            assertTrue(re.ord() >= r.requiredOrd(), "accepted only when the required ORD fits");
        }
        // Peer values reported to the ULP on both sides.
        assertEquals(reply.ird(), in.peerIrd());
        assertEquals(reply.ord(), in.peerOrd());
        assertEquals(x.request().enhancedData().ird(), re.peerIrd());
        assertEquals(x.request().enhancedData().ord(), re.peerOrd());
    }

    @Property(tries = 3000)
    void flagRulesHoldForEveryAcceptedOutcome_6581_9_2(@ForAll("initiators") InitiatorConfig i,
                                                       @ForAll("responders") ResponderConfig r) {
        LoopbackNegotiation.Result x = LoopbackNegotiation.run(i, r);
        boolean checked = x.status() == NegotiationStatus.ESTABLISHED && x.initiator().outcome().enhanced();
        Statistics.label("rtr").collect(checked ? String.valueOf(x.rtr()) : "not checked");
        Statistics.label("rtr").coverage(c -> {
            c.check("WRITE").percentage(p -> p > 3);
            c.check("READ").percentage(p -> p > 3);
            c.check("SEND").percentage(p -> p > 1);
            c.check("null").percentage(p -> p > 3);
        });
        if (!checked) {
            return;
        }
        EnhancedConnectionData q = x.request().enhancedData();
        EnhancedConnectionData p = x.reply().enhancedData();
        assertEquals(q.peerToPeer(), p.peerToPeer(), "A echoed");
        if (!q.peerToPeer()) {
            assertFalse(q.sendRtr() || q.writeRtr() || q.readRtr(), "request B/C/D zero without A");
            assertFalse(p.sendRtr() || p.writeRtr() || p.readRtr(), "reply B/C/D zero without A");
            assertNull(x.rtr());
            return;
        }
        int offered = (p.sendRtr() ? 1 : 0) + (p.writeRtr() ? 1 : 0) + (p.readRtr() ? 1 : 0);
        assertTrue(offered >= 1, "the responder sets at least one RTR type");
        RtrType rtr = x.rtr();
        assertNotNull(rtr);
        assertTrue(has(q, rtr) && has(p, rtr), "chosen RTR is common to both frames");
        assertTrue(i.rtrTypes().contains(rtr) && r.rtrTypes().contains(rtr));
        assertEquals(rtr, x.responder().outcome().rtr());
        Set<RtrType> common = EnumSet.copyOf(i.rtrTypes());
        common.retainAll(r.rtrTypes());
        if (r.maxIrd() == 0) {
            common.remove(RtrType.READ);
        }
        assertEquals(RtrType.preferred(common), rtr, "Write, then Read, then Send");
        if (rtr == RtrType.READ && p.ird() != NO_NEG) {
            assertTrue(x.responder().outcome().ird() >= 1, "a Read RTR needs an IRD slot");
        }
    }

    @Property(tries = 3000)
    void everyOutcomeIsWellFormed_6581_8(@ForAll("initiators") InitiatorConfig i, @ForAll("responders") ResponderConfig r) {
        LoopbackNegotiation.Result x = LoopbackNegotiation.run(i, r);
        Statistics.label("status").collect(x.status());
        Statistics.label("status").coverage(c -> {
            for (NegotiationStatus s : NegotiationStatus.values()) {
                c.check(s).percentage(p -> p > 0.5);
            }
        });
        switch (x.status()) {
            case ESTABLISHED -> assertNull(x.term());
            case TERMINATED -> {
                assertNotNull(x.term());
                assertTrue(x.term().isMpa());
                assertTrue(x.term().ecode() >= 4 && x.term().ecode() <= 7, x.term().toString());
            }
            case REJECTED -> {
                assertTrue(x.reply().reject());
                if (x.term() != null) {
                    assertEquals(TermCode.MPA_INSUFFICIENT_IRD, x.term());
                    assertEquals(r.requiredOrd(), x.reply().enhancedData().ord());
                }
            }
            case CLOSED -> assertNull(x.reply());
        }
    }

    @Property(tries = 3000)
    void arbitraryRepliesOnlyYieldDecisions_6581_12(@ForAll("initiators") InitiatorConfig i, @ForAll("replies") MpaFrame reply) {
        InitiatorNegotiator in = new InitiatorNegotiator(i);
        in.createRequest();
        NegotiationDecision d = in.onReply(reply);
        assertNotNull(d.outcome());
        if (d.action() == NegotiationAction.TERMINATE) {
            assertTrue(d.term().isMpa());
        }
        if (d.action() == NegotiationAction.ESTABLISH && d.outcome().enhanced() && d.outcome().peerToPeer()) {
            assertTrue(i.rtrTypes().contains(d.outcome().rtr()));
            assertTrue(d.outcome().ird() <= Math.max(i.ird(), i.maxIrd()));
        }
    }

    @Property(tries = 2000)
    void arbitraryRequestsOnlyYieldDecisions_6581_12(@ForAll("responders") ResponderConfig r,
                                                     @ForAll("requests") MpaFrame request) {
        NegotiationDecision d = new ResponderNegotiator(r).respond(request);
        assertNotNull(d.outcome());
        if (d.frame() != null) {
            assertTrue(d.frame().isReply());
            assertTrue(d.frame().revision() <= request.revision());
            if (d.frame().enhanced() && !d.frame().reject()) {
                EnhancedConnectionData p = d.frame().enhancedData();
                assertEquals(request.enhancedData().peerToPeer(), p.peerToPeer());
                if (p.peerToPeer()) {
                    assertTrue(p.offersRtr(), "at least one RTR type offered");
                }
            }
        }
    }

    @Property(tries = 2000)
    void rawBytesThroughReadersOnlyYieldDecisions_6581_12(@ForAll("responders") ResponderConfig r,
                                                          @ForAll("initiators") InitiatorConfig i,
                                                          @ForAll("requests") MpaFrame seed,
                                                          @ForAll @net.jqwik.api.constraints.IntRange(min = 0, max = 40) int pos,
                                                          @ForAll byte value) {
        byte[] wire = seed.toBytes();
        wire[pos % wire.length] = value;
        ResponderNegotiator rn = new ResponderNegotiator(r);
        NegotiationDecision d = feed(wire, rn.newRequestReader(), rn::respond, rn::onMalformedRequest);
        assertNotNull(d.outcome());
        InitiatorNegotiator in = new InitiatorNegotiator(i);
        in.createRequest();
        byte[] reply = seed.toBytes();
        reply[9] = 'p'; // "MPA ID Rep Frame" differs from the request key only here
        reply[pos % reply.length] = value;
        NegotiationDecision e = feed(reply, in.newReplyReader(), in::onReply, in::onMalformedReply);
        assertNotNull(e.outcome());
    }

    private static NegotiationDecision feed(byte[] wire, org.jwarp.mpa.MpaFrameReader reader,
                                            java.util.function.Function<MpaFrame, NegotiationDecision> onFrame,
                                            java.util.function.Function<org.jwarp.mpa.MpaDecodeException,
                                                    NegotiationDecision> onError) {
        try {
            if (reader.feed(java.nio.ByteBuffer.wrap(wire)) == org.jwarp.mpa.MpaFrameReader.Status.COMPLETE) {
                return onFrame.apply(reader.frame());
            }
            return onError.apply(new org.jwarp.mpa.MpaDecodeException("MPA frame", "truncated", "RFC 5044 §7.1.1"));
        } catch (org.jwarp.mpa.MpaDecodeException ex) {
            return onError.apply(ex);
        }
    }

    private static boolean has(EnhancedConnectionData d, RtrType t) {
        return switch (t) {
            case SEND -> d.sendRtr();
            case WRITE -> d.writeRtr();
            case READ -> d.readRtr();
        };
    }

    private static Arbitrary<Integer> depth() {
        return Arbitraries.oneOf(Arbitraries.integers().between(0, 40), Arbitraries.integers().between(0, NO_NEG),
                Arbitraries.just(NO_NEG));
    }

    private static Arbitrary<Set<RtrType>> rtrSets() {
        return Arbitraries.subsetOf(RtrType.values()).filter(s -> !s.isEmpty());
    }

    @Provide
    Arbitrary<InitiatorConfig> initiators() {
        return Combinators.combine(depth(), depth(), Arbitraries.integers().between(0, 64), Arbitraries.of(true, false),
                rtrSets(), Arbitraries.of(true, true, true, false), Arbitraries.of(true, false), Arbitraries.of(true, false))
                .as((ird, ord, extra, p2p, rtr, enh, crc, fallback) -> InitiatorConfig.builder().ird(ird).ord(ord)
                        .maxIrd(ird == NO_NEG ? NO_NEG : Math.min(NO_NEG, ird + extra)).peerToPeer(p2p).rtrTypes(rtr)
                        .enhanced(enh).crc(crc).fallbackToUnenhanced(fallback).build());
    }

    @Provide
    Arbitrary<ResponderConfig> responders() {
        return Combinators.combine(depth(), depth(), Arbitraries.integers().between(0, 40), rtrSets(),
                Arbitraries.of(true, true, true, false), Arbitraries.of(ResponderConfig.UnenhancedPolicy.values()),
                Arbitraries.of(false, false, true))
                .as((maxIrd, ord, req, rtr, enh, pol, p2p) -> {
                    Set<RtrType> types = maxIrd == 0 && rtr.equals(EnumSet.of(RtrType.READ)) ? EnumSet.of(RtrType.WRITE) : rtr;
                    int required = ord == NO_NEG ? req : Math.min(req, ord);
                    return ResponderConfig.builder().maxIrd(maxIrd).ord(ord).requiredOrd(required).rtrTypes(types)
                            .enhanced(enh).unenhancedPolicy(pol).requireP2p(p2p).build();
                });
    }

    private static Arbitrary<EnhancedConnectionData> anyEnhancedData() {
        return Combinators.combine(Arbitraries.of(true, false), Arbitraries.of(true, false), Arbitraries.of(true, false),
                Arbitraries.of(true, false), depth(), depth())
                .as((a, b, c, d, ird, ord) -> new EnhancedConnectionData(a, a && b, a && c, a && d, ird, ord));
    }

    @Provide
    Arbitrary<MpaFrame> replies() {
        return Combinators.combine(Arbitraries.of(true, false), Arbitraries.of(true, false), Arbitraries.of(true, false),
                Arbitraries.integers().between(0, 4), anyEnhancedData().injectNull(0.3), Arbitraries.of(true, false, false, false))
                .as((m, c, r, rev, ed, asRequest) -> (asRequest ? MpaFrame.request() : MpaFrame.reply().reject(r))
                        .marker(m).crc(c).revision(ed != null ? 2 : rev).enhancedData(ed).build());
    }

    @Provide
    Arbitrary<MpaFrame> requests() {
        return Combinators.combine(Arbitraries.of(true, false), Arbitraries.of(true, false),
                Arbitraries.integers().between(0, 4), anyEnhancedData().injectNull(0.3),
                Arbitraries.bytes().array(byte[].class).ofMaxSize(16))
                .as((m, c, rev, ed, pd) -> MpaFrame.request().marker(m).crc(c).revision(ed != null ? 2 : rev)
                        .enhancedData(ed).ulpPrivateData(pd).build());
    }
}
