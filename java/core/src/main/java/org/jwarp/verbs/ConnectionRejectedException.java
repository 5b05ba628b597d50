package org.jwarp.verbs;

/**
 * The responder rejected the connection (MPA Reply with R=1 / RDMA_CM_EVENT_REJECTED). RFC 6581 §9.1:
 * the initiator passes the responder's IRD and ORD to the ULP for a Reject as for an Accept; both are
 * here when the Reject carried enhanced data.
 */
public class ConnectionRejectedException extends RdmaException {
    private static final long serialVersionUID = 1L;
    private final byte[] privateData;
    private final int peerIrd;
    private final int requiredOrd;

    /**
     * A Reject without enhanced data: the peer's IRD and ORD are unknown (-1).
     *
     * @param message     what was rejected
     * @param privateData the rejecting peer's ULP private data (copied; null becomes empty)
     */
    public ConnectionRejectedException(String message, byte[] privateData) {
        this(message, privateData, -1, -1);
    }

    /**
     * A Reject, with the responder's IRD and ORD when it carried enhanced data.
     *
     * @param message     what was rejected
     * @param privateData the rejecting peer's ULP private data (copied; null becomes empty)
     * @param peerIrd     the IRD field of the enhanced Reject, or -1
     * @param requiredOrd the ORD field of the enhanced Reject (the ORD the responder requires), or -1
     */
    public ConnectionRejectedException(String message, byte[] privateData, int peerIrd, int requiredOrd) {
        super(message);
        this.privateData = privateData == null ? new byte[0] : privateData.clone();
        this.peerIrd = peerIrd;
        this.requiredOrd = requiredOrd;
    }

    /** {@return RFC 6581 §9.1: the responder's IRD from its enhanced Reject, or -1} */
    public int peerIrd() {
        return peerIrd;
    }

    /** {@return a copy of the rejecting peer's ULP private data, empty when none} */
    public byte[] privateData() {
        return privateData.clone();
    }

    /** {@return RFC 6581 §9.1: the ORD the responder required (the ORD field of its enhanced Reject), or -1} */
    public int requiredOrd() {
        return requiredOrd;
    }
}
