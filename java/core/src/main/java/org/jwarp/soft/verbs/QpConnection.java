package org.jwarp.soft.verbs;

import org.jwarp.ground.TermCode;
import org.jwarp.verbs.RdmaException;

/** The connection a queue pair is attached to, as its posting threads see it. */
public interface QpConnection {
    /** New send WRs are in the ring: transmit them (inline if the I/O lock is free, else via the reactor). */
    void kick();

    /** Ends the connection from this side with a TERM of {@code code} (RFC 5040 §4.8). */
    void terminateLocally(TermCode code, RdmaException cause);

    /** One line of state for diagnostics. */
    String debugState();
}
