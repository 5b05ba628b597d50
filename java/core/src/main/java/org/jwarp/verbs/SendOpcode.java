package org.jwarp.verbs;

/** Send-queue operations (ibv_wr_opcode; RFC 5040 §4.3 RDMA messages). */
public enum SendOpcode {
    /** RDMA Write (ibv IBV_WR_RDMA_WRITE = 0). */
    RDMA_WRITE(0),
    /** Send (IBV_WR_SEND = 2). */
    SEND(2),
    /** RDMA Read (IBV_WR_RDMA_READ = 4). */
    RDMA_READ(4),
    /** Send with Invalidate (IBV_WR_SEND_WITH_INV = 9). */
    SEND_WITH_INVALIDATE(9);

    /** The ibv_wr_opcode number. */
    public final int ibvCode;

    SendOpcode(int ibvCode) {
        this.ibvCode = ibvCode;
    }
}
