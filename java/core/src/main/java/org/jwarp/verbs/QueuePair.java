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
 * <p><b>Reads and the ORD</b>: at most the negotiated ORD ({@link ConnectionInfo#ord()}) RDMA
 * Reads are in flight at once (RFC 6581 §9.1); a Read posted beyond that is accepted and waits in
 * the send queue, and the requests posted after it wait behind it, in order (RFC 5040 §5.5): the
 * soft provider fences its send queue, the DiSNI provider leaves the queueing to the device (siw's
 * ORQ fence, rxe's wait for a free read slot). Only when the negotiated ORD is 0 is a Read refused
 * at post time. The Reads complete in posting order; soft and rxe also complete a later Send or
 * Write after them, while siw completes a Send once it is transmitted, so there a Send posted
 * behind a Read pipeline may complete before the last (at most ORD) Reads do.
 *
 * <p><b>Memory ownership</b> (as with ibverbs): from the post until the request's completion (its
 * own, or for an unsignalled request the completion of a later signalled one of the queue) the
 * buffers its scatter-gather list names belong to the provider. The application must not write
 * into the source of a Send or RDMA Write (it is sent from the region itself, zero copy: on the
 * soft provider and siw a write meanwhile gives the peer a CRC error and ends the connection, see
 * {@link MemoryRegion}), and must neither read nor write the sink of a receive or an RDMA Read (the
 * provider places into it until the completion; a flushed or failed request leaves it undefined).
 * An {@link SendRequest#inline inline} request's source is copied at post time and is free when
 * the post returns. A completion, successful or flushed, hands the buffers back: the provider
 * never touches them again.
 *
 * <p>Thread-safety: every method may be called from any thread; posts to one queue are
 * serialized by the provider, and a chain's requests keep their order with no other thread's
 * requests in between. The request objects themselves are not shared during a post. A QP created
 * single-consumer ({@link QueuePairConfig#withSingleConsumer}) is posted to by one thread at a time
 * instead (the contract is in {@link CompletionQueue}, "Single-consumer mode").
 *
 * <p><b>Re-posting a request's shape</b>: posting a request of the same shape as the one posted
 * before it in that position of the queue (a single-WR post after a single-WR post: the same
 * opcode, one non-empty SGE at the same address with the same lkey, the same remote address, rkey
 * and invalidated rkey; for a receive, one buffer at the same address with the same lkey) only
 * changes the wrId, the length and the flags: a reused {@link SendRequest} filled again for the
 * next message is such a request. The DiSNI provider then rewrites only those fields of the
 * device's work request; every local check is still made. Nothing is asked of the application.
 */
public interface QueuePair {
    /**
     * {@return the queue pair number ({@code qp_num})} It is in {@link WorkCompletion#qpNum} of the
     * QP's completions and in {@link AsyncEvent#qpNum()} of its events. Soft: unique within the JVM;
     * DiSNI: the device's number.
     */
    int qpNum();

    /**
     * {@return the QP's current state, a snapshot} A connected QP is in {@link QpState#RTS} once
     * connection setup completed, and in {@link QpState#ERR} once the connection failed or closed
     * (its outstanding work requests then complete with {@link WcStatus#WR_FLUSH_ERR}).
     */
    QpState state();

    /**
     * The application's object for this QP given at creation ({@link QueuePairConfig#withContext};
     * ibverbs' {@code qp_context}), or null. The same reference is in {@link WorkCompletion#qpContext}
     * of the QP's completions and in {@link AsyncEvent#qpContext()} of its events.
     *
     * @return the QP's context object, or null
     */
    Object context();

    /** {@return what the QP was granted at creation (SGEs, inline size, depths)} */
    QueuePairCaps caps();

    /**
     * {@return whether this QP runs in single-consumer mode} True only where the provider exploits
     * {@link QueuePairConfig#withSingleConsumer}: DiSNI and ffm. Soft reports false (its QPs stay
     * thread-safe).
     */
    default boolean singleConsumer() {
        return false;
    }

    /**
     * Posts a send-queue work request and the requests chained behind it by {@link SendRequest#next}
     * ({@code ibv_post_send}). Never blocks and allocates nothing; the request objects are free
     * again when the call returns, the buffers they name only at their completion (see the class
     * comment). An RDMA Read beyond the negotiated ORD is accepted and waits in the queue.
     *
     * @param wr the first request of the chain
     * @throws WorkRequestException if a request is refused locally (send queue full, an RDMA Read
     *                              while the negotiated ORD is 0, more SGEs than the QP allows, an
     *                              SGE outside its region, of another protection domain or without
     *                              the needed access, inline data above
     *                              {@link QueuePairCaps#maxInlineData()}, QP not in RTS); the ones
     *                              before it were posted, nothing of it or after it is sent
     */
    void postSend(SendRequest wr) throws WorkRequestException;

    /**
     * Posts receive buffers (RFC 5041 §4.4 untagged buffers), a chain linked by
     * {@link RecvRequest#next}, with the same partial-post contract as {@link #postSend}
     * ({@code ibv_post_recv}). Receives may be posted before the QP is connected, in the
     * {@link QueuePairConfig.BeforeConnect} hook. A Send longer than its buffer completes that
     * receive with {@link WcStatus#LOC_LEN_ERR} (soft, siw; rxe reports
     * {@link WcStatus#LOC_QP_OP_ERR}) and ends the connection with a TERM (RFC 5041 §7.2).
     *
     * @param wr the first request of the chain
     * @throws WorkRequestException if a request is refused locally (receive queue full, the QP has
     *                              a shared receive queue, the QP is in ERR, more SGEs than the QP
     *                              allows, an SGE outside its region, of another protection domain
     *                              or without {@link Access#LOCAL_WRITE}); the ones before it were
     *                              posted
     */
    void postRecv(RecvRequest wr) throws WorkRequestException;

    /**
     * Posts one receive buffer of a single SGE (a convenience for {@link #postRecv(RecvRequest)};
     * allocates nothing).
     *
     * @param wrId   the request's id, returned in {@link WorkCompletion#wrId}
     * @param mr     the region of the buffer, with {@link Access#LOCAL_WRITE}
     * @param offset the buffer's offset in {@code mr}
     * @param length the buffer's length in bytes
     * @throws WorkRequestException as {@link #postRecv(RecvRequest)}
     */
    void postRecv(long wrId, MemoryRegion mr, long offset, int length) throws WorkRequestException;

    /**
     * Calls through which this QP handed work requests to the device so far (DiSNI: the
     * {@code ibv_post_send} and {@code ibv_post_recv} calls; soft: the batches published to the
     * send and receive rings). A chain counts once. A diagnostic: it shows whether chains reach
     * the device as one call.
     *
     * @return the number of such calls since the QP was created
     */
    long postCalls();

    /**
     * QP states of {@code enum ibv_qp_state}, in its order. A connected QP of this API is seen in
     * {@link #INIT} (created, receives may be posted), {@link #RTS} (connected) and {@link #ERR}
     * (failed or closed); the others exist for the mapping of device states.
     */
    enum QpState {
        /** IBV_QPS_INIT: created, not yet connected; receives may be posted, sends are refused. */
        INIT,
        /** IBV_QPS_RTR: ready to receive (a device state during connection setup). */
        RTR,
        /** IBV_QPS_RTS: ready to send: the connection is established. */
        RTS,
        /** IBV_QPS_SQD: send queue drained (a device state; not entered by this API). */
        SQD,
        /** IBV_QPS_SQE: send queue error (a device state; not entered by this API). */
        SQE,
        /** IBV_QPS_ERR: the connection failed or closed; outstanding requests complete flushed. */
        ERR
    }
}
