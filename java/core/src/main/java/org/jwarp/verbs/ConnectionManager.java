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
}
