package org.jwarp.verbs;

/**
 * Work-completion opcode, mirroring {@code enum ibv_wc_opcode}. The providers of this project
 * complete {@link #SEND}, {@link #RDMA_WRITE}, {@link #RDMA_READ} and {@link #RECV}; the others
 * exist for the mapping of device values. On an error completion ibverbs leaves the opcode
 * undefined, so read it only for a successful one.
 */
public enum WcOpcode {
    /** IBV_WC_SEND: a Send (also Send with Solicited Event or Invalidate) completed. */
    SEND(0),
    /** IBV_WC_RDMA_WRITE: an RDMA Write completed. */
    RDMA_WRITE(1),
    /** IBV_WC_RDMA_READ: an RDMA Read completed; its sink holds the data. */
    RDMA_READ(2),
    /** IBV_WC_COMP_SWAP: atomic compare-and-swap (not in iWARP). */
    COMP_SWAP(3),
    /** IBV_WC_FETCH_ADD: atomic fetch-and-add (not in iWARP). */
    FETCH_ADD(4),
    /** IBV_WC_BIND_MW: memory window bind (no memory windows in this API). */
    BIND_MW(5),
    /** IBV_WC_LOCAL_INV: local invalidate. */
    LOCAL_INV(6),
    /** IBV_WC_RECV: a receive consumed by an incoming Send. */
    RECV(128),
    /** IBV_WC_RECV_RDMA_WITH_IMM: Write with immediate (not in iWARP). */
    RECV_RDMA_WITH_IMM(129);

    /** The ibv_wc_opcode number. */
    public final int code;

    WcOpcode(int code) {
        this.code = code;
    }

    /**
     * The opcode of an ibv_wc_opcode number.
     *
     * @param code an ibv_wc_opcode number
     * @return its opcode
     * @throws IllegalArgumentException for a number this enum does not know
     */
    public static WcOpcode of(int code) {
        for (WcOpcode o : values()) {
            if (o.code == code) {
                return o;
            }
        }
        throw new IllegalArgumentException("unknown ibv_wc_opcode " + code);
    }
}
