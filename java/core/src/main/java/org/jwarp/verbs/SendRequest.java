package org.jwarp.verbs;

/**
 * A send-queue work request (ibv_send_wr with one SGE). Mutable and reusable: post it, then
 * reset its fields for the next one; the provider copies what it needs at post time.
 *
 * <p>A zero {@link #length} makes a zero-length operation (RFC 5041 §5.2, RFC 5040 §5); then
 * {@link #local} may be null.
 */
public final class SendRequest {
    public long wrId;
    public SendOpcode opcode = SendOpcode.SEND;
    /** Generate a completion for this WR (IBV_SEND_SIGNALED). */
    public boolean signaled = true;
    /** Send with Solicited Event (IBV_SEND_SOLICITED; RFC 5040 §6.9). */
    public boolean solicited;
    /** Local buffer: source of Send/Write, sink of Read. */
    public MemoryRegion local;
    public int localOffset;
    public int length;
    /** Remote tagged address (Write sink / Read source). */
    public long remoteAddress;
    /** Remote STag (Write sink / Read source). */
    public int rkey;
    /** STag the peer must invalidate, for {@link SendOpcode#SEND_WITH_INVALIDATE}. */
    public int invalidateRkey;

    public SendRequest send(long id, MemoryRegion mr, int offset, int len) {
        return set(id, SendOpcode.SEND, mr, offset, len, 0, 0);
    }

    public SendRequest write(long id, MemoryRegion mr, int offset, int len, long remoteAddr, int remoteKey) {
        return set(id, SendOpcode.RDMA_WRITE, mr, offset, len, remoteAddr, remoteKey);
    }

    public SendRequest read(long id, MemoryRegion mr, int offset, int len, long remoteAddr, int remoteKey) {
        return set(id, SendOpcode.RDMA_READ, mr, offset, len, remoteAddr, remoteKey);
    }

    private SendRequest set(long id, SendOpcode op, MemoryRegion mr, int offset, int len, long ra, int rk) {
        wrId = id;
        opcode = op;
        local = mr;
        localOffset = offset;
        length = len;
        remoteAddress = ra;
        rkey = rk;
        solicited = false;
        signaled = true;
        invalidateRkey = 0;
        return this;
    }
}
