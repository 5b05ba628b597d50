package org.jwarp.provider;

import java.net.InetSocketAddress;
import java.util.Set;
import org.jwarp.ground.RtrType;
import org.jwarp.verbs.ConnectionRequest;
import org.jwarp.verbs.RdmaException;

/**
 * What an rdma_cm provider's connection request tells the ULP before it decides: the initiator's
 * address and what the responder side of {@link CmNegotiation} read from the request (IRD/ORD,
 * the peer-to-peer model and its RTR types, private data; RFC 6581 §9.1), and the rule that one
 * request is answered once. The DiSNI and {@code ffm} listeners extend it with their accept and
 * reject.
 */
public abstract class NegotiatedRequest implements ConnectionRequest {
    /** The responder engine holding the request's MPA/CM values. */
    protected final CmNegotiation.Responder neg;
    /** The initiator's address, or null when rdma_cm gave none. */
    protected final InetSocketAddress remote;
    private boolean decided;

    /**
     * @param neg    the responder engine of this request
     * @param remote the initiator's address (null when unknown)
     */
    protected NegotiatedRequest(CmNegotiation.Responder neg, InetSocketAddress remote) {
        this.neg = neg;
        this.remote = remote;
    }

    @Override
    public InetSocketAddress remote() {
        return remote;
    }

    @Override
    public int peerIrd() {
        return neg.peerIrd();
    }

    @Override
    public int peerOrd() {
        return neg.peerOrd();
    }

    @Override
    public boolean peerToPeer() {
        return neg.peer().peerToPeer();
    }

    @Override
    public Set<RtrType> offeredRtrTypes() {
        return neg.peer().offeredRtrTypes();
    }

    @Override
    public byte[] privateData() {
        return neg.peerPrivateData();
    }

    /**
     * Marks the request answered; called first by accept and reject (under the request's lock).
     *
     * @throws RdmaException when it was already accepted or rejected
     */
    protected final void decide() throws RdmaException {
        if (decided) {
            throw new RdmaException("connection request from " + (remote == null ? "an unknown address" : remote)
                    + " was already accepted or rejected");
        }
        decided = true;
    }
}
