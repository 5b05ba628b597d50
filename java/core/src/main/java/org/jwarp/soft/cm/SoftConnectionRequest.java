package org.jwarp.soft.cm;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Set;

import org.jwarp.negotiation.PeerRequest;
import org.jwarp.negotiation.ResponderConfig;
import org.jwarp.negotiation.NegotiationOutcome;
import org.jwarp.soft.verbs.SoftQueuePair;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.ConnectionRequest;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.RdmaException;
import org.jwarp.ground.RtrType;

/**
 * A validated MPA Request waiting for the ULP (RFC 5044 §7.1.2; the peer's IRD/ORD and RTR offer
 * of RFC 6581 §9.1/§9.2 are visible before deciding). Accept or reject runs on the reactor.
 */
public final class SoftConnectionRequest implements ConnectionRequest {
    private static final long CALL_TIMEOUT_MS = 10_000;

    private final SetupStream stream;
    private final StreamSetup setup;
    private final PeerRequest peer;
    private final InetSocketAddress remote;
    private volatile boolean pending = true;

    SoftConnectionRequest(SetupStream stream, StreamSetup setup, PeerRequest peer) {
        this.stream = stream;
        this.setup = setup;
        this.peer = peer;
        this.remote = stream.remoteAddress();
    }

    public boolean isPending() {
        return pending;
    }

    /** The stream timed out, closed or was rejected. */
    void invalidate() {
        pending = false;
    }

    @Override
    public InetSocketAddress remote() {
        return remote;
    }

    @Override
    public int peerIrd() {
        return peer.ird() == NegotiationOutcome.NOT_EXCHANGED ? -1 : peer.ird();
    }

    @Override
    public int peerOrd() {
        return peer.ord() == NegotiationOutcome.NOT_EXCHANGED ? -1 : peer.ord();
    }

    @Override
    public boolean peerToPeer() {
        return peer.peerToPeer();
    }

    @Override
    public Set<RtrType> offeredRtrTypes() {
        return RtrType.mutableCopy(peer.offeredRtrTypes());
    }

    @Override
    public byte[] privateData() {
        return peer.ulpPrivateData();
    }

    @Override
    public Connection accept(QueuePairConfig qpConfig, ConnectionParameters params) throws RdmaException {
        SoftQueuePair qp = new SoftQueuePair(qpConfig);
        qp.runBeforeConnect();
        ResponderConfig cfg = CmParameters.responderConfig(params);
        return call(() -> setup.accept(qp, cfg)); // the stream tracks it on the reactor
    }

    @Override
    public void reject(byte[] privateData) throws RdmaException {
        call(() -> {
            setup.reject(privateData == null ? new byte[0] : privateData);
            return null;
        });
    }

    public void rejectQuietly() {
        if (pending) {
            try {
                pending = false;
                setup.reject(new byte[0]);
            } catch (RdmaException e) {
                // already gone
            }
        }
    }

    private interface Step<T> {
        T run() throws RdmaException;
    }

    private <T> T call(Step<T> step) throws RdmaException {
        if (!pending) {
            throw new RdmaException("connection request from " + remote + " is no longer pending"
                    + (stream.failure() != null ? ": " + stream.failure().getMessage() : ""));
        }
        pending = false;
        Object r;
        try {
            r = stream.reactor().call(() -> {
                try {
                    return step.run();
                } catch (RdmaException e) {
                    return e;
                }
            }, CALL_TIMEOUT_MS);
        } catch (IOException e) {
            throw new RdmaException("reactor: " + e.getMessage(), e);
        }
        if (r instanceof RdmaException e) {
            throw e;
        }
        @SuppressWarnings("unchecked")
        T t = (T) r;
        return t;
    }
}
