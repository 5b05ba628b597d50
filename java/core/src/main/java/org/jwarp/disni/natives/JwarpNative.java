package org.jwarp.disni.natives;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * JNI entry points of jwarp's libdisni beyond DiSNI 2.1: rdma_cm connect/accept/reject with a
 * full {@code rdma_conn_param} (responder resources = IRD, initiator depth = ORD, the values the
 * RFC 6581 section 9 negotiation decides, private data as in RFC 5044 section 7.1 /
 * RFC 6581 section 9), the data of the last CM event of an id, device limits, and
 * allocation-free post/poll calls. Defined by the DiSNI class loader only (it must share the
 * loader that loaded the library).
 *
 * <p>All handles are raw C pointers as obtained from DiSNI's {@code getObjId()}. Every
 * {@code IOException} thrown here is an {@link org.jwarp.disni.NativeErrnoException} carrying the
 * failed call's errno.
 */
public final class JwarpNative {
    /** Version of the extension this Java class expects. */
    public static final int VERSION = 10;

    /** Offsets of {@link #cmEventInfo} output (native-order ints, then private data bytes). */
    public static final int EV_SEQ = 0;
    public static final int EV_EVENT = 4;
    public static final int EV_STATUS = 8;
    public static final int EV_RESPONDER_RESOURCES = 12;
    public static final int EV_INITIATOR_DEPTH = 16;
    public static final int EV_PRIVATE_DATA_LEN = 20;
    public static final int EV_QP_NUM = 24;
    public static final int EV_FLAGS = 28;
    public static final int EV_PRIVATE_DATA = 32;
    /** Longest private data an event or a conn param carries (u8 length). */
    public static final int MAX_PRIVATE_DATA = 255;
    public static final int EV_SIZE = EV_PRIVATE_DATA + MAX_PRIVATE_DATA;

    /** Offsets of {@link #queryDevice} output. */
    public static final int DEV_MAX_QP_RD_ATOM = 0;
    public static final int DEV_MAX_QP_INIT_RD_ATOM = 4;
    public static final int DEV_MAX_RES_RD_ATOM = 8;
    public static final int DEV_MAX_QP_WR = 12;
    public static final int DEV_MAX_SGE = 16;
    public static final int DEV_MAX_CQE = 20;
    public static final int DEV_MAX_QP = 24;
    public static final int DEV_TRANSPORT = 28;
    public static final int DEV_NODE_TYPE = 32;
    public static final int DEV_VENDOR_ID = 36;
    public static final int DEV_VENDOR_PART = 40;
    public static final int DEV_PORT_CNT = 44;
    public static final int DEV_MAX_MR_SIZE = 48;
    public static final int DEV_NODE_GUID = 56;
    public static final int DEV_LINK_LAYER = 64;
    public static final int DEV_ACTIVE_MTU = 68;
    public static final int DEV_PORT_STATE = 72;
    /** Inline bytes a throw-away RC QP was granted (-1: could not probe). */
    public static final int DEV_MAX_INLINE = 76;
    public static final int DEV_MAX_SGE_RD = 80;
    public static final int DEV_SIZE = 88;

    /** Index half of a post-list result: bad_wr was not in the chain (NULL or foreign). */
    public static final int CHAIN_UNKNOWN = -1;

    /** Offsets of {@link #qpGranted} output (native-order ints). */
    public static final int CAP_QP_NUM = 0;
    public static final int CAP_MAX_SEND_WR = 4;
    public static final int CAP_MAX_RECV_WR = 8;
    public static final int CAP_MAX_SEND_SGE = 12;
    public static final int CAP_MAX_RECV_SGE = 16;
    public static final int CAP_MAX_INLINE = 20;
    public static final int CAP_SIZE = 24;

    /** {@code enum ibv_transport_type}. */
    public static final int TRANSPORT_IB = 0;
    public static final int TRANSPORT_IWARP = 1;
    /** {@code IBV_LINK_LAYER_*}. */
    public static final int LINK_LAYER_INFINIBAND = 1;
    public static final int LINK_LAYER_ETHERNET = 2;

    /** Keys of {@link #probe(int)}: sizes and offsets of rdma-core structures. */
    public static final int PROBE_SEND_WR_SIZE = 1;
    public static final int PROBE_RECV_WR_SIZE = 2;
    public static final int PROBE_SGE_SIZE = 3;
    public static final int PROBE_WC_SIZE = 4;
    public static final int PROBE_SEND_WR_REMOTE_ADDR = 5;
    public static final int PROBE_SEND_WR_RKEY = 6;
    public static final int PROBE_SEND_WR_OPCODE = 7;
    public static final int PROBE_SEND_WR_FLAGS = 8;
    public static final int PROBE_SEND_WR_IMM = 9;
    public static final int PROBE_SEND_WR_SG_LIST = 10;
    public static final int PROBE_SEND_WR_NUM_SGE = 11;
    public static final int PROBE_SEND_WR_NEXT = 12;
    public static final int PROBE_WC_STATUS = 13;
    public static final int PROBE_WC_OPCODE = 14;
    public static final int PROBE_WC_VENDOR_ERR = 15;
    public static final int PROBE_WC_BYTE_LEN = 16;
    public static final int PROBE_WC_IMM = 17;
    public static final int PROBE_WC_QP_NUM = 18;
    public static final int PROBE_WC_FLAGS = 19;
    public static final int PROBE_CONN_PARAM_SIZE = 20;
    public static final int PROBE_EVENT_INFO_SIZE = 21;
    public static final int PROBE_DEVICE_INFO_SIZE = 22;
    public static final int PROBE_MAX_PRIVATE_DATA = 23;
    /** The platform's EADDRINUSE, as {@link org.jwarp.disni.NativeErrnoException#errno()} reports it. */
    public static final int PROBE_ERRNO_EADDRINUSE = 24;
    /** The platform's EINVAL. */
    public static final int PROBE_ERRNO_EINVAL = 25;

    static {
        System.loadLibrary("disni");
    }

    private JwarpNative() {
    }

    /** Extension version compiled into the library. */
    public static native int version();

    /** Size or offset for a PROBE_* key, -1 for an unknown key. */
    public static native int probe(int key);

    /** {@code rdma_connect}; IRD = responderResources, ORD = initiatorDepth (0..255). */
    public static native void connect(long cmId, int responderResources, int initiatorDepth, int retryCount,
            int rnrRetryCount, byte[] privateData) throws IOException;

    /** {@code rdma_accept} with the given IRD/ORD and private data. */
    public static native void accept(long cmId, int responderResources, int initiatorDepth, int retryCount,
            int rnrRetryCount, byte[] privateData) throws IOException;

    /** {@code rdma_reject} with private data (may be null). */
    public static native void reject(long cmId, byte[] privateData) throws IOException;

    /**
     * Copies the last CM event recorded for the id into {@code out} (direct, at least EV_SIZE
     * bytes, native order); returns bytes written or -1 when nothing was recorded.
     */
    public static native int cmEventInfo(long cmId, ByteBuffer out);

    /** {@code ibv_query_device} (+ {@code ibv_query_port} when port &gt; 0) into {@code out}. */
    public static native int queryDevice(long verbsContext, int port, ByteBuffer out) throws IOException;

    /** Opens the named device, queries it and port 1 into {@code out}, closes it again. */
    public static native int queryDeviceByName(String name, ByteBuffer out) throws IOException;

    /** {@code ibv_get_device_name} of a verbs context. */
    public static native String deviceName(long verbsContext);

    /** Names of all RDMA devices ({@code ibv_get_device_list}). */
    public static native String[] deviceNames() throws IOException;

    /** {@code id->port_num}. */
    public static native int cmIdPortNum(long cmId);

    /** {@code ibv_post_send} on a chain of {@code struct ibv_send_wr} at wr; 0 or an errno value. */
    public static native int postSend(long qp, long wr);

    /** {@code ibv_post_recv}; 0 or an errno value. */
    public static native int postRecv(long qp, long wr);

    /**
     * The SGEs per send and per receive WR the next DiSNI {@code _createQP} on this thread asks
     * for (its signature carries none); good for that one creation.
     */
    public static native void qpRequest(int maxSendSge, int maxRecvSge);

    /**
     * Drops this thread's {@link #qpRequest}, used or not: call it in a finally around
     * {@code createQP}, which can throw before reaching {@code _createQP}.
     */
    public static native void qpRequestClear();

    /** {@code ibv_modify_qp} to IBV_QPS_ERR (outstanding WRs complete as flushed); 0 or an errno value. */
    public static native int qpToError(long qp);

    /**
     * What the last {@code _createQP} on this thread was granted (qp_num, then {@code struct
     * ibv_qp_cap}) into {@code out} (direct, CAP_SIZE bytes, native order); bytes written or -1.
     */
    public static native int qpGranted(ByteBuffer out);

    /**
     * One {@code ibv_post_send} for the linked chain at wr: 0, or {@code (index of bad_wr << 32) | errno}
     * (the WRs before bad_wr were posted); index {@link #CHAIN_UNKNOWN} when the provider left
     * bad_wr outside the chain, so that what was posted is unknown.
     */
    public static native long postSendList(long qp, long wr);

    /** One {@code ibv_post_recv} for the linked chain at wr, with {@link #postSendList}'s result. */
    public static native long postRecvList(long qp, long wr);

    /** {@code ibv_poll_cq} into {@code struct ibv_wc[n]} at wcs; count or negative errno. */
    public static native int pollCq(long cq, int n, long wcs);

    /**
     * Version 8: {@code ibv_poll_cq} into {@code struct ibv_wc[n]} at wcs in a loop, in this one
     * call, until it returns a completion or fails, or until maxPolls polls or (maxNanos &gt; 0)
     * about maxNanos of monotonic time passed; no pause between polls, no allocation. Returns the
     * count (0 when a bound was reached), {@code -EINVAL} for bad arguments, or ibv_poll_cq's
     * negative failure value.
     */
    public static native int pollCqSpin(long cq, int n, long wcs, long maxPolls, long maxNanos);

    /**
     * Maps {@code length} bytes of zeroed anonymous memory (mmap) for a region of any length;
     * returns its address. Free it with {@link #unmapRegion}.
     */
    public static native long mapRegion(long length) throws IOException;

    /** Unmaps what {@link #mapRegion} returned; 0 or the errno of munmap. */
    public static native int unmapRegion(long addr, long length);

    /**
     * Version 7: gives the pages of {@code [addr, addr + length)} (memory of {@link #mapRegion}) back
     * at once, the mapping staying (madvise MADV_DONTNEED: later reads see zeros); 0 or the errno of
     * madvise.
     */
    public static native int discardRegion(long addr, long length);

    /**
     * {@code ibv_reg_mr} of {@code [addr, addr + length)} with a 64-bit length; writes lkey (offset 0)
     * and rkey (offset 4) into {@code out} (direct, 8 bytes, native order) and returns the
     * {@code struct ibv_mr} pointer.
     */
    public static native long regMr(long pd, long addr, long length, int access, ByteBuffer out) throws IOException;

    /** {@code ibv_dereg_mr}; 0 or its error code. */
    public static native int deregMr(long mr);

    /** A direct buffer over {@code [addr, addr + length)}, sharing the memory (no copy). */
    public static native ByteBuffer window(long addr, int length);

    // ---- version 6: shared receive queues, completion channels, async events ----

    /** Offsets of {@link #srqCreate} output (native-order ints). */
    public static final int SRQ_MAX_WR = 0;
    public static final int SRQ_MAX_SGE = 4;
    public static final int SRQ_SIZE = 8;

    /** Offsets of {@link #asyncEvent} output. */
    public static final int AE_TYPE = 0;
    public static final int AE_QP_NUM = 4;
    public static final int AE_CQ = 8;
    public static final int AE_SRQ = 16;
    public static final int AE_PORT = 24;
    public static final int AE_SIZE = 32;
    /** {@link #asyncEvent} result: nothing within the timeout. */
    public static final int AE_TIMEOUT = -1;

    /** Keys of {@link #asyncEventCode}. */
    public static final int AEC_QP_FATAL = 0;
    public static final int AEC_QP_REQ_ERR = 1;
    public static final int AEC_QP_ACCESS_ERR = 2;
    public static final int AEC_CQ_ERR = 3;
    public static final int AEC_SRQ_LIMIT_REACHED = 4;
    public static final int AEC_SRQ_ERR = 5;
    public static final int AEC_COMM_EST = 6;
    public static final int AEC_DEVICE_FATAL = 7;

    /** {@code ibv_create_srq} on pd; writes the granted max_wr / max_sge into {@code out}; returns the SRQ. */
    public static native long srqCreate(long pd, int maxWr, int maxSge, ByteBuffer out) throws IOException;

    /** One {@code ibv_post_srq_recv} for the linked chain at wr, with {@link #postSendList}'s result. */
    public static native long srqPostRecvList(long srq, long wr);

    /** {@code ibv_modify_srq(IBV_SRQ_LIMIT)}; 0 or an errno value. */
    public static native int srqArm(long srq, int limit);

    /** {@code ibv_query_srq}'s srq_limit (0 once the limit event fired), or a negative errno. */
    public static native int srqLimit(long srq);

    /** {@code ibv_destroy_srq}; 0 or an errno value. */
    public static native int srqDestroy(long srq);

    /** The SRQ the next DiSNI {@code _createQP} on this thread attaches; call after {@link #qpRequest}. */
    public static native void qpRequestSrq(long srq);

    /** {@code ibv_req_notify_cq}; 0 or an errno value. */
    public static native int reqNotifyCq(long cq, boolean solicitedOnly);

    /**
     * Waits up to timeoutMs for one event of the completion channel and returns the {@code ibv_cq}
     * that raised it; 0 on timeout, a negative errno on failure. Since version 10 the event is left
     * unacknowledged: the caller counts it in the CQ's ackState and acknowledges with
     * {@link #cqAckEvents}, at the latest before the CQ is destroyed (which waits for it for ever).
     */
    public static native long compChannelNext(long channel, int timeoutMs);

    /**
     * Waits up to timeoutMs for a device async event ({@code ibv_get_async_event}, acknowledged);
     * returns its {@code ibv_event_type} with the AE_* fields in {@code out}, {@link #AE_TIMEOUT},
     * or {@code -2 - errno}.
     */
    public static native int asyncEvent(long context, int timeoutMs, ByteBuffer out);

    /** The {@code ibv_event_type} value for an AEC_* key, -1 for an unknown key. */
    public static native int asyncEventCode(int key);

    // ---- version 9: the blocking wait of a CQ on its own channel in one call ----

    /**
     * The whole blocking wait of a CQ on its own completion channel in one call: {@code ibv_poll_cq}
     * into {@code struct ibv_wc[n]} at wcs; when empty, {@code ibv_req_notify_cq} (every completion)
     * and a second poll; when still empty, a wait of up to timeoutNanos on the channel's fd and on
     * wakeFd ({@code ppoll}); on an event {@code ibv_get_cq_event} and a last poll. The events taken
     * are counted in the native uint32 at ackState and acknowledged 64 at a time; the rest by
     * {@link #cqAckEvents} before the CQ is destroyed. A readable wakeFd ({@link #wakeSignal}) ends
     * the wait at once. The caller serializes the calls on one CQ with each other, with every poll
     * into wcs and with the CQ's destruction.
     *
     * @return the completions polled (n at most); 0 when the time passed, wakeFd fired, a signal
     *         interrupted the wait or the event found the CQ empty; {@code -EINVAL} for bad
     *         arguments; or the failing call's negative errno
     */
    public static native int cqAwait(long cq, long channel, int wakeFd, int n, long wcs, long timeoutNanos,
            long ackState);

    /**
     * Acknowledges ({@code ibv_ack_cq_events}) the events {@link #cqAwait} (or the caller, for
     * {@link #compChannelNext}) counted at ackState and
     * left unacknowledged, and zeroes the count: call it before the CQ is destroyed, which otherwise
     * waits for them for ever. Returns the number acknowledged, or {@code -EINVAL}.
     */
    public static native int cqAckEvents(long cq, long ackState);

    /** A non-blocking eventfd that ends a {@link #cqAwait} once written; its fd. */
    public static native int wakeCreate() throws IOException;

    /** Makes the wake fd readable for good; 0 or an errno value. */
    public static native int wakeSignal(int fd);

    /** Closes the wake fd; 0 or the errno of close. */
    public static native int wakeClose(int fd);
}
