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
     * further ones are refused. Take requests with {@link Listener#next}.
     *
     * @param address the local address and TCP port to listen on (port 0: any free port, see
     *                {@link Listener#localAddress()})
     * @param backlog the most undecided requests held at once (at least 1)
     * @return the listener; close it to stop listening
     * @throws RdmaException when the address is in use or not served by this device
     */
    Listener listen(InetSocketAddress address, int backlog) throws RdmaException;

    /**
     * Listens on {@code address} as {@link #listen(InetSocketAddress, int)} does, with
     * {@code config}'s backlog and, if set, its idle timeout for the connections accepted
     * (see {@link ListenerConfig}: off by default).
     *
     * @param address the local address and TCP port to listen on (port 0: any free port)
     * @param config  backlog and idle timeout
     * @return the listener; close it to stop listening
     * @throws RdmaException when the address is in use or not served by this device, or an idle
     *                       timeout is asked of a provider that cannot enforce it (DiSNI)
     */
    default Listener listen(InetSocketAddress address, ListenerConfig config) throws RdmaException {
        if (config.idleCheck()) {
            throw new RdmaException("this provider has no idle timeout for accepted connections (ListenerConfig)");
        }
        return listen(address, config.backlog());
    }

    /**
     * Connects, negotiating per RFC 6581: creates the QP from {@code qp}, runs its
     * {@link QueuePairConfig.BeforeConnect} hook, exchanges the MPA frames and, in the peer-to-peer
     * model, the RTR. Blocks up to {@code timeout}.
     *
     * @param remote  the peer's listening address
     * @param qp      what the connection's queue pair is created with
     * @param params  IRD/ORD, private data, RTR types and CRC asked for
     * @param timeout longest time the whole setup may take
     * @return the established connection, whose QP is in RTS
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
     *
     * @param remote  the peer's listening address
     * @param qp      what the connection's queue pair is created with
     * @param params  IRD/ORD, private data, RTR types and CRC asked for
     * @param timeout longest time the whole setup may take
     * @return a future of the established connection
     */
    default java.util.concurrent.CompletableFuture<Connection> connectAsync(InetSocketAddress remote,
            QueuePairConfig qp, ConnectionParameters params, Duration timeout) {
        return AsyncSetup.start("connect to " + remote, () -> connect(remote, qp, params, timeout));
    }
}
