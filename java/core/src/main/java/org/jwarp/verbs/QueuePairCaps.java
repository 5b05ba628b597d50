package org.jwarp.verbs;

/**
 * What a queue pair was granted at creation ({@code struct ibv_qp_cap} after
 * {@code rdma_create_qp}), which may exceed what was asked: queue depths, scatter-gather entries
 * per send WR, per receive WR and per RDMA Read sink, and the largest inline payload. RFC 5040 §8
 * leaves these resources to the RNIC; posts beyond them are refused with a
 * {@link WorkRequestException}.
 *
 * @param maxSendWr     send-queue slots
 * @param maxRecvWr     receive-queue slots
 * @param maxSendSge    SGEs per Send / RDMA Write
 * @param maxRecvSge    SGEs per receive
 * @param maxSgeRd      SGEs per RDMA Read sink (siw: 1; an RDMA Read Request names one sink STag, RFC 5040 §4.4)
 * @param maxInlineData bytes an inline Send/Write may carry (0: no inline)
 */
public record QueuePairCaps(int maxSendWr, int maxRecvWr, int maxSendSge, int maxRecvSge, int maxSgeRd,
                            int maxInlineData) {
}
