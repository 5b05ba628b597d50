package org.jwarp.verbs;

/**
 * One work completion (ibv_wc; RFC 5040 §8 completion of a work request). Mutable and reused: a
 * consumer preallocates an array and {@link CompletionQueue#poll(WorkCompletion[], int)} fills it,
 * so reaping allocates nothing.
 *
 * <p>A completion hands the buffers its work request named back to the application: once it is
 * polled, successful or not, the provider no longer reads or writes them (see {@link QueuePair}).
 * On an error status only {@link #wrId}, {@link #status}, {@link #qpNum}, {@link #qpContext} and
 * {@link #vendorError} are meaningful, as with ibverbs; the first error of a queue pair is followed
 * by {@link WcStatus#WR_FLUSH_ERR} for every request still outstanding on it.
 *
 * <p>Not thread-safe: one thread fills and reads an instance at a time.
 */
public final class WorkCompletion {
    /** The {@code wrId} of the completed request ({@link SendRequest#wrId}, {@link RecvRequest#wrId}). */
    public long wrId;
    /** The outcome; {@link WcStatus#SUCCESS} or the error that ended the request. */
    public WcStatus status = WcStatus.SUCCESS;
    /** What completed: the send-queue operation, or {@link WcOpcode#RECV} for a receive. */
    public WcOpcode opcode = WcOpcode.SEND;
    /** Bytes received (RECV) or transferred. */
    public int byteLength;
    /** The number of the queue pair the request was posted to ({@link QueuePair#qpNum()}). */
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

    /**
     * Copies every field of {@code o} into this completion (no allocation).
     *
     * @param o the completion to copy
     */
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

    /** {@return whether {@link #status} is {@link WcStatus#SUCCESS}} */
    public boolean isSuccess() {
        return status == WcStatus.SUCCESS;
    }

    /** {@return the id, status, opcode, length and QP number, for logs; allocates} */
    @Override
    public String toString() {
        return "WC{wrId=" + wrId + ", " + status + ", " + opcode + ", len=" + byteLength + ", qp=" + qpNum
                + (withInvalidate ? ", inv=0x" + Integer.toHexString(invalidatedRkey) : "") + "}";
    }
}
