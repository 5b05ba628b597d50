package org.jwarp.soft.cm;

import java.util.EnumSet;
import java.util.Set;

import org.jwarp.ground.RtrType;
import org.jwarp.mpa.EnhancedConnectionData;
import org.jwarp.mpa.MpaFrameLimits;
import org.jwarp.negotiation.InitiatorConfig;
import org.jwarp.negotiation.ResponderConfig;
import org.jwarp.verbs.ConnectionParameters;

/**
 * rdma_cm's parameters onto the RFC 6581 negotiators: responder_resources = IRD, initiator_depth
 * = ORD (§9.1), peer-to-peer and RTR types (§9.2). Following the Linux siw interop rules, an
 * initiator always offers RFC 6581 enhanced data, offers CRC by default, and uses ORD ≥ 1 in P2P
 * mode when a Read RTR is offered.
 */
public final class CmParameters {
    /** IRD and ORD ceiling of every connection, the same as Linux siw's (SIW_MAX_IRD_QP / SIW_MAX_ORD_QP). */
    public static final int MAX_IRD_ORD = 128;

    private CmParameters() {
    }

    public static InitiatorConfig initiatorConfig(ConnectionParameters p) {
        int ord = p.ord();
        if (p.peerToPeer() && ord == 0 && p.rtrTypes().contains(RtrType.READ)) {
            ord = 1; // siw rule: a Read RTR takes one ORQ slot
        }
        int ird = deviceCapped(p.ird());
        InitiatorConfig.Builder b = InitiatorConfig.builder()
                .ird(ird)
                .ord(deviceCapped(ord))
                .maxIrd(ird == EnhancedConnectionData.NO_NEGOTIATION ? ird : MAX_IRD_ORD)
                .peerToPeer(p.peerToPeer())
                .rtrTypes(p.peerToPeer() ? p.rtrTypes() : Set.of())
                .enhanced(true)
                .crc(p.crc())
                .markers(false)
                .limits(MpaFrameLimits.RFC)
                .ulpPrivateData(p.privateData())
                // RFC 6581 §10: the Rev 1 retry only where unenhanced MPA works for the ULP (no RTR needed)
                .fallbackToUnenhanced(!p.peerToPeer());
        return b.build();
    }

    public static ResponderConfig responderConfig(ConnectionParameters p) {
        Set<RtrType> rtr = p.rtrTypes().isEmpty() ? EnumSet.allOf(RtrType.class) : p.rtrTypes();
        return ResponderConfig.builder()
                .maxIrd(deviceCapped(p.ird()))
                .ord(deviceCapped(p.ord()))
                .rtrTypes(rtr)
                .crc(p.crc())
                .markers(false)
                .limits(MpaFrameLimits.RFC)
                .ulpPrivateData(p.privateData())
                .build();
    }

    /**
     * RFC 6581 §9.1: the IRD/ORD put in a Request or Reply is what the data path enforces, so values
     * above the device's {@link #MAX_IRD_ORD} are lowered to it before they are
     * advertised; {@code 0x3FFF} (no automatic negotiation) passes unchanged.
     */
    public static int deviceCapped(int v) {
        return v == EnhancedConnectionData.NO_NEGOTIATION ? v : Math.min(v, MAX_IRD_ORD);
    }
}
