package org.jwarp.verbs;

/**
 * An established RDMA connection with its queue pair. Closing it disconnects (graceful close of
 * the LLP stream, RFC 5040 §5.3) and flushes every outstanding work request.
 *
 * <p>Thread-safety: {@link #queuePair()}, {@link #info()} and {@link #isOpen()} may be called from
 * any thread. {@link #close()} may run while other threads post to its queue pair or poll its CQs
 * (later posts are refused, outstanding WRs complete as flushed), on both providers; a close after
 * an earlier one returned does nothing. Two closes of one connection at the same instant are not
 * coordinated by the DiSNI provider: close a connection from one thread.
 */
public interface Connection extends AutoCloseable {
    QueuePair queuePair();

    /** What was negotiated, including the peer's IRD, ORD and private data (RFC 6581 §9.1). */
    ConnectionInfo info();

    boolean isOpen();

    /**
     * Why the connection is no longer open: a {@link ConnectionTerminatedException} carrying the
     * TERM sent or received (RFC 5040 §4.8), another {@link RdmaException} for a lost stream or a
     * local close, or null while it is open.
     */
    default RdmaException failure() {
        return null;
    }

    /**
     * Ends the connection abortively with a TERM (RFC 5040 §7: the stream goes to error, the peer
     * is told, outstanding work requests flush), for an application that gives up on a peer (no
     * progress, a misbehaving client); {@code why} is what {@link #failure()} says. A provider that
     * cannot send a TERM of its own closes the connection. Returns at once; {@link #isOpen()} turns
     * false once the stream ended.
     */
    default void terminate(String why) {
        close();
    }

    /**
     * A count that grows with every message or segment the peer sent on this connection (tagged
     * ones too, which complete nothing locally), for telling an idle peer from a busy one; -1 when
     * the provider cannot tell (then only completions show activity).
     */
    default long inboundActivity() {
        return -1;
    }

    @Override
    void close();
}
