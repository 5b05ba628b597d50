package org.jwarp.negotiation;

import java.util.Objects;
import org.jwarp.mpa.MpaFrame;
import org.jwarp.ground.TermCode;

/**
 * One step of the RFC 6581 negotiation engine: the {@link NegotiationAction} the transport takes,
 * the MPA frame to send (a Reply, for the responder), the TERM to send, and the outcome when the
 * step ends setup.
 *
 * @param action  what to do
 * @param frame   the frame to send first, or null
 * @param term    the MPA-layer TERM (layer 2, etype 0) to send after it, or null
 * @param outcome the result; null only for {@link NegotiationAction#AWAIT_ACCEPT}
 */
public record NegotiationDecision(NegotiationAction action, MpaFrame frame, TermCode term, NegotiationOutcome outcome) {
    public NegotiationDecision {
        Objects.requireNonNull(action, "action");
        if (outcome == null && action != NegotiationAction.AWAIT_ACCEPT) {
            throw new IllegalArgumentException("a " + action + " decision needs an outcome");
        }
    }

    /** The frame's bytes, or null when there is no frame to send. */
    public byte[] frameBytes() {
        return frame == null ? null : frame.toBytes();
    }
}
