package org.jwarp.verbs;

/**
 * Work-completion status, value for value {@code enum ibv_wc_status} of libibverbs (the ordinal is
 * the ibverbs number). The DiSNI provider reports what the device reports. The soft provider
 * reports {@link #SUCCESS}, {@link #LOC_LEN_ERR} (a Send longer than its receive buffer),
 * {@link #LOC_PROT_ERR} (a receive whose region was deregistered), {@link #WR_FLUSH_ERR} (every
 * request outstanding when the connection failed or closed), and for a TERM received from the peer
 * (RFC 5040 §4.8, RFC 5041 §7.2) {@link #REM_ACCESS_ERR} (RDMAP protection or DDP tagged error),
 * {@link #REM_INV_REQ_ERR} (DDP untagged error), {@link #REM_OP_ERR} (other RDMAP or DDP errors)
 * or {@link #FATAL_ERR} (an LLP/MPA error).
 */
public enum WcStatus {
    /** IBV_WC_SUCCESS: the request completed. */
    SUCCESS,
    /** IBV_WC_LOC_LEN_ERR: local length error, e.g. a received Send longer than its buffer. */
    LOC_LEN_ERR,
    /** IBV_WC_LOC_QP_OP_ERR: local QP operation error (rxe's report of a receive too short). */
    LOC_QP_OP_ERR,
    /** IBV_WC_LOC_EEC_OP_ERR: local EE context operation error (not used by iWARP). */
    LOC_EEC_OP_ERR,
    /** IBV_WC_LOC_PROT_ERR: local protection error: a buffer failed its region's check. */
    LOC_PROT_ERR,
    /** IBV_WC_WR_FLUSH_ERR: flushed: the QP went to ERR (connection failed or closed) first. */
    WR_FLUSH_ERR,
    /** IBV_WC_MW_BIND_ERR: memory window bind error (no memory windows in this API). */
    MW_BIND_ERR,
    /** IBV_WC_BAD_RESP_ERR: bad response from the peer. */
    BAD_RESP_ERR,
    /** IBV_WC_LOC_ACCESS_ERR: local access error. */
    LOC_ACCESS_ERR,
    /** IBV_WC_REM_INV_REQ_ERR: the peer found the request invalid (e.g. no or too short receive buffer). */
    REM_INV_REQ_ERR,
    /** IBV_WC_REM_ACCESS_ERR: the peer refused access (bad STag, bounds or rights, RFC 5040 §4.8). */
    REM_ACCESS_ERR,
    /** IBV_WC_REM_OP_ERR: the peer could not complete the operation. */
    REM_OP_ERR,
    /** IBV_WC_RETRY_EXC_ERR: transport retries exceeded. */
    RETRY_EXC_ERR,
    /** IBV_WC_RNR_RETRY_EXC_ERR: receiver-not-ready retries exceeded (InfiniBand/RoCE). */
    RNR_RETRY_EXC_ERR,
    /** IBV_WC_LOC_RDD_VIOL_ERR: local RDD violation (not used by iWARP). */
    LOC_RDD_VIOL_ERR,
    /** IBV_WC_REM_INV_RD_REQ_ERR: the peer found a Read Request invalid. */
    REM_INV_RD_REQ_ERR,
    /** IBV_WC_REM_ABORT_ERR: the peer aborted the operation. */
    REM_ABORT_ERR,
    /** IBV_WC_INV_EECN_ERR: invalid EE context number (not used by iWARP). */
    INV_EECN_ERR,
    /** IBV_WC_INV_EEC_STATE_ERR: invalid EE context state (not used by iWARP). */
    INV_EEC_STATE_ERR,
    /** IBV_WC_FATAL_ERR: fatal error; soft: the peer ended the stream with an LLP (MPA) TERM. */
    FATAL_ERR,
    /** IBV_WC_RESP_TIMEOUT_ERR: response timeout. */
    RESP_TIMEOUT_ERR,
    /** IBV_WC_GENERAL_ERR: any other error, and every ibverbs number this enum does not know. */
    GENERAL_ERR;

    private static final WcStatus[] VALUES = values();

    /** {@return the ibv_wc_status number} */
    public int code() {
        return ordinal();
    }

    /**
     * The status of an ibv_wc_status number.
     *
     * @param code an ibv_wc_status number
     * @return its status, {@link #GENERAL_ERR} for a number outside the enum
     */
    public static WcStatus of(int code) {
        return code >= 0 && code < VALUES.length ? VALUES[code] : GENERAL_ERR;
    }
}
