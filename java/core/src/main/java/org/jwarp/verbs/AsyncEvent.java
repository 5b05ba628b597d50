package org.jwarp.verbs;

/**
 * An asynchronous event of a device ({@code struct ibv_async_event} and the rdma_cm connection
 * events): raised by the provider, delivered to the device's {@link AsyncEventListener}. The
 * fields that apply to the {@link #type()} are set, the others are null / -1.
 *
 * <p>Immutable, so thread-safe.
 *
 * @param type       what happened
 * @param qpNum      the queue pair concerned, or -1
 * @param connection the connection concerned (connection and QP events), or null
 * @param cq         the completion queue concerned (CQ events), or null
 * @param srq        the shared receive queue concerned (SRQ events), or null
 * @param detail     a human-readable reason, never null
 * @param qpContext  the context object of the queue pair concerned ({@link QueuePairConfig#withContext};
 *                   ibverbs' {@code qp_context}), or null
 */
public record AsyncEvent(Type type, int qpNum, Connection connection, CompletionQueue cq, SharedReceiveQueue srq,
                         String detail, Object qpContext) {
    /**
     * Checks {@code type} and replaces a null {@code detail} by the empty string.
     *
     * @param type       what happened
     * @param qpNum      the queue pair concerned, or -1
     * @param connection the connection concerned, or null
     * @param cq         the completion queue concerned, or null
     * @param srq        the shared receive queue concerned, or null
     * @param detail     a human-readable reason (null becomes empty)
     * @param qpContext  the context object of the queue pair concerned, or null
     * @throws NullPointerException when {@code type} is null
     */
    public AsyncEvent {
        java.util.Objects.requireNonNull(type, "type");
        detail = detail == null ? "" : detail;
    }

    /**
     * An event with no queue pair context (CQ and SRQ events, or a QP created without one).
     *
     * @param type       what happened
     * @param qpNum      the queue pair concerned, or -1
     * @param connection the connection concerned, or null
     * @param cq         the completion queue concerned, or null
     * @param srq        the shared receive queue concerned, or null
     * @param detail     a human-readable reason (null becomes empty)
     */
    public AsyncEvent(Type type, int qpNum, Connection connection, CompletionQueue cq, SharedReceiveQueue srq,
                      String detail) {
        this(type, qpNum, connection, cq, srq, detail, null);
    }

    /** Kinds of events, after {@code enum ibv_event_type} and {@code enum rdma_cm_event_type}. */
    public enum Type {
        /** IBV_EVENT_QP_FATAL: the queue pair went to ERR (a local or remote fatal error, RFC 5040 §7); its WRs flush. */
        QP_FATAL,
        /**
         * IBV_EVENT_CQ_ERR: a completion queue overran (a completion found it full; what the
         * application gets is listed on {@link CompletionQueue}). Soft provider: every queue pair
         * using the CQ goes to ERR (QP_FATAL) and flushes; flushed completions that find the CQ
         * full are lost. DiSNI: the kernel raises the event
         * and the provider changes no QP state itself; what happens to the QPs is the device's
         * (rxe: they stay as they were; siw 6.1: the receive that found the CQ full ends its stream,
         * so the peer sees a disconnect).
         */
        CQ_ERROR,
        /** IBV_EVENT_SRQ_LIMIT_REACHED: fewer buffers than the armed limit are posted; the limit disarmed. */
        SRQ_LIMIT_REACHED,
        /** RDMA_CM_EVENT_DISCONNECTED from the peer: it closed or terminated the stream (RFC 5040 §5.3, §4.8). */
        PEER_DISCONNECTED,
        /** RDMA_CM_EVENT_ESTABLISHED: the connection is usable. */
        ESTABLISHED,
        /** The connection is closed (after a local close, a peer disconnect or a fatal error). */
        CLOSED
    }
}
