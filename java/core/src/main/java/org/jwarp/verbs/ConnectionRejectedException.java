package org.jwarp.verbs;

/** The responder rejected the connection (MPA Reply with R=1 / RDMA_CM_EVENT_REJECTED). */
public class ConnectionRejectedException extends RdmaException {
    private static final long serialVersionUID = 1L;
    private final byte[] privateData;
    private final int requiredOrd;

    public ConnectionRejectedException(String message, byte[] privateData, int requiredOrd) {
        super(message);
        this.privateData = privateData == null ? new byte[0] : privateData.clone();
        this.requiredOrd = requiredOrd;
    }

    /** The rejecting peer's ULP private data. */
    public byte[] privateData() {
        return privateData.clone();
    }

    /** RFC 6581 §9.1: the ORD the responder required (the ORD field of its enhanced Reject), or -1. */
    public int requiredOrd() {
        return requiredOrd;
    }
}
