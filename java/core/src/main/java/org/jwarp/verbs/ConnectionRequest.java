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
    InetSocketAddress remote();

    /** The peer's IRD as sent (RFC 6581 §9.1), or -1 when the peer did not send enhanced data. */
    int peerIrd();

    /** The peer's ORD as sent, or -1 when not enhanced. */
    int peerOrd();

    boolean peerToPeer();

    /** The RTR types the initiator offered. */
    java.util.Set<RtrType> offeredRtrTypes();

    /** ULP private data of the request (without the enhanced data). */
    byte[] privateData();

    /** Accepts with a QP created from {@code qp}; returns once the connection is usable. */
    Connection accept(QueuePairConfig qp, ConnectionParameters params) throws RdmaException;

    /**
     * {@link #accept} without blocking the caller, with {@link ConnectionManager#connectAsync}'s
     * contract: completes off the provider's I/O thread; {@code cancel()} releases the QP and
     * the socket / rdma_cm id (the request counts as rejected).
     */
    default java.util.concurrent.CompletableFuture<Connection> acceptAsync(QueuePairConfig qp,
            ConnectionParameters params) {
        return AsyncSetup.start("accept from " + remote(), () -> accept(qp, params));
    }

    /** Rejects, carrying {@code privateData} to the initiator (MPA Reply with R=1, RFC 5044 §7.1.5). */
    void reject(byte[] privateData) throws RdmaException;
}
