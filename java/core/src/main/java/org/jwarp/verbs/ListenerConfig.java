package org.jwarp.verbs;

import java.time.Duration;
import java.util.Objects;

/**
 * How a {@link Listener} is set up ({@link ConnectionManager#listen(java.net.InetSocketAddress,
 * ListenerConfig)}): its backlog and the idle timeout of the connections it accepts.
 *
 * <p><b>Idle timeout</b> (off by default: RDMA connections that legitimately stay quiet for hours
 * exist). When set, an established connection accepted through this listener that does nothing for
 * that long, no inbound segment from the peer and no work completion progressing on its queue pair,
 * is ended as after a local error (RFC 5040 §7): TERM 0/0/0 (RDMAP local catastrophic error, RFC
 * 5040 §4.8) to the peer, the QP to ERR, every outstanding work request flushed
 * ({@link WcStatus#WR_FLUSH_ERR}), the {@link AsyncEvent.Type#QP_FATAL} and
 * {@link AsyncEvent.Type#CLOSED} events, and {@link Connection#failure()} a
 * {@link ConnectionTerminatedException} naming the idle time. Send completions only count while
 * they progress: sends stuck behind a peer that stopped reading do not keep a connection alive. It
 * is checked four times per timeout, so a connection ends between one and one and a half
 * timeouts after its last activity, while the listener is open (closing it ends the checks, not
 * the connections). Meant for servers facing untrusted peers, which can otherwise
 * hold connections (and their memory) without using them (issue 31); providers that cannot see
 * inbound segments refuse it.
 *
 * @param backlog     the most undecided requests held at once (at least 1), as in
 *                    {@link ConnectionManager#listen(java.net.InetSocketAddress, int)}
 * @param idleTimeout how long an accepted connection may do nothing before it is ended;
 *                    {@link Duration#ZERO} = never (the default), else at least 1 ms
 */
public record ListenerConfig(int backlog, Duration idleTimeout) {
    /**
     * Checks the values.
     *
     * @param backlog     the most undecided requests held at once (at least 1)
     * @param idleTimeout how long an accepted connection may do nothing; {@link Duration#ZERO} = never
     * @throws IllegalArgumentException when {@code backlog} is below 1, or {@code idleTimeout} is
     *                                  negative or between zero and 1 ms
     * @throws NullPointerException     when {@code idleTimeout} is null
     */
    public ListenerConfig {
        if (backlog < 1) {
            throw new IllegalArgumentException("backlog: " + backlog + " must be >= 1");
        }
        Objects.requireNonNull(idleTimeout, "idleTimeout");
        if (idleTimeout.isNegative() || (!idleTimeout.isZero() && idleTimeout.toMillis() < 1)) {
            throw new IllegalArgumentException("idleTimeout: " + idleTimeout + " must be zero (off) or at least 1 ms");
        }
    }

    /**
     * A listener with {@code backlog} and no idle timeout.
     *
     * @param backlog the most undecided requests held at once (at least 1)
     * @return the configuration
     */
    public static ListenerConfig of(int backlog) {
        return new ListenerConfig(backlog, Duration.ZERO);
    }

    /**
     * This configuration with another idle timeout.
     *
     * @param timeout how long an accepted connection may do nothing; {@link Duration#ZERO} = never
     * @return a new configuration with the same backlog
     */
    public ListenerConfig withIdleTimeout(Duration timeout) {
        return new ListenerConfig(backlog, timeout);
    }

    /**
     * Whether accepted connections are ended after {@link #idleTimeout()} of inactivity.
     *
     * @return true when the idle timeout is not zero
     */
    public boolean idleCheck() {
        return !idleTimeout.isZero();
    }
}
