package org.jwarp.verbs;

/**
 * One work completion (ibv_wc). Mutable and reused: a consumer preallocates an array and
 * {@link CompletionQueue#poll(WorkCompletion[], int)} fills it, so reaping allocates nothing.
 */
public final class WorkCompletion {
    public long wrId;
    public WcStatus status = WcStatus.SUCCESS;
    public WcOpcode opcode = WcOpcode.SEND;
    /** Bytes received (RECV) or transferred. */
    public int byteLength;
    public int qpNum;
    /** Raw vendor error, 0 if none. */
    public int vendorError;
    /** STag the peer invalidated with Send with Invalidate (RFC 5040 §5.3), else 0. */
    public int invalidatedRkey;
    /** True when the RKEY in {@link #invalidatedRkey} is valid (IBV_WC_WITH_INV). */
    public boolean withInvalidate;
    /** True for a Send with Solicited Event (RFC 5040 §6.9). */
    public boolean solicited;
    /**
     * The context object of the QP this completion belongs to ({@link QueuePairConfig#withContext};
     * ibverbs' {@code qp_context}), or null: set by reference, with no allocation, on every
     * completion, error and flushed ones included.
     */
    public Object qpContext;

    public void copyFrom(WorkCompletion o) {
        wrId = o.wrId;
        status = o.status;
        opcode = o.opcode;
        byteLength = o.byteLength;
        qpNum = o.qpNum;
        vendorError = o.vendorError;
        invalidatedRkey = o.invalidatedRkey;
        withInvalidate = o.withInvalidate;
        solicited = o.solicited;
        qpContext = o.qpContext;
    }

    public boolean isSuccess() {
        return status == WcStatus.SUCCESS;
    }

    @Override
    public String toString() {
        return "WC{wrId=" + wrId + ", " + status + ", " + opcode + ", len=" + byteLength + ", qp=" + qpNum
                + (withInvalidate ? ", inv=0x" + Integer.toHexString(invalidatedRkey) : "") + "}";
    }
}
