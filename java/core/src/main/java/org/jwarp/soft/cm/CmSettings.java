package org.jwarp.soft.cm;

import java.time.Duration;

/**
 * The settings connection setup reads: the deadline of each step (RFC 5044 §7.1 leaves the timers
 * to the implementation). The provider's configuration provides them.
 */
public interface CmSettings {
    /** Longest wait for the TCP connect, and for the MPA Reply after the Request was sent. */
    Duration initiatorTimeout();

    /** Longest wait for a complete MPA Request after accept, and for the RTR after the Reply (RFC 6581 §9.2). */
    Duration responderTimeout();

    /** Longest time an undecided request waits for the ULP's accept or reject; it is then rejected. */
    Duration decisionTimeout();
}
