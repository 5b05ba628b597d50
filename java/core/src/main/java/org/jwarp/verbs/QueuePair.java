package org.jwarp.verbs;

/**
 * A connected queue pair (RFC 5040 §5: one RDMAP stream). Posting never blocks and allocates
 * nothing; results arrive as {@link WorkCompletion}s. When the connection fails or closes, every
 * outstanding work request completes with {@link WcStatus#WR_FLUSH_ERR}.
 */
public interface QueuePair {
    int qpNum();

    QpState state();

    /**
     * Posts a send-queue work request.
     *
     * @throws WorkRequestException if the WR is refused locally (queue full, an RDMA Read beyond
     *                              the negotiated ORD, bad bounds, QP not in RTS); nothing is sent
     */
    void postSend(SendRequest wr) throws WorkRequestException;

    /** Posts a receive buffer for one incoming Send (RFC 5041 §4.4 untagged buffer). */
    void postRecv(long wrId, MemoryRegion mr, int offset, int length) throws WorkRequestException;

    /** QP states of ibv_qp_state that a connected QP goes through. */
    enum QpState { INIT, RTR, RTS, SQD, SQE, ERR }
}
