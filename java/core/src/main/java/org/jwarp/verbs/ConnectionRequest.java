package org.jwarp.verbs;

import org.jwarp.ground.RtrType;

import java.net.InetSocketAddress;

/**
 * An incoming connection request seen by a listener (RDMA_CM_EVENT_CONNECT_REQUEST): the peer's
 * offered parameters and private data. Exactly one of {@link #accept} or {@link #reject} must be
 * called; an undecided request is rejected when its listener closes or its handshake times out.
 *
 * <p>Thread-safety: a request is meant for the thread that took it from {@link Listener#next}; its
 * getters may be read from any thread. The DiSNI provider serializes accept and reject on the
 * request; decide it from one thread on either provider.
 */
public interface ConnectionRequest {
    /** {@return the initiator's address} */
    InetSocketAddress remote();

    /** {@return the peer's IRD as sent (RFC 6581 §9.1), or -1 when the peer did not send enhanced data} */
    int peerIrd();

    /** {@return the peer's ORD as sent, or -1 when not enhanced} */
    int peerOrd();

    /** {@return whether the initiator asked for the peer-to-peer model with an RTR (RFC 6581 §9.2)} */
    boolean peerToPeer();

    /** {@return the RTR types the initiator offered (RFC 6581 §9.2; a copy)} */
    java.util.Set<RtrType> offeredRtrTypes();

    /** {@return the ULP private data of the request, without the enhanced data} */
    byte[] privateData();

    /**
     * Accepts with a QP created from {@code qp} (its {@link QueuePairConfig.BeforeConnect} hook
     * runs before the MPA Reply is sent); returns once the connection is usable ({@code rdma_accept}
     * and RDMA_CM_EVENT_ESTABLISHED; in the peer-to-peer model after the RTR arrived).
     *
     * @param qp     the queue pair to create for the connection
     * @param params this side's IRD/ORD, RTR types and private data for the Reply
     * @return the established connection
     * @throws ConnectionTerminatedException when the negotiation fails with a TERM (RFC 6581 §8)
     * @throws RdmaTimeoutException          when the handshake does not finish in time
     * @throws RdmaException                 when the request was already decided, the QP cannot be
     *                                       created or the connection fails
     */
    Connection accept(QueuePairConfig qp, ConnectionParameters params) throws RdmaException;

    /**
     * {@link #accept} without blocking the caller, with {@link ConnectionManager#connectAsync}'s
     * contract: completes off the provider's I/O thread; {@code cancel()} releases the QP and
     * the socket / rdma_cm id (the request counts as rejected).
     *
     * @param qp     the queue pair to create for the connection
     * @param params this side's connection parameters
     * @return a future of the established connection, failed with {@link #accept}'s exceptions
     */
    default java.util.concurrent.CompletableFuture<Connection> acceptAsync(QueuePairConfig qp,
            ConnectionParameters params) {
        return AsyncSetup.start("accept from " + remote(), () -> accept(qp, params));
    }

    /**
     * Rejects, carrying {@code privateData} to the initiator (MPA Reply with R=1, RFC 5044 §7.1.5;
     * {@code rdma_reject}); the initiator's connect fails with a {@link ConnectionRejectedException}.
     *
     * @param privateData ULP private data for the initiator, or null for none
     * @throws RdmaException when the request was already decided or the connection is gone
     */
    void reject(byte[] privateData) throws RdmaException;
}
