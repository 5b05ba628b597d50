package org.jwarp.verbs;

/**
 * Identity and limits of a device. {@code maxQpRdAtom} bounds the IRD a QP can offer and
 * {@code maxQpInitRdAtom} the ORD (ibv_device_attr.max_qp_rd_atom / max_qp_init_rd_atom), the
 * resources RFC 6581 §9.1 negotiates.
 */
public record DeviceInfo(String name, Transport transport, int maxQpRdAtom, int maxQpInitRdAtom,
                         int maxQpWr, int maxCqe, long maxMrSize) {
    /** Link protocol under the verbs. */
    public enum Transport {
        /** iWARP: MPA/DDP/RDMAP over TCP (RNICs, siw, the embedded provider). */
        IWARP,
        /** RoCE (rxe and RoCE NICs): no MPA, negotiation data travels in ULP private data. */
        ROCE,
        /** InfiniBand. */
        INFINIBAND
    }
}
