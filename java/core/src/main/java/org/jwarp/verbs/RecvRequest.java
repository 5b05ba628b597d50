package org.jwarp.verbs;

/**
 * A receive-queue work request ({@code struct ibv_recv_wr}): one untagged buffer for one
 * incoming Send (RFC 5041 §4.4, §5.3), made of the entries of its scatter-gather list in order,
 * with an optional {@link #next} request so a chain is posted in one call
 * ({@link QueuePair#postRecv(RecvRequest)}). An empty list takes a zero-length Send only.
 *
 * <p>Mutable and reusable: the provider copies what it needs at post time. The buffers the list
 * names belong to the provider from the post until the receive completes: it places the Send's
 * bytes there, so neither read nor write them before the completion (after an error or flush
 * completion their contents are undefined). A Send longer than the buffer completes it with
 * {@link WcStatus#LOC_LEN_ERR} (soft, siw) and ends the connection. Not thread-safe: one request
 * object belongs to one posting thread at a time.
 */
public final class RecvRequest {
    /** The application's id of the request, returned in {@link WorkCompletion#wrId}. */
    public long wrId;
    /** Where the Send's bytes are placed, in list order. */
    public final ScatterGatherList sgl = new ScatterGatherList();
    /** The next request of the chain posted with this one, or null. */
    public RecvRequest next;

    /**
     * Makes this one buffer of {@code len} bytes of {@code mr} at {@code offset} (chain cut).
     * Allocates nothing; {@link #sgl} may then be extended with {@link ScatterGatherList#add}.
     *
     * @param id     the request's id, returned in {@link WorkCompletion#wrId}
     * @param mr     the region of the buffer, with {@link Access#LOCAL_WRITE}
     * @param offset the buffer's offset in {@code mr}
     * @param len    the buffer's length in bytes
     * @return this request
     */
    public RecvRequest set(long id, MemoryRegion mr, long offset, int len) {
        wrId = id;
        sgl.set(mr, offset, len);
        next = null;
        return this;
    }
}
