package org.jwarp.negotiation;

import org.jwarp.ground.RtrType;
import java.nio.ByteBuffer;
import org.jwarp.mpa.MpaDecodeException;
import org.jwarp.mpa.MpaFrame;
import org.jwarp.mpa.MpaFrameReader;
import org.jwarp.ground.TermCode;

/**
 * Runs an {@link InitiatorNegotiator} against a {@link ResponderNegotiator} in memory, passing the
 * encoded frames through strict {@link MpaFrameReader}s exactly as a transport would, including the
 * RFC 6581 §10 unenhanced retry when the responder closes a Rev 2 attempt. No I/O; used by
 * {@code jwarp negotiate} and by tests.
 */
public final class LoopbackNegotiation {

    /**
     * The exchange as both sides saw it (RFC 6581 §5 steps 1–2, §10 retry).
     *
     * @param request   the (last) request on the wire
     * @param reply     the reply on the wire, or null
     * @param initiator the initiator's final decision
     * @param responder the responder's final decision
     * @param status    the connection's overall result
     * @param term      the TERM that ended it, or null
     * @param attempts  1, or 2 after an unenhanced retry
     */
    public record Result(MpaFrame request, MpaFrame reply, NegotiationDecision initiator, NegotiationDecision responder,
                         NegotiationStatus status, TermCode term, int attempts) {

        /** The RTR type in use when established, else null. */
        public RtrType rtr() {
            return status == NegotiationStatus.ESTABLISHED ? initiator.outcome().rtr() : null;
        }
    }

    private LoopbackNegotiation() {
    }

    public static Result run(InitiatorConfig initiatorConfig, ResponderConfig responderConfig) {
        InitiatorNegotiator in = new InitiatorNegotiator(initiatorConfig);
        while (true) {
            ResponderNegotiator rn = new ResponderNegotiator(responderConfig);
            MpaFrame request = in.createRequest();
            NegotiationDecision rd;
            try {
                rd = rn.respond(transfer(rn.newRequestReader(), request));
            } catch (MpaDecodeException e) {
                rd = rn.onMalformedRequest(e);
            }
            switch (rd.action()) {
                case ESTABLISH, REJECT -> {
                    NegotiationDecision id;
                    try {
                        id = in.onReply(transfer(in.newReplyReader(), rd.frame()));
                    } catch (MpaDecodeException e) {
                        id = in.onMalformedReply(e);
                    }
                    if (rd.action() == NegotiationAction.REJECT) {
                        return new Result(request, rd.frame(), id, rd, NegotiationStatus.REJECTED, rd.term(), in.attempts());
                    }
                    NegotiationStatus s = id.outcome().status();
                    return new Result(request, rd.frame(), id, rd, s, id.term() != null ? id.term() : id.outcome().term(),
                            in.attempts());
                }
                case TERMINATE -> {
                    NegotiationDecision id = in.onTerminate(rd.term());
                    return new Result(request, null, id, rd, NegotiationStatus.TERMINATED, rd.term(), in.attempts());
                }
                case CLOSE -> {
                    NegotiationDecision id = in.onConnectionClosed();
                    if (id.action() != NegotiationAction.RETRY_UNENHANCED) {
                        return new Result(request, null, id, rd, NegotiationStatus.CLOSED, null, in.attempts());
                    }
                }
                default -> throw new IllegalStateException("unexpected responder action " + rd.action());
            }
        }
    }

    private static MpaFrame transfer(MpaFrameReader reader, MpaFrame frame) throws MpaDecodeException {
        ByteBuffer wire = frame.encode();
        if (reader.feed(wire) != MpaFrameReader.Status.COMPLETE) {
            throw new IllegalStateException("encoded frame did not complete the reader");
        }
        return reader.frame();
    }
}
