package org.jwarp.soft;

import java.nio.ByteBuffer;

import org.jwarp.negotiation.NegotiationOutcome;
import org.jwarp.rdmap.TermCode;
import org.jwarp.verbs.ConnectionTerminatedException;

/** FPDU mode of one stream (placeholder until the RDMAP engine is wired in). */
final class SoftDataPath {
    private final SoftStream stream;
    private final SoftQueuePair qp;
    private final NegotiationOutcome outcome;
    private boolean firstFpdu = true;
    private TermCode peerTerm;

    SoftDataPath(SoftStream stream, SoftQueuePair qp, NegotiationOutcome outcome, SoftConfig config) {
        this.stream = stream;
        this.qp = qp;
        this.outcome = outcome;
    }

    boolean awaitingFirstFpdu() {
        return firstFpdu;
    }

    void start() {
    }

    void pump() {
    }

    void onBytes(ByteBuffer rx) {
        rx.position(rx.limit());
    }

    void stop() {
    }

    TermCode peerTerm() {
        return peerTerm;
    }

    ConnectionTerminatedException peerTermException() {
        return new ConnectionTerminatedException("peer terminated", peerTerm, true);
    }
}
