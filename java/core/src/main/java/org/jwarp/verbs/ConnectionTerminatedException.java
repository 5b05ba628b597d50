package org.jwarp.verbs;

import org.jwarp.ground.TermCode;

/** Connection setup or the stream ended with a Terminate message (RFC 5040 §4.8, RFC 6581 §8). */
public class ConnectionTerminatedException extends RdmaException {
    private static final long serialVersionUID = 1L;
    private final transient TermCode term;
    private final boolean sentByPeer;

    public ConnectionTerminatedException(String message, TermCode term, boolean sentByPeer) {
        super(message + " [TERM layer=" + term.layer() + " etype=" + term.etype() + " ecode=" + term.ecode()
                + (sentByPeer ? ", from peer]" : ", sent to peer]"));
        this.term = term;
        this.sentByPeer = sentByPeer;
    }

    public TermCode term() {
        return term;
    }

    public boolean sentByPeer() {
        return sentByPeer;
    }
}
