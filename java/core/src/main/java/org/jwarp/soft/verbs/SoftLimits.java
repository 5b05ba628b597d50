package org.jwarp.soft.verbs;

/**
 * The soft device's limits that its verbs objects enforce (published as {@code SoftProvider}'s
 * constants and in its {@code DeviceInfo}).
 */
public final class SoftLimits {
    /** Work requests per queue (send, receive, shared receive). */
    public static final int MAX_QP_WR = 16384;
    /** Scatter-gather entries per Send/Write and per receive. */
    public static final int MAX_SGE = 16;
    /** Entries per RDMA Read sink: a Read Request names one sink STag and TO (RFC 5040 §4.4), as in siw. */
    public static final int MAX_SGE_RD = 1;
    /** Largest inline payload a QP may ask for (siw grants 80 bytes; the soft provider copies into per-slot buffers). */
    public static final int MAX_INLINE_DATA = 256;
    /**
     * Largest region (max_mr_size): a region is one direct {@link java.nio.ByteBuffer}, so at most
     * {@link Integer#MAX_VALUE} bytes; {@link SoftProtectionDomain#allocate} refuses more.
     */
    public static final long MAX_MR_SIZE = Integer.MAX_VALUE;

    private SoftLimits() {
    }
}
