package org.jwarp.verbs;

/** Work-completion opcode, mirroring {@code enum ibv_wc_opcode}. */
public enum WcOpcode {
    SEND(0), RDMA_WRITE(1), RDMA_READ(2), COMP_SWAP(3), FETCH_ADD(4), BIND_MW(5), LOCAL_INV(6),
    RECV(128), RECV_RDMA_WITH_IMM(129);

    public final int code;

    WcOpcode(int code) {
        this.code = code;
    }

    public static WcOpcode of(int code) {
        for (WcOpcode o : values()) {
            if (o.code == code) {
                return o;
            }
        }
        throw new IllegalArgumentException("unknown ibv_wc_opcode " + code);
    }
}
