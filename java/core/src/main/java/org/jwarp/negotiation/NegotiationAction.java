package org.jwarp.negotiation;

/**
 * What the transport must do after the negotiation engine decided (RFC 5044 §7.1.2, RFC 6581 §5,
 * §8, §10). The engines do no I/O; every decision names the bytes to send and whether to close.
 */
public enum NegotiationAction {
    /**
     * Responder only: the request is acceptable; show {@link ResponderNegotiator#peerRequest()} to
     * the ULP, then call {@link ResponderNegotiator#accept} or {@link ResponderNegotiator#reject}.
     */
    AWAIT_ACCEPT,
    /**
     * Go to FPDU mode. Responder: first send {@link NegotiationDecision#frame()} (the Reply), then,
     * if {@link NegotiationOutcome#rtr()} is non-null, send no FPDU before the RTR arrives
     * (RFC 6581 §9.2). Initiator: if {@code rtr()} is non-null its RTR is the first FPDU sent;
     * without it the initiator's ULP must send first (RFC 5044 §7.1.2).
     */
    ESTABLISH,
    /**
     * Send {@link NegotiationDecision#frame()} (a Reply with R=1) if non-null, then
     * {@link NegotiationDecision#term()} if non-null, then close.
     */
    REJECT,
    /** Send {@link NegotiationDecision#term()} (an MPA-layer TERM, CRC 0 during setup), then close. */
    TERMINATE,
    /** Close the connection; nothing is sent. */
    CLOSE,
    /**
     * Initiator only (RFC 6581 §10): the peer closed an enhanced (Rev 2) attempt before replying.
     * Close, reconnect, and send {@link InitiatorNegotiator#createRequest()} again: it is now Rev 1.
     */
    RETRY_UNENHANCED
}
