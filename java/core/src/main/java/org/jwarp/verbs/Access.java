package org.jwarp.verbs;

/** Access rights of a memory region (ibv_access_flags; RFC 5040 §8 STag access rights). */
public enum Access {
    /**
     * The local device may write into the region: needed by every region that is the sink of a
     * receive or of an RDMA Read (IBV_ACCESS_LOCAL_WRITE), and by a region given
     * {@link #REMOTE_WRITE} (as ibv_reg_mr requires; {@link #REMOTE_READ} alone does not need it).
     * Local reads (the source of a Send or RDMA Write) need no right.
     */
    LOCAL_WRITE(1),
    /**
     * The peer may RDMA Write into the region through its STag ({@link MemoryRegion#rkey()};
     * IBV_ACCESS_REMOTE_WRITE, RFC 5040 §5.1, RFC 5041 §8.2). Requires {@link #LOCAL_WRITE}.
     */
    REMOTE_WRITE(2),
    /**
     * The peer may RDMA Read the region through its STag (IBV_ACCESS_REMOTE_READ, RFC 5040 §5.2).
     * While a Read Response is in flight its bytes are sent from the region itself (zero copy):
     * see {@link MemoryRegion} for what a local write meanwhile does.
     */
    REMOTE_READ(4);

    /** The ibv_access_flags bit (1, 2 or 4), for OR-ing into a native access mask. */
    public final int ibvFlag;

    Access(int ibvFlag) {
        this.ibvFlag = ibvFlag;
    }
}
