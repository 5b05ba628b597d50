package org.jwarp.rdmap;

import org.jwarp.mpa.Fpdu;

/**
 * The negotiated parameters of one RDMAP stream: the MULPDU (RFC 5044 §7.1; siw: MSS rounded down
 * to 8 minus 6), whether MPA CRC and markers are on (RFC 5044 §7.1 / RFC 6581), the IRD (inbound
 * RDMA Read Requests this side will hold) and ORD (outbound Read Requests it may have outstanding),
 * RFC 5040 §5.2 / RFC 6581 §4, and the local queue depths.
 *
 * @param mulpdu  largest DDP segment sent, 128..65535 (≤ 16384 with markers)
 * @param crc     MPA CRC32c negotiated (C bit)
 * @param markers MPA markers negotiated (M bit; siw never does)
 * @param ird     inbound Read Request limit, 0..16383
 * @param ord     outbound Read Request limit, 0..16383
 * @param sqDepth send queue entries (Send, Write, Read and RTR work requests not yet completed)
 * @param rqDepth receive buffers that can be posted at once
 */
public record RdmapSettings(int mulpdu, boolean crc, boolean markers, int ird, int ord, int sqDepth, int rqDepth) {

    /** Largest IRD/ORD value of the 14-bit RFC 6581 fields. */
    public static final int MAX_IRD_ORD = 0x3FFF;

    public RdmapSettings {
        int maxMulpdu = markers ? 16384 : Fpdu.MAX_ULPDU_LENGTH;
        if (mulpdu < 128 || mulpdu > maxMulpdu) {
            throw new IllegalArgumentException("MULPDU must be 128.." + maxMulpdu + " (RFC 5044 §7.1): " + mulpdu);
        }
        if (ird < 0 || ird > MAX_IRD_ORD || ord < 0 || ord > MAX_IRD_ORD) {
            throw new IllegalArgumentException("IRD/ORD must be 0.." + MAX_IRD_ORD + " (RFC 6581 §4): ird=" + ird
                    + " ord=" + ord);
        }
        if (sqDepth < 1 || rqDepth < 1) {
            throw new IllegalArgumentException("queue depths must be positive: sq=" + sqDepth + " rq=" + rqDepth);
        }
    }

    /** Settings from the TCP MSS the way siw sizes FPDUs (RFC 5044 §7.1). */
    public static RdmapSettings forMss(int mss, boolean crc, boolean markers, int ird, int ord, int sqDepth,
            int rqDepth) {
        return new RdmapSettings(Fpdu.mulpduForMss(mss, markers), crc, markers, ird, ord, sqDepth, rqDepth);
    }
}
