package org.jwarp.verbs;

/**
 * A receive-queue work request ({@code struct ibv_recv_wr}): one untagged buffer for one
 * incoming Send (RFC 5041 §4.4, §5.3), made of the entries of its scatter-gather list in order,
 * with an optional {@link #next} request so a chain is posted in one call
 * ({@link QueuePair#postRecv(RecvRequest)}). An empty list takes a zero-length Send only.
 *
 * <p>Mutable and reusable: the provider copies what it needs at post time. Not thread-safe: one
 * request object belongs to one posting thread at a time.
 */
public final class RecvRequest {
    public long wrId;
    /** Where the Send's bytes are placed, in list order. */
    public final ScatterGatherList sgl = new ScatterGatherList();
    /** The next request of the chain posted with this one, or null. */
    public RecvRequest next;

    /** One buffer of {@code len} bytes of {@code mr} at {@code offset} (chain cut). */
    public RecvRequest set(long id, MemoryRegion mr, long offset, int len) {
        wrId = id;
        sgl.set(mr, offset, len);
        next = null;
        return this;
    }
}
