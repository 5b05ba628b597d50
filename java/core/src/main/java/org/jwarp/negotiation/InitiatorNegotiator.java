package org.jwarp.negotiation;

import org.jwarp.ground.RtrType;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import org.jwarp.mpa.EnhancedConnectionData;
import org.jwarp.mpa.MpaDecodeException;
import org.jwarp.mpa.MpaFrame;
import org.jwarp.mpa.MpaFrameReader;
import org.jwarp.mpa.MpaRequestReplyFlyweight;
import org.jwarp.ground.TermCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The initiator side of MPA connection setup, RFC 5044 §7.1.2 with the enhanced connection
 * establishment of RFC 6581 §5, §6, §8, §9.1–§9.3 and §10. Pure and transport-neutral: the
 * transport sends {@link #createRequest()}, feeds the peer's Reply to {@link #onReply(MpaFrame)}
 * (decode errors to {@link #onMalformedReply}), and acts on the returned {@link NegotiationDecision}.
 *
 * <p>Rules applied to the Reply:
 * <ul>
 *   <li>Key, PD_Length and the S/PD_Length consistency are the reader's (§12 sanity checks); a
 *       bad Reply gets TERM (2,0,4). A Rev above the request's, or 0, also gets TERM code 4.</li>
 *   <li>R=1: rejected; the peer's private data and IRD/ORD (its required ORD) are reported.</li>
 *   <li>M=1 when this side has no markers: close.</li>
 *   <li>No enhanced data in the Reply to an enhanced Request (a Rev 1 peer that took the enhanced
 *       data for ULP data, or a Rev 2 peer that ignored S): TERM (2,0,4), the connect fails
 *       (RFC 6581 §10: an enhanced responder replies enhanced, an unenhanced one closes).</li>
 *   <li>A must be echoed; the RTR is picked among types set in both frames, preferring Write,
 *       Read, Send; none in common, or A not echoed: TERM code 7 (§9.2, §8).</li>
 *   <li>ORD is lowered to the responder's IRD; IRD is raised to the responder's ORD up to
 *       {@code maxIrd}, beyond it TERM code 6 (§9.1, §8). A Read RTR with responder IRD 0 gets
 *       TERM code 6 too. {@code 0x3FFF} on either side disables the adjustment for that direction.</li>
 * </ul>
 * After {@link NegotiationAction#RETRY_UNENHANCED} (the peer closed a Rev 2 attempt and
 * {@link InitiatorConfig#fallbackToUnenhanced()} was set; off by default, RFC 6581 §10 "MAY"), the
 * next {@link #createRequest()} is a Rev 1 request. Not thread-safe; one instance per connection attempt.
 */
public final class InitiatorNegotiator {
    private static final Logger LOG = LoggerFactory.getLogger(InitiatorNegotiator.class);

    private enum State { READY, AWAITING_REPLY, DONE }

    private final InitiatorConfig config;
    private boolean useEnhanced;
    private State state = State.READY;
    private MpaFrame request;
    private int attempts;
    private NegotiationOutcome outcome;

    public InitiatorNegotiator(InitiatorConfig config) {
        this.config = Objects.requireNonNull(config, "config");
        this.useEnhanced = config.enhanced();
    }

    public InitiatorConfig config() {
        return config;
    }

    /**
     * The MPA Request to send (Rev 2 with S and enhanced data, or Rev 1 when unenhanced or after
     * an unenhanced retry). Moves to awaiting the Reply.
     */
    public MpaFrame createRequest() {
        if (state != State.READY) {
            throw new IllegalStateException("request already sent; state " + state);
        }
        MpaFrame.Builder b = MpaFrame.request()
                .crc(config.crc())
                .marker(config.markers())
                .limits(config.limits())
                .ulpPrivateData(config.ulpPrivateData());
        if (useEnhanced) {
            boolean p2p = config.peerToPeer();
            Set<RtrType> rtr = config.rtrTypes();
            b.revision(MpaRequestReplyFlyweight.REVISION_2)
                    .enhancedData(new EnhancedConnectionData(p2p,
                            p2p && rtr.contains(RtrType.SEND), p2p && rtr.contains(RtrType.WRITE),
                            p2p && rtr.contains(RtrType.READ), config.ird(), config.ord()));
        } else {
            b.revision(MpaRequestReplyFlyweight.REVISION_1);
        }
        request = b.build();
        attempts++;
        state = State.AWAITING_REPLY;
        return request;
    }

    /** The last request created, or null. */
    public MpaFrame request() {
        return request;
    }

    /** How many requests were created (2 after an unenhanced retry). */
    public int attempts() {
        return attempts;
    }

    /** Whether the next (or current) request is enhanced. */
    public boolean enhancedAttempt() {
        return useEnhanced;
    }

    /** The final outcome, or null while undecided. */
    public NegotiationOutcome outcome() {
        return outcome;
    }

    /** A strict reader for the Reply, with this side's limits. */
    public MpaFrameReader newReplyReader() {
        return new MpaFrameReader(MpaFrame.Kind.REPLY, config.limits());
    }

    /** Decides on the responder's Reply. */
    public NegotiationDecision onReply(MpaFrame reply) {
        Objects.requireNonNull(reply, "reply");
        requireAwaiting();
        if (reply.kind() != MpaFrame.Kind.REPLY) {
            return terminate(TermCode.MPA_INVALID_REQ_REP, "MPA Key: expected an MPA Reply, got a Request (RFC 5044 §7.1.1)",
                    reply);
        }
        int rev = reply.revision();
        if (rev == 0 || rev > request.revision()) {
            return terminate(TermCode.MPA_INVALID_REQ_REP, "MPA Rev: reply revision " + rev + " is not 1.."
                    + request.revision() + " (RFC 5044 §7.1.1, RFC 6581 §10)", reply);
        }
        boolean enhanced = request.enhanced() && reply.enhanced();
        EnhancedConnectionData ed = enhanced ? reply.enhancedData() : null;
        int peerIrd = ed != null ? ed.ird() : NegotiationOutcome.NOT_EXCHANGED;
        int peerOrd = ed != null ? ed.ord() : NegotiationOutcome.NOT_EXCHANGED;
        boolean crc = request.crc() || reply.crc();
        if (reply.reject()) {
            String why = "the responder rejected the connection (MPA R=1, RFC 5044 §7.1.1)";
            if (ed != null && config.ird() != EnhancedConnectionData.NO_NEGOTIATION
                    && ed.ord() != EnhancedConnectionData.NO_NEGOTIATION && ed.ord() > config.ird()) {
                why += "; it requires ORD " + ed.ord() + " above our IRD " + config.ird() + " (RFC 6581 §9.1)";
            }
            return finish(NegotiationAction.CLOSE, null, null, new NegotiationOutcome(NegotiationStatus.REJECTED, rev,
                    enhanced, false, null, crc, reply.marker(), request.marker(), config.ird(), config.ord(), peerIrd,
                    peerOrd, null, reply.ulpPrivateData(), why));
        }
        if (reply.marker() && !config.markers()) {
            return finish(NegotiationAction.CLOSE, null, null, new NegotiationOutcome(NegotiationStatus.CLOSED, rev,
                    enhanced, false, null, crc, true, request.marker(), config.ird(), config.ord(), peerIrd, peerOrd,
                    null, reply.ulpPrivateData(), "MPA M: the responder requires markers, which this side does not "
                    + "implement (RFC 5044 §7.1.1)"));
        }
        if (request.enhanced() && !reply.enhanced()) {
            // RFC 6581 §10: an enhanced responder answers an enhanced Request with an enhanced Reply,
            // an unenhanced one closes. A Reply without S means the peer took our enhanced data for
            // ULP private data: the connection cannot be used as negotiated.
            return terminate(TermCode.MPA_INVALID_REQ_REP, "MPA S: the Reply (Rev " + rev + ") to an enhanced Request "
                    + "carries no enhanced data; the responder read the enhanced data as ULP private data "
                    + "(RFC 6581 §10)", reply);
        }
        if (!enhanced) {
            String why = "unenhanced MPA (RFC 5044 §7.1.2): the initiator's ULP sends first";
            return finish(NegotiationAction.ESTABLISH, null, null, new NegotiationOutcome(NegotiationStatus.ESTABLISHED,
                    rev, false, false, null, crc, reply.marker(), request.marker(), config.ird(), config.ord(),
                    NegotiationOutcome.NOT_EXCHANGED, NegotiationOutcome.NOT_EXCHANGED, null, reply.ulpPrivateData(), why));
        }

        // RFC 6581 §9.2: A echoed; pick an RTR among the common types.
        boolean p2p = config.peerToPeer();
        if (ed.peerToPeer() != p2p) {
            return terminate(TermCode.MPA_NO_MATCHING_RTR, "Enhanced data A: the responder " + (p2p ? "cleared" : "set")
                    + " A, it must echo the request's A (RFC 6581 §9.2)", reply, peerIrd, peerOrd);
        }
        RtrType rtr = null;
        if (p2p) {
            Set<RtrType> common = EnumSet.noneOf(RtrType.class);
            for (RtrType t : config.rtrTypes()) {
                if (offered(ed, t)) {
                    common.add(t);
                }
            }
            rtr = RtrType.preferred(common);
            if (rtr == null) {
                return terminate(TermCode.MPA_NO_MATCHING_RTR, "Enhanced data B/C/D: the reply offers "
                        + RtrType.format(offeredTypes(ed)) + ", none of the requested " + RtrType.format(config.rtrTypes())
                        + " (RFC 6581 §9.2)", reply, peerIrd, peerOrd);
            }
        }

        // RFC 6581 §9.1: ORD ≤ responder IRD, IRD ≥ responder ORD.
        int ord = config.ord();
        if (ord != EnhancedConnectionData.NO_NEGOTIATION && peerIrd != EnhancedConnectionData.NO_NEGOTIATION) {
            ord = Math.min(ord, peerIrd);
            if (rtr == RtrType.READ && peerIrd == 0) {
                return terminate(TermCode.MPA_INSUFFICIENT_IRD, "Enhanced data IRD: 0, but the Read RTR needs an IRD "
                        + "of at least 1 at the responder (RFC 6581 §9.1, §9.2)", reply, peerIrd, peerOrd);
            }
        }
        int ird = config.ird();
        if (ird != EnhancedConnectionData.NO_NEGOTIATION && peerOrd != EnhancedConnectionData.NO_NEGOTIATION
                && peerOrd > ird) {
            if (peerOrd > config.maxIrd()) {
                return terminate(TermCode.MPA_INSUFFICIENT_IRD, "Enhanced data ORD: the responder's ORD " + peerOrd
                        + " exceeds this side's IRD limit " + config.maxIrd() + " (RFC 6581 §9.1, §8)", reply, peerIrd, peerOrd);
            }
            ird = peerOrd;
        }
        String why = p2p ? "peer-to-peer: the initiator sends a zero-length " + rtr.wireName() + " RTR first (RFC 6581 §9.2)"
                : "client-server: the initiator's ULP sends first (RFC 5044 §7.1.2)";
        LOG.debug("MPA initiator established: ird={} ord={} peerIrd={} peerOrd={} rtr={}", ird, ord, peerIrd, peerOrd, rtr);
        return finish(NegotiationAction.ESTABLISH, null, null, new NegotiationOutcome(NegotiationStatus.ESTABLISHED, rev,
                true, p2p, rtr, crc, reply.marker(), request.marker(), ird, ord, peerIrd, peerOrd, null,
                reply.ulpPrivateData(), why));
    }

    /** The Reply could not be decoded: TERM (2,0,4), RFC 5044 §7.1.2 / RFC 6581 §12. */
    public NegotiationDecision onMalformedReply(MpaDecodeException error) {
        requireAwaiting();
        return finish(NegotiationAction.TERMINATE, null, TermCode.MPA_INVALID_REQ_REP,
                failed(NegotiationStatus.TERMINATED, TermCode.MPA_INVALID_REQ_REP, error.getMessage()));
    }

    /** The peer sent an MPA-layer TERM instead of a Reply: close, reporting it. */
    public NegotiationDecision onTerminate(TermCode received) {
        requireAwaiting();
        return finish(NegotiationAction.CLOSE, null, null, failed(NegotiationStatus.TERMINATED, received,
                "the responder terminated with " + received));
    }

    /**
     * The peer closed the connection before replying. For an enhanced attempt with fallback
     * enabled this is {@link NegotiationAction#RETRY_UNENHANCED} (RFC 6581 §10), else CLOSE.
     */
    public NegotiationDecision onConnectionClosed() {
        requireAwaiting();
        if (useEnhanced && config.fallbackToUnenhanced()) {
            useEnhanced = false;
            state = State.READY;
            LOG.debug("MPA initiator: peer closed the Rev 2 attempt, retrying with Rev 1");
            return new NegotiationDecision(NegotiationAction.RETRY_UNENHANCED, null, null,
                    failed(NegotiationStatus.CLOSED, null, "the responder closed the Rev 2 attempt; retry with Rev 1 "
                            + "without enhanced data (RFC 6581 §10)"));
        }
        return finish(NegotiationAction.CLOSE, null, null, failed(NegotiationStatus.CLOSED, null,
                "the responder closed the connection before replying (RFC 5044 §7.1.2)"));
    }

    /** A local failure (e.g. QP resources) during setup: TERM code 5, RFC 6581 §8. */
    public NegotiationDecision localError(String reason) {
        if (state == State.DONE) {
            throw new IllegalStateException("negotiation already finished: " + outcome);
        }
        return finish(NegotiationAction.TERMINATE, null, TermCode.MPA_LOCAL_CATASTROPHIC,
                failed(NegotiationStatus.TERMINATED, TermCode.MPA_LOCAL_CATASTROPHIC,
                        "local catastrophic error: " + reason + " (RFC 6581 §8)"));
    }

    private static boolean offered(EnhancedConnectionData ed, RtrType t) {
        return switch (t) {
            case SEND -> ed.sendRtr();
            case WRITE -> ed.writeRtr();
            case READ -> ed.readRtr();
        };
    }

    static Set<RtrType> offeredTypes(EnhancedConnectionData ed) {
        Set<RtrType> s = EnumSet.noneOf(RtrType.class);
        if (ed.peerToPeer()) {
            for (RtrType t : RtrType.values()) {
                if (offered(ed, t)) {
                    s.add(t);
                }
            }
        }
        return s;
    }

    private void requireAwaiting() {
        if (state != State.AWAITING_REPLY) {
            throw new IllegalStateException("not awaiting an MPA Reply; state " + state);
        }
    }

    private NegotiationDecision terminate(TermCode code, String why, MpaFrame reply) {
        return terminate(code, why, reply, NegotiationOutcome.NOT_EXCHANGED, NegotiationOutcome.NOT_EXCHANGED);
    }

    private NegotiationDecision terminate(TermCode code, String why, MpaFrame reply, int peerIrd, int peerOrd) {
        LOG.debug("MPA initiator terminates with {}: {}", code, why);
        return finish(NegotiationAction.TERMINATE, null, code, new NegotiationOutcome(NegotiationStatus.TERMINATED,
                reply.revision(), reply.enhanced() && request.enhanced(), false, null, request.crc() || reply.crc(),
                reply.marker(), request.marker(), config.ird(), config.ord(), peerIrd, peerOrd, code,
                reply.ulpPrivateData(), why));
    }

    private NegotiationOutcome failed(NegotiationStatus status, TermCode term, String why) {
        return NegotiationOutcome.unagreed(status, request, config.markers(), config.ird(), config.ord(), null, term, why);
    }

    private NegotiationDecision finish(NegotiationAction action, MpaFrame frame, TermCode term, NegotiationOutcome o) {
        state = State.DONE;
        outcome = o;
        return new NegotiationDecision(action, frame, term, o);
    }
}
