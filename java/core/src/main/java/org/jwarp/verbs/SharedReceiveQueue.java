package org.jwarp.verbs;

/**
 * A shared receive queue ({@code ibv_srq}): untagged receive buffers (RFC 5041 §5.1, §5.3) that
 * every queue pair attached to it draws from, so a server with many connections keeps one pool of
 * receive buffers instead of one per connection. Created on a protection domain
 * ({@link ProtectionDomain#createSharedReceiveQueue}); a queue pair is attached at creation
 * ({@link QueuePairConfig#withSrq}) and must belong to the same protection domain. An untagged
 * Send arriving on any attached queue pair consumes the next posted buffer, in posting order
 * across all of them; its completion carries that queue pair's number and goes to that queue
 * pair's receive CQ. Posting a receive directly to a queue pair that has a shared receive queue
 * is refused with a {@link WorkRequestException}.
 *
 * <p><b>Limit</b> ({@code ibv_modify_srq(IBV_SRQ_LIMIT)}): {@link #armLimit(int)} arms a
 * low-water mark; when the number of posted buffers drops below it, an
 * {@link AsyncEvent.Type#SRQ_LIMIT_REACHED} event goes to the device's
 * {@link AsyncEventListener} and the limit disarms (re-armed by the ULP, typically after
 * replenishing). A queue pair whose Send finds the queue empty fails as with an empty receive
 * queue (RFC 5041 §7.2, untagged error 2/2 on iWARP).
 *
 * <p>Posting follows {@link QueuePair#postRecv(RecvRequest)}: chains, the bad_wr partial-post
 * contract, no allocation per post, the request objects free when the call returns, the buffers
 * the provider's until the completion that consumed them (or flushed them) is polled.
 *
 * <p>Thread-safety: every method may be called from any thread, on both providers; posts are
 * serialized by the provider and a chain keeps its order. {@link #close()} comes after every
 * queue pair attached to it was closed; closing its protection domain closes it too (a second
 * close does nothing). Posting to a closed queue is refused with a {@link WorkRequestException}.
 */
public interface SharedReceiveQueue extends AutoCloseable {
    /** {@return the buffers the queue holds at most ({@code max_wr} as granted)} */
    int capacity();

    /** {@return the SGEs per receive request ({@code max_sge} as granted)} */
    int maxSge();

    /**
     * Buffers posted and not yet known to be consumed (a snapshot). A device does not tell which
     * buffers a Send took until the completion is polled, so the DiSNI provider counts a buffer
     * until its completion (success or flush) is polled from its CQ; the soft provider counts it
     * out as a Send starts consuming it. So between a Send's arrival and the poll of its
     * completion the two may differ by the completions not yet polled; once every completion is
     * polled both give the buffers still held by the queue, and posting fails as full only when
     * {@code posted() == capacity()}. The limit event ({@link #armLimit}) follows the device's own
     * count.
     *
     * @return the buffers posted and not yet known to be consumed
     */
    int posted();

    /**
     * Posts a chain of receive buffers.
     *
     * @param wr the first request of the chain
     * @throws WorkRequestException the queue is full, a request has more SGEs than {@link #maxSge()},
     *                              an SGE is outside its region, of another protection domain or
     *                              without LOCAL_WRITE; the requests before it were posted
     */
    void postRecv(RecvRequest wr) throws WorkRequestException;

    /**
     * Posts one buffer of a single SGE; allocates nothing.
     *
     * @param wrId   the request's id, returned in {@link WorkCompletion#wrId}
     * @param mr     the region of the buffer, with {@link Access#LOCAL_WRITE}
     * @param offset the buffer's offset in {@code mr}
     * @param length the buffer's length in bytes
     * @throws WorkRequestException as {@link #postRecv(RecvRequest)}
     */
    void postRecv(long wrId, MemoryRegion mr, long offset, int length) throws WorkRequestException;

    /**
     * Arms the limit: once fewer than {@code limit} buffers are posted an
     * {@link AsyncEvent.Type#SRQ_LIMIT_REACHED} event is raised and the limit disarms. 0 disarms.
     *
     * @param limit the low-water mark, 0 to disarm
     * @throws RdmaException when {@code limit} is negative or not below {@link #capacity()}
     */
    void armLimit(int limit) throws RdmaException;

    /** {@return the armed limit, 0 when disarmed (after the event, or never armed)} */
    int limit();

    /**
     * Destroys the queue ({@code ibv_destroy_srq}) after the queue pairs attached to it were closed;
     * a second close does nothing.
     */
    @Override
    void close();
}
