package org.jwarp.verbs;

/**
 * A connected queue pair (RFC 5040 §5: one RDMAP stream; §8 work queues). Posting never blocks
 * and allocates nothing; results arrive as {@link WorkCompletion}s, in posting order per queue
 * (RFC 5040 §5.5). When the connection fails or closes, every outstanding work request completes
 * with {@link WcStatus#WR_FLUSH_ERR}.
 *
 * <p><b>Chains</b> ({@code ibv_post_send}/{@code ibv_post_recv} with a linked list): a request and
 * its {@code next} requests are posted in one call. If request <i>k</i> is refused, requests
 * 0..k-1 are posted (and complete as usual), request <i>k</i> and every later one are not, and
 * the {@link WorkRequestException} names <i>k</i> ({@link WorkRequestException#index()}), the field
 * and the limit. Nothing of a refused request reaches the wire.
 *
 * <p><b>Slots</b>: a send-queue slot is held from the post until the request's completion, and an
 * unsignalled request's slot until a later signalled request of the queue completed; a post
 * beyond {@link QueuePairCaps#maxSendWr()} held slots is refused.
 *
 * <p>Thread-safety: every method may be called from any thread; posts to one queue are
 * serialized by the provider, and a chain's requests keep their order with no other thread's
 * requests in between. The request objects themselves are not shared during a post.
 */
public interface QueuePair {
    int qpNum();

    QpState state();

    /**
     * The application's object for this QP given at creation ({@link QueuePairConfig#withContext};
     * ibverbs' {@code qp_context}), or null. The same reference is in {@link WorkCompletion#qpContext}
     * of the QP's completions and in {@link AsyncEvent#qpContext()} of its events.
     *
     * @return the QP's context object, or null
     */
    Object context();

    /** What the QP was granted at creation (SGEs, inline size, depths). */
    QueuePairCaps caps();

    /**
     * Posts a send-queue work request and the requests chained behind it by {@link SendRequest#next}.
     *
     * @throws WorkRequestException if a request is refused locally (queue full, an RDMA Read beyond
     *                              the negotiated ORD, more SGEs than the QP allows, an SGE outside
     *                              its region or without the needed access, inline data above
     *                              {@link QueuePairCaps#maxInlineData()}, QP not in RTS); the ones
     *                              before it were posted, nothing of it or after it is sent
     */
    void postSend(SendRequest wr) throws WorkRequestException;

    /**
     * Posts receive buffers (RFC 5041 §4.4 untagged buffers), a chain linked by
     * {@link RecvRequest#next}, with the same partial-post contract as {@link #postSend}.
     */
    void postRecv(RecvRequest wr) throws WorkRequestException;

    /** Posts one receive buffer of a single SGE (a convenience for {@link #postRecv(RecvRequest)}). */
    void postRecv(long wrId, MemoryRegion mr, long offset, int length) throws WorkRequestException;

    /**
     * Calls through which this QP handed work requests to the device so far (DiSNI: the
     * {@code ibv_post_send} and {@code ibv_post_recv} calls; soft: the batches published to the
     * send and receive rings). A chain counts once.
     */
    long postCalls();

    /** QP states of ibv_qp_state that a connected QP goes through. */
    enum QpState { INIT, RTR, RTS, SQD, SQE, ERR }
}
