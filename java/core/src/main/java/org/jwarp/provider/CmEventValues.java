package org.jwarp.provider;

/**
 * The RFC 6581 §9.1 values an rdma_cm event reports ({@code struct rdma_conn_param}'s
 * {@code responder_resources}, {@code initiator_depth} and private data), whatever binding read
 * them: what {@link CmNegotiation} turns back into the MPA frame they stand for.
 */
public interface CmEventValues {
    /** {@code rdma_conn_param.responder_resources} (u8). */
    int responderResources();

    /** {@code rdma_conn_param.initiator_depth} (u8). */
    int initiatorDepth();

    /** The private data as the event reports it (the IB CM's padding included). */
    byte[] privateData();

    /** The values of one event, copied out of the native record. */
    static CmEventValues of(int responderResources, int initiatorDepth, byte[] privateData) {
        return new Copied(responderResources, initiatorDepth, privateData);
    }

    /** Values copied out of an event record. */
    record Copied(int responderResources, int initiatorDepth, byte[] privateData) implements CmEventValues {
    }
}
