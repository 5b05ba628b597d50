package org.jwarp.verbs;

import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * Connection establishment (rdma_cm): listen, and connect with {@link ConnectionParameters}. Every
 * failure is an exception; nothing waits without a timeout.
 *
 * <p>Thread-safety: {@link #listen} and {@link #connect} may run from several threads at once, on
 * both providers; each connect uses its own rdma_cm id (DiSNI: the CM calls of one device are
 * serialized on its event channel's lock, the waits are not) or its own socket (soft).
 */
public interface ConnectionManager {
    /**
     * Listens on {@code address}; at most {@code backlog} requests wait for a decision at a time,
     * further ones are refused.
     */
    Listener listen(InetSocketAddress address, int backlog) throws RdmaException;

    /**
     * Connects, negotiating per RFC 6581.
     *
     * @throws ConnectionRejectedException   the peer rejected (carries its private data)
     * @throws ConnectionTerminatedException setup ended with a TERM (carries the code)
     * @throws RdmaTimeoutException          no answer within {@code timeout}
     * @throws RdmaException                 unreachable address, route or other CM error
     */
    Connection connect(InetSocketAddress remote, QueuePairConfig qp, ConnectionParameters params,
                       Duration timeout) throws RdmaException;

    /**
     * {@link #connect} without blocking the caller: the future completes with the connection, or
     * exceptionally with the exception {@code connect} would have thrown (same timeout, same
     * types), on a setup thread, never on the provider's I/O thread. {@code cancel()} stops the
     * setup and releases its QP and socket / rdma_cm id (WRs posted in the
     * {@link QueuePairConfig.BeforeConnect} hook complete as flushed where the provider flushes).
     */
    default java.util.concurrent.CompletableFuture<Connection> connectAsync(InetSocketAddress remote,
            QueuePairConfig qp, ConnectionParameters params, Duration timeout) {
        return AsyncSetup.start("connect to " + remote, () -> connect(remote, qp, params, timeout));
    }
}
