package org.jwarp.negotiation;

import org.jwarp.ground.RtrType;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import org.jwarp.mpa.FieldChecks;
import org.jwarp.mpa.EnhancedConnectionData;
import org.jwarp.mpa.MpaDecodeException;
import org.jwarp.mpa.MpaFrame;
import org.jwarp.mpa.MpaFrameReader;
import org.jwarp.mpa.MpaRequestReplyFlyweight;
import org.jwarp.ground.TermCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The responder side of MPA connection setup, RFC 5044 §7.1.2 with the enhanced connection
 * establishment of RFC 6581 §5, §6, §8, §9.1–§9.3 and §10. Pure and transport-neutral.
 *
 * <p>Two steps, as rdma_cm has them: {@link #onRequest(MpaFrame)} checks the Request and answers
 * {@link NegotiationAction#AWAIT_ACCEPT} (show {@link #peerRequest()} to the ULP) or a final
 * decision; then {@link #accept(ResponderConfig)} or {@link #reject(byte[])} builds the Reply.
 * {@link #respond(MpaFrame)} does both with the constructor's configuration.
 *
 * <p>Rules:
 * <ul>
 *   <li>Rev 1 request: Rev 1 reply without enhanced data (§10). Rev 0 or above 2: close
 *       (RFC 5044 §7.1.1: a receiver that cannot interoperate with the revision closes; a Rev 3
 *       frame with S is decoded as enhanced, §6, but this side implements Rev 2). A responder
 *       without RFC 6581 support closes on Rev 2 (§10) unless its
 *       {@link ResponderConfig.UnenhancedPolicy} says otherwise.</li>
 *   <li>M=1 without marker support, or a client-server request when {@code requireP2p}: Reply with
 *       R=1 (M=0).</li>
 *   <li>A is echoed; in peer-to-peer mode every RTR type both sides support is set (§9.2 SHOULD;
 *       Read only if the IRD is at least 1 or Read is the sole choice), and the outcome's RTR is
 *       the preferred one (Write, Read, Send), the one this side's initiator picks; any set type
 *       is accepted as the first FPDU. With none in common the preferred type this side supports
 *       is set alone, so the initiator can terminate with code 7. B/C/D are zero when A is zero.</li>
 *   <li>IRD = min(initiator ORD, maxIrd), raised to 1 for a Read RTR; ORD = min(ord, initiator
 *       IRD). When the initiator's IRD is below {@code requiredOrd}: Reply with R=1 carrying the
 *       required ORD, then TERM (2,0,6) (§9.1, §8). {@code 0x3FFF} from either side: no
 *       automatic negotiation in that direction, echoed as {@code 0x3FFF}.</li>
 *   <li>C in the Reply is the request's C or this side's preference, so the Reply's C is the CRC
 *       decision (RFC 5044 §7.1.1).</li>
 * </ul>
 * Not thread-safe; one instance per incoming connection.
 */
public final class ResponderNegotiator {
    private static final Logger LOG = LoggerFactory.getLogger(ResponderNegotiator.class);
    private static final int NO_NEGOTIATION = EnhancedConnectionData.NO_NEGOTIATION;

    private enum State { READY, AWAITING_ACCEPT, DONE }

    private final ResponderConfig config;
    private State state = State.READY;
    private MpaFrame request;
    private PeerRequest peerRequest;
    private boolean enhancedExchange;
    private int replyRevision;
    private MpaFrame reply;
    private NegotiationOutcome outcome;

    public ResponderNegotiator(ResponderConfig config) {
        this.config = Objects.requireNonNull(config, "config");
    }

    public ResponderConfig config() {
        return config;
    }

    /** A strict reader for the Request, with this side's limits. */
    public MpaFrameReader newRequestReader() {
        return new MpaFrameReader(MpaFrame.Kind.REQUEST, config.limits());
    }

    /** The request as the ULP sees it, once {@link #onRequest} accepted it for consideration. */
    public PeerRequest peerRequest() {
        return peerRequest;
    }

    /** The reply sent (or to send), or null. */
    public MpaFrame reply() {
        return reply;
    }

    /** The final outcome, or null while undecided. */
    public NegotiationOutcome outcome() {
        return outcome;
    }

    /** {@link #onRequest(MpaFrame)}, then {@link #accept()} if the request is acceptable. */
    public NegotiationDecision respond(MpaFrame request) {
        NegotiationDecision d = onRequest(request);
        return d.action() == NegotiationAction.AWAIT_ACCEPT ? accept() : d;
    }

    /** Checks the initiator's Request (RFC 5044 §7.1.2, RFC 6581 §10, §12). */
    public NegotiationDecision onRequest(MpaFrame req) {
        Objects.requireNonNull(req, "request");
        if (state != State.READY) {
            throw new IllegalStateException("request already received; state " + state);
        }
        request = req;
        if (req.kind() != MpaFrame.Kind.REQUEST) {
            return terminate(TermCode.MPA_INVALID_REQ_REP, "MPA Key: expected an MPA Request, got a Reply (RFC 5044 §7.1.1)");
        }
        int rev = req.revision();
        if (rev == 0 || rev > MpaRequestReplyFlyweight.REVISION_2) {
            return close("MPA Rev: revision " + rev + " is not supported, closing (RFC 5044 §7.1.1)");
        }
        byte[] peerPd;
        if (rev >= MpaRequestReplyFlyweight.REVISION_2 && !config.enhanced()) {
            if (config.unenhancedPolicy() == ResponderConfig.UnenhancedPolicy.CLOSE) {
                return close("MPA Rev: this responder implements Rev 1 only and closes on Rev 2 (RFC 5044 §7.1.1, "
                        + "RFC 6581 §10)");
            }
            // REPLY_REV1 models a lax RFC 5044 peer (not §10): all private data is the ULP's.
            replyRevision = MpaRequestReplyFlyweight.REVISION_1;
            enhancedExchange = false;
            peerPd = rawPrivateData(req);
        } else {
            replyRevision = Math.min(rev, config.enhanced() ? MpaRequestReplyFlyweight.REVISION_2
                    : MpaRequestReplyFlyweight.REVISION_1);
            enhancedExchange = config.enhanced() && req.enhanced();
            peerPd = req.ulpPrivateData();
        }
        EnhancedConnectionData ied = enhancedExchange ? req.enhancedData() : null;
        peerRequest = new PeerRequest(rev, enhancedExchange, ied != null && ied.peerToPeer(),
                ied != null ? InitiatorNegotiator.offeredTypes(ied) : Set.of(),
                ied != null ? ied.ird() : NegotiationOutcome.NOT_EXCHANGED,
                ied != null ? ied.ord() : NegotiationOutcome.NOT_EXCHANGED, req.crc(), req.marker(), peerPd);
        if (req.marker() && !config.markers()) {
            return rejectWith(config, new byte[0], null, "MPA M: markers are not implemented by this responder, "
                    + "rejecting (RFC 5044 §7.1.1)");
        }
        if (config.requireP2p() && !peerRequest.peerToPeer()) {
            return rejectWith(config, new byte[0], null, "Enhanced data A: this responder requires the peer-to-peer "
                    + "model (RFC 6581 §9.2)");
        }
        state = State.AWAITING_ACCEPT;
        return new NegotiationDecision(NegotiationAction.AWAIT_ACCEPT, null, null, null);
    }

    /** Accepts with the constructor's configuration. */
    public NegotiationDecision accept() {
        return accept(config);
    }

    /**
     * Accepts with {@code acceptConfig}'s IRD/ORD/RTR/CRC/private data (the rdma_cm accept
     * parameters); enhanced support, marker support and limits stay the constructor's.
     */
    public NegotiationDecision accept(ResponderConfig acceptConfig) {
        Objects.requireNonNull(acceptConfig, "acceptConfig");
        requireAwaiting();
        checkPrivateData(acceptConfig.ulpPrivateData());
        if (peerRequest.peerToPeer() && !acceptConfig.acceptP2p()) {
            return rejectWith(acceptConfig, new byte[0], null, "Enhanced data A: the initiator asked for the "
                    + "peer-to-peer model, which this responder does not serve; a Reply must echo A=1, so it rejects "
                    + "(RFC 6581 §9.2)");
        }
        Plan plan = plan(acceptConfig);
        if (plan.insufficientIrd) {
            return rejectWith(acceptConfig, new byte[0], TermCode.MPA_INSUFFICIENT_IRD, "Enhanced data IRD: the initiator's "
                    + "IRD " + peerRequest.ird() + " is below the required ORD " + acceptConfig.requiredOrd()
                    + "; rejecting with the required ORD (RFC 6581 §9.1, §8)");
        }
        reply = replyBuilder(acceptConfig, plan).ulpPrivateData(acceptConfig.ulpPrivateData()).build();
        String why;
        if (!enhancedExchange) {
            why = "unenhanced MPA Rev " + replyRevision + ": no IRD/ORD exchange, the initiator's ULP sends first "
                    + "(RFC 5044 §7.1.2, RFC 6581 §10)";
        } else if (plan.rtr == null) {
            why = "client-server: the initiator's ULP sends first (RFC 5044 §7.1.2)";
        } else if (plan.rtrCommon) {
            why = "peer-to-peer: no FPDU is sent before the initiator's " + plan.rtr.wireName() + " RTR (RFC 6581 §9.2)";
        } else {
            why = "no common RTR type: offered " + plan.rtr.wireName() + " while the initiator offered "
                    + RtrType.format(peerRequest.offeredRtrTypes()) + "; the initiator will terminate with code 7 "
                    + "(RFC 6581 §9.2)";
        }
        LOG.debug("MPA responder accepts: ird={} ord={} rtr={}", plan.ird, plan.ord, plan.rtr);
        return finish(NegotiationAction.ESTABLISH, reply, null, new NegotiationOutcome(NegotiationStatus.ESTABLISHED,
                replyRevision, enhancedExchange, plan.rtr != null, plan.rtr, reply.crc(), request.marker(),
                reply.marker(), plan.ird, plan.ord, peerRequest.ird(), peerRequest.ord(), null,
                peerRequest.ulpPrivateData(), why));
    }

    /** The ULP rejects: Reply with R=1 carrying {@code ulpPrivateData} (RFC 5044 §7.1.1). */
    public NegotiationDecision reject(byte[] ulpPrivateData) {
        requireAwaiting();
        byte[] pd = ulpPrivateData == null ? new byte[0] : ulpPrivateData;
        checkPrivateData(pd);
        return rejectWith(config, pd, null, "the ULP rejected the connection (MPA R=1, RFC 5044 §7.1.1)");
    }

    /** The Request could not be decoded: TERM (2,0,4). */
    public NegotiationDecision onMalformedRequest(MpaDecodeException error) {
        if (state != State.READY) {
            throw new IllegalStateException("request already received; state " + state);
        }
        return terminate(TermCode.MPA_INVALID_REQ_REP, error.getMessage());
    }

    /** The initiator sent a TERM instead of a Request: close, reporting it. */
    public NegotiationDecision onTerminate(TermCode received) {
        requireNotDone();
        return finish(NegotiationAction.CLOSE, null, null, failed(NegotiationStatus.TERMINATED, received,
                "the initiator terminated with " + received));
    }

    /** The initiator closed before the Reply was sent. */
    public NegotiationDecision onConnectionClosed() {
        requireNotDone();
        return finish(NegotiationAction.CLOSE, null, null, failed(NegotiationStatus.CLOSED, null,
                "the initiator closed the connection during setup (RFC 5044 §7.1.2)"));
    }

    /** A local failure (e.g. QP resources) during setup: TERM code 5, RFC 6581 §8. */
    public NegotiationDecision localError(String reason) {
        requireNotDone();
        return finish(NegotiationAction.TERMINATE, null, TermCode.MPA_LOCAL_CATASTROPHIC,
                failed(NegotiationStatus.TERMINATED, TermCode.MPA_LOCAL_CATASTROPHIC,
                        "local catastrophic error: " + reason + " (RFC 6581 §8)"));
    }

    /** The negotiated reply contents for one configuration. */
    private record Plan(EnhancedConnectionData data, RtrType rtr, boolean rtrCommon, int ird, int ord,
                        boolean insufficientIrd) {
    }

    private Plan plan(ResponderConfig c) {
        if (!enhancedExchange) {
            return new Plan(null, null, false, c.maxIrd(), c.ord(), false);
        }
        EnhancedConnectionData ied = request.enhancedData();
        boolean a = ied.peerToPeer();
        RtrType pick = null;
        boolean common = false;
        Set<RtrType> flags = EnumSet.noneOf(RtrType.class);
        if (a) {
            Set<RtrType> feasible = EnumSet.copyOf(c.rtrTypes());
            if (c.maxIrd() == 0) {
                feasible.remove(RtrType.READ);
            }
            Set<RtrType> both = EnumSet.copyOf(feasible);
            both.retainAll(peerRequest.offeredRtrTypes());
            pick = RtrType.preferred(both);
            common = pick != null;
            if (!common) {
                pick = RtrType.preferred(feasible);
                flags.add(pick);
            } else {
                // §9.2 SHOULD: set the flag of every initiator option this side supports.
                flags.addAll(both);
            }
        }
        int ird;
        int replyIrd;
        if (ied.ord() == NO_NEGOTIATION || c.maxIrd() == NO_NEGOTIATION) {
            ird = c.maxIrd();
            replyIrd = NO_NEGOTIATION;
        } else {
            ird = Math.min(ied.ord(), c.maxIrd());
            if (pick == RtrType.READ && ird == 0) {
                ird = 1; // §9.2: the zero-length Read RTR needs one IRD slot even when the initiator's ORD is 0
            }
            replyIrd = ird;
        }
        int ord;
        int replyOrd;
        boolean insufficient = false;
        if (ied.ird() == NO_NEGOTIATION || c.ord() == NO_NEGOTIATION) {
            ord = c.ord();
            replyOrd = NO_NEGOTIATION;
        } else if (c.requiredOrd() > ied.ird()) {
            insufficient = true;
            ord = c.requiredOrd();
            replyOrd = c.requiredOrd();
        } else {
            ord = Math.min(c.ord(), ied.ird());
            replyOrd = ord;
        }
        if (pick != RtrType.READ && ird == 0) {
            flags.remove(RtrType.READ); // a Read RTR would need the IRD raised; offer it only as the pick
        }
        EnhancedConnectionData data = new EnhancedConnectionData(a, flags.contains(RtrType.SEND),
                flags.contains(RtrType.WRITE), flags.contains(RtrType.READ), replyIrd, replyOrd);
        return new Plan(data, pick, common, ird, ord, insufficient);
    }

    private MpaFrame.Builder replyBuilder(ResponderConfig c, Plan plan) {
        return MpaFrame.reply()
                .revision(replyRevision)
                .crc(request.crc() || c.crc())
                .marker(config.markers())
                .limits(config.limits())
                .enhancedData(plan.data);
    }

    private NegotiationDecision rejectWith(ResponderConfig c, byte[] pd, TermCode term, String why) {
        Plan plan = plan(c);
        reply = replyBuilder(c, plan).reject(true).marker(false).ulpPrivateData(pd).build();
        LOG.debug("MPA responder rejects: {}", why);
        return finish(NegotiationAction.REJECT, reply, term, new NegotiationOutcome(NegotiationStatus.REJECTED,
                replyRevision, enhancedExchange, false, null, reply.crc(), request.marker(), false, plan.ird, plan.ord,
                peerRequest.ird(), peerRequest.ord(), term, peerRequest.ulpPrivateData(), why));
    }

    private void checkPrivateData(byte[] pd) {
        FieldChecks.ulpPrivateData("privateData", pd.length, config.limits(), enhancedExchange);
    }

    private static byte[] rawPrivateData(MpaFrame req) {
        byte[] ulp = req.ulpPrivateData();
        if (!req.enhanced()) {
            return ulp;
        }
        byte[] ed = req.enhancedData().toBytes();
        byte[] all = new byte[ed.length + ulp.length];
        System.arraycopy(ed, 0, all, 0, ed.length);
        System.arraycopy(ulp, 0, all, ed.length, ulp.length);
        return all;
    }

    private NegotiationDecision terminate(TermCode code, String why) {
        LOG.debug("MPA responder terminates with {}: {}", code, why);
        return finish(NegotiationAction.TERMINATE, null, code, failed(NegotiationStatus.TERMINATED, code, why));
    }

    private NegotiationDecision close(String why) {
        return finish(NegotiationAction.CLOSE, null, null, failed(NegotiationStatus.CLOSED, null, why));
    }

    private NegotiationOutcome failed(NegotiationStatus status, TermCode term, String why) {
        return NegotiationOutcome.unagreed(status, request, false, config.maxIrd(), config.ord(), peerRequest, term, why);
    }

    private void requireAwaiting() {
        if (state != State.AWAITING_ACCEPT) {
            throw new IllegalStateException("no request awaiting accept/reject; state " + state);
        }
    }

    private void requireNotDone() {
        if (state == State.DONE) {
            throw new IllegalStateException("negotiation already finished: " + outcome);
        }
    }

    private NegotiationDecision finish(NegotiationAction action, MpaFrame frame, TermCode term, NegotiationOutcome o) {
        state = State.DONE;
        outcome = o;
        return new NegotiationDecision(action, frame, term, o);
    }
}
