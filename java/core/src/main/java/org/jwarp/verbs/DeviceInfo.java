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
 * @param name            the device's name ({@code soft}; {@code siw0}, {@code rxe0} or the RNIC's)
 * @param transport       the link protocol under the verbs
 * @param maxQpRdAtom     {@code max_qp_rd_atom}: the largest IRD a QP can offer (RFC 6581 §9.1)
 * @param maxQpInitRdAtom {@code max_qp_init_rd_atom}: the largest ORD a QP can use
 * @param maxQpWr         {@code max_qp_wr}: the deepest send or receive queue
 * @param maxCqe          {@code max_cqe}: the most completions one CQ holds
 * @param maxMrSize       {@code max_mr_size}: the largest region, in bytes
 * @param maxSge          {@code max_sge}: SGEs per send or receive work request
 * @param maxSgeRd        {@code max_sge_rd}: SGEs per RDMA Read sink
 * @param maxInlineData   the largest inline payload a probed QP was granted (0: no inline)
 * @param portState       state of the port the device was opened on
 * @param streamBinding   whether {@link MemoryRegion#bindTo} is available (RFC 5041 §8.2)
 */
public record DeviceInfo(String name, Transport transport, int maxQpRdAtom, int maxQpInitRdAtom,
                         int maxQpWr, int maxCqe, long maxMrSize, int maxSge, int maxSgeRd, int maxInlineData,
                         PortState portState, boolean streamBinding) {
    /**
     * Limits without SGE, inline and port information (one SGE, no inline, port active, no stream binding).
     *
     * @param name            the device's name
     * @param transport       the link protocol
     * @param maxQpRdAtom     the largest IRD
     * @param maxQpInitRdAtom the largest ORD
     * @param maxQpWr         the deepest work queue
     * @param maxCqe          the most completions per CQ
     * @param maxMrSize       the largest region, in bytes
     */
    public DeviceInfo(String name, Transport transport, int maxQpRdAtom, int maxQpInitRdAtom, int maxQpWr, int maxCqe,
                      long maxMrSize) {
        this(name, transport, maxQpRdAtom, maxQpInitRdAtom, maxQpWr, maxCqe, maxMrSize, 1, 1, 0, PortState.ACTIVE,
                false);
    }

    /**
     * A device whose STags are scoped to a protection domain only (no {@link MemoryRegion#bindTo}).
     *
     * @param name            the device's name
     * @param transport       the link protocol
     * @param maxQpRdAtom     the largest IRD
     * @param maxQpInitRdAtom the largest ORD
     * @param maxQpWr         the deepest work queue
     * @param maxCqe          the most completions per CQ
     * @param maxMrSize       the largest region, in bytes
     * @param maxSge          SGEs per send or receive work request
     * @param maxSgeRd        SGEs per RDMA Read sink
     * @param maxInlineData   the largest inline payload
     * @param portState       state of the port
     */
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
        /** IBV_PORT_NOP: no state change. */
        NOP,
        /** IBV_PORT_DOWN: the link is down. */
        DOWN,
        /** IBV_PORT_INIT: the link is up, the port not yet configured. */
        INIT,
        /** IBV_PORT_ARMED: configured, not yet active. */
        ARMED,
        /** IBV_PORT_ACTIVE: usable (the soft provider's port always is). */
        ACTIVE,
        /** IBV_PORT_ACTIVE_DEFER: active, with deferred errors. */
        ACTIVE_DEFER,
        /** A value outside {@code enum ibv_port_state}. */
        UNKNOWN;

        /**
         * The state of an {@code ibv_port_state} value.
         *
         * @param ibv an {@code ibv_port_state} number
         * @return its state, {@link #UNKNOWN} for a number outside the enum
         */
        public static PortState of(int ibv) {
            PortState[] v = values();
            return ibv >= 0 && ibv < UNKNOWN.ordinal() ? v[ibv] : UNKNOWN;
        }
    }
}
