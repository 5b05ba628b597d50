package org.jwarp.verbs;

import org.jwarp.ground.TermCode;

/**
 * Connection setup or the stream ended with a Terminate message (RFC 5040 §4.8, RFC 6581 §8), sent
 * by the peer or by this side; the message names the TERM's layer, error type and code.
 */
public class ConnectionTerminatedException extends RdmaException {
    private static final long serialVersionUID = 1L;
    private final transient TermCode term;
    private final boolean sentByPeer;

    /**
     * A Terminate sent or received.
     *
     * @param message    what ended
     * @param term       the TERM's (layer, error type, error code)
     * @param sentByPeer true when the peer sent it, false when this side sent it to the peer
     */
    public ConnectionTerminatedException(String message, TermCode term, boolean sentByPeer) {
        super(message + " [TERM layer=" + term.layer() + " etype=" + term.etype() + " ecode=" + term.ecode()
                + (sentByPeer ? ", from peer]" : ", sent to peer]"));
        this.term = term;
        this.sentByPeer = sentByPeer;
    }

    /**
     * {@return the TERM's (layer, error type, error code), e.g. {@link TermCode#MPA_INSUFFICIENT_IRD}}
     * Null only after the exception was deserialized (the field is transient).
     */
    public TermCode term() {
        return term;
    }

    /** {@return true when the peer sent the TERM, false when this side sent it} */
    public boolean sentByPeer() {
        return sentByPeer;
    }
}
