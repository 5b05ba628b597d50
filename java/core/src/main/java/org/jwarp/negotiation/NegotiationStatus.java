package org.jwarp.negotiation;

/** How MPA connection setup ended (RFC 5044 §7.1.2, RFC 6581 §5 and §8). */
public enum NegotiationStatus {
    /** Both sides agreed; FPDU mode follows. */
    ESTABLISHED("established"),
    /** The responder sent a Reply with R=1. */
    REJECTED("rejected"),
    /** A side sent (or received) an MPA-layer TERM; see {@link NegotiationOutcome#term()}. */
    TERMINATED("terminated"),
    /** The connection was closed without TERM (e.g. an unsupported revision, or the peer closed). */
    CLOSED("closed");

    private final String jsonName;

    NegotiationStatus(String jsonName) {
        this.jsonName = jsonName;
    }

    /** The CLI's name: "established", "rejected", "terminated" or "closed". */
    public String jsonName() {
        return jsonName;
    }
}
