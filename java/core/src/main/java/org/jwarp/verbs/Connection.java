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
    /**
     * {@return the queue pair of this connection} The same object for the connection's lifetime;
     * it refuses posts once the connection is no longer open.
     */
    QueuePair queuePair();

    /**
     * {@return what was negotiated, including the peer's IRD, ORD and private data (RFC 6581 §9.1)}
     * Fixed once the connection is established.
     */
    ConnectionInfo info();

    /**
     * {@return true until the connection is closed, terminated or its stream is lost} Once false
     * it stays false; {@link #failure()} then says why.
     */
    boolean isOpen();

    /**
     * Why the connection is no longer open: a {@link ConnectionTerminatedException} carrying the
     * TERM sent or received (RFC 5040 §4.8), another {@link RdmaException} for a lost stream or a
     * local close, or null while it is open.
     *
     * @return the reason the connection ended, or null while it is open
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
     *
     * @param why the reason, for {@link #failure()} and the logs
     */
    default void terminate(String why) {
        close();
    }

    /**
     * A count that grows with every message or segment the peer sent on this connection (tagged
     * ones too, which complete nothing locally), for telling an idle peer from a busy one; -1 when
     * the provider cannot tell (then only completions show activity).
     *
     * @return a non-decreasing count (compare two readings, not its value), or -1
     */
    default long inboundActivity() {
        return -1;
    }

    /**
     * Disconnects gracefully and flushes every outstanding work request ({@link WcStatus#WR_FLUSH_ERR}).
     * May run while other threads post or poll; a later close does nothing.
     */
    @Override
    void close();
}
