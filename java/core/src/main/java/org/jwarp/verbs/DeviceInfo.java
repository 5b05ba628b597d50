package org.jwarp.verbs;

/**
 * Identity and limits of a device, as {@code ibv_devinfo -v} shows them. {@code maxQpRdAtom}
 * bounds the IRD a QP can offer and {@code maxQpInitRdAtom} the ORD
 * (ibv_device_attr.max_qp_rd_atom / max_qp_init_rd_atom), the resources RFC 6581 §9.1
 * negotiates; {@code maxSge} / {@code maxSgeRd} bound the scatter-gather lists of send and receive
 * WRs / of RDMA Read sinks (RFC 5040 §5); {@code maxInlineData} is the largest inline payload a QP
 * of this device was granted when probed (the verbs report it per QP only). {@code streamBinding}
 * says whether {@link MemoryRegion#bindTo} can tie a region's STag to one connection (RFC 5041
 * §8.2 DDP Stream association): true on the soft provider; false where STags are scoped to a
 * protection domain only (DiSNI: the verbs offer no such binding without memory windows).
 *
 * <p>Immutable, so thread-safe.
 *
 * @param portState     state of the port the device was opened on
 * @param streamBinding whether {@link MemoryRegion#bindTo} is available (RFC 5041 §8.2)
 */
public record DeviceInfo(String name, Transport transport, int maxQpRdAtom, int maxQpInitRdAtom,
                         int maxQpWr, int maxCqe, long maxMrSize, int maxSge, int maxSgeRd, int maxInlineData,
                         PortState portState, boolean streamBinding) {
    /** Limits without SGE, inline and port information (one SGE, no inline, port active, no stream binding). */
    public DeviceInfo(String name, Transport transport, int maxQpRdAtom, int maxQpInitRdAtom, int maxQpWr, int maxCqe,
                      long maxMrSize) {
        this(name, transport, maxQpRdAtom, maxQpInitRdAtom, maxQpWr, maxCqe, maxMrSize, 1, 1, 0, PortState.ACTIVE,
                false);
    }

    /** A device whose STags are scoped to a protection domain only (no {@link MemoryRegion#bindTo}). */
    public DeviceInfo(String name, Transport transport, int maxQpRdAtom, int maxQpInitRdAtom, int maxQpWr, int maxCqe,
                      long maxMrSize, int maxSge, int maxSgeRd, int maxInlineData, PortState portState) {
        this(name, transport, maxQpRdAtom, maxQpInitRdAtom, maxQpWr, maxCqe, maxMrSize, maxSge, maxSgeRd, maxInlineData,
                portState, false);
    }

    /** Link protocol under the verbs. */
    public enum Transport {
        /** iWARP: MPA/DDP/RDMAP over TCP (RNICs, siw, the embedded provider). */
        IWARP,
        /** RoCE (rxe and RoCE NICs): no MPA, negotiation data travels in ULP private data. */
        ROCE,
        /** InfiniBand. */
        INFINIBAND
    }

    /** {@code enum ibv_port_state}, in its order. */
    public enum PortState {
        NOP, DOWN, INIT, ARMED, ACTIVE, ACTIVE_DEFER, UNKNOWN;

        /** The state of an {@code ibv_port_state} value. */
        public static PortState of(int ibv) {
            PortState[] v = values();
            return ibv >= 0 && ibv < UNKNOWN.ordinal() ? v[ibv] : UNKNOWN;
        }
    }
}
