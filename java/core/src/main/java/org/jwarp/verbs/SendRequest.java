package org.jwarp.verbs;

/**
 * A send-queue work request ({@code struct ibv_send_wr}): Send, Send with Solicited Event, Send
 * with Invalidate (RFC 5040 §5.3), RDMA Write (§5.1) or RDMA Read (§5.2), with a scatter-gather
 * list of local buffers and an optional {@link #next} request, so a chain of requests is posted
 * in one call ({@link QueuePair#postSend}).
 *
 * <p>Mutable and reusable: fill it, post it, then refill it; the provider copies what it needs
 * at post time (for an {@link #inline} request even the payload bytes), so the request, its list
 * and, for inline requests, the source buffers are free when the post returns. An empty
 * {@link #sgl} makes a zero-length operation (RFC 5041 §5.2, RFC 5040 §5).
 *
 * <p>The buffers the list names are another matter: unless the request is inline they belong to
 * the provider from the post until the request completes (for an unsignalled request, until a
 * later signalled one of the queue completes). Do not write into the source of a Send or Write
 * meanwhile: it is sent from the region itself (zero copy), and on the soft provider and siw the
 * peer then sees a CRC error and ends the connection (see {@link MemoryRegion}). Do not touch the
 * sink of a Read before its completion.
 *
 * <p>Not thread-safe: one request object belongs to one posting thread at a time.
 */
public final class SendRequest {
    /** The application's id of the request, returned in {@link WorkCompletion#wrId}. */
    public long wrId;
    /** The operation; {@link SendOpcode#SEND} by default. */
    public SendOpcode opcode = SendOpcode.SEND;
    /** Generate a completion for this WR (IBV_SEND_SIGNALED); an unsignalled WR holds its slot until a later signalled one completes. */
    public boolean signaled = true;
    /** Send with Solicited Event (IBV_SEND_SOLICITED; RFC 5040 §6.9). */
    public boolean solicited;
    /**
     * IBV_SEND_FENCE: this WR starts only after every earlier RDMA Read of the queue completed
     * (RFC 5040 §5.5 leaves a Write after a Read free to overtake the Read's data; the fence forbids it).
     */
    public boolean fence;
    /**
     * IBV_SEND_INLINE: the payload (at most the QP's {@link QueuePairCaps#maxInlineData()} bytes)
     * is copied at post time; Send and RDMA Write only.
     */
    public boolean inline;
    /** Local buffers: source of Send/Write (gather), sink of Read (scatter). */
    public final ScatterGatherList sgl = new ScatterGatherList();
    /** Remote tagged address (Write sink / Read source). */
    public long remoteAddress;
    /** Remote STag (Write sink / Read source). */
    public int rkey;
    /** STag the peer must invalidate, for {@link SendOpcode#SEND_WITH_INVALIDATE}. */
    public int invalidateRkey;
    /** The next request of the chain posted with this one, or null. */
    public SendRequest next;

    /**
     * Makes this a signalled Send of {@code len} bytes of {@code mr} at {@code offset} (RFC 5040
     * §5.3); flags reset, chain cut, one SGE (none when {@code len} is 0). Allocates nothing.
     *
     * @param id     the request's id, returned in {@link WorkCompletion#wrId}
     * @param mr     the source region (no access right needed); ignored when {@code len} is 0
     * @param offset the source's offset in {@code mr}
     * @param len    bytes to send
     * @return this request
     */
    public SendRequest send(long id, MemoryRegion mr, long offset, int len) {
        return set(id, SendOpcode.SEND, mr, offset, len, 0, 0);
    }

    /**
     * Makes this a signalled RDMA Write (RFC 5040 §5.1) of {@code len} bytes of {@code mr} at
     * {@code offset} to the peer's tagged buffer {@code remoteKey} at {@code remoteAddr}; flags
     * reset, chain cut. Allocates nothing.
     *
     * @param id         the request's id, returned in {@link WorkCompletion#wrId}
     * @param mr         the source region; ignored when {@code len} is 0
     * @param offset     the source's offset in {@code mr}
     * @param len        bytes to write
     * @param remoteAddr the tagged offset in the peer's region ({@link MemoryRegion#address()} based)
     * @param remoteKey  the peer region's STag ({@link MemoryRegion#rkey()}), with REMOTE_WRITE
     * @return this request
     */
    public SendRequest write(long id, MemoryRegion mr, long offset, int len, long remoteAddr, int remoteKey) {
        return set(id, SendOpcode.RDMA_WRITE, mr, offset, len, remoteAddr, remoteKey);
    }

    /**
     * Makes this a signalled RDMA Read (RFC 5040 §5.2) of {@code len} bytes from the peer's tagged
     * buffer {@code remoteKey} at {@code remoteAddr} into {@code mr} at {@code offset}; flags reset,
     * chain cut. Allocates nothing. Beyond the negotiated ORD the Read waits in the send queue.
     *
     * @param id         the request's id, returned in {@link WorkCompletion#wrId}
     * @param mr         the sink region, with {@link Access#LOCAL_WRITE}; ignored when {@code len} is 0
     * @param offset     the sink's offset in {@code mr}
     * @param len        bytes to read
     * @param remoteAddr the tagged offset in the peer's region
     * @param remoteKey  the peer region's STag, with REMOTE_READ
     * @return this request
     */
    public SendRequest read(long id, MemoryRegion mr, long offset, int len, long remoteAddr, int remoteKey) {
        return set(id, SendOpcode.RDMA_READ, mr, offset, len, remoteAddr, remoteKey);
    }

    /** {@return bytes the request moves: the sum of its list's lengths} */
    public long length() {
        return sgl.totalLength();
    }

    private SendRequest set(long id, SendOpcode op, MemoryRegion mr, long offset, int len, long ra, int rk) {
        wrId = id;
        opcode = op;
        sgl.set(len == 0 ? null : mr, offset, len);
        remoteAddress = ra;
        rkey = rk;
        solicited = false;
        signaled = true;
        fence = false;
        inline = false;
        invalidateRkey = 0;
        next = null;
        return this;
    }
}
