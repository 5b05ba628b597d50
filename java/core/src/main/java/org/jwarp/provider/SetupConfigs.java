package org.jwarp.provider;

import java.util.EnumSet;
import org.jwarp.ground.RtrType;
import org.jwarp.mpa.MpaFrameLimits;
import org.jwarp.negotiation.InitiatorConfig;
import org.jwarp.negotiation.ResponderConfig;
import org.jwarp.verbs.ConnectionParameters;

/**
 * RFC 6581 §9.1/§9.2: a consumer's {@link ConnectionParameters} (the rdma_cm
 * {@code rdma_conn_param} view) as the configurations of the negotiation engines. Shared by the
 * providers, so the verbs API exposes no engine type.
 */
public final class SetupConfigs {
    private SetupConfigs() {
    }

    /**
     * The initiator side of the RFC 6581 engine for these parameters.
     *
     * @param p      what the consumer asked for
     * @param maxIrd the device's largest IRD, up to which the engine may raise the IRD offered (§9.1)
     * @param limits the MPA private-data limits of the transport (e.g. {@link MpaFrameLimits#SIW})
     * @throws IllegalArgumentException when the private data does not fit {@code limits}
     */
    public static InitiatorConfig initiator(ConnectionParameters p, int maxIrd, MpaFrameLimits limits) {
        int ird = p.ird();
        return InitiatorConfig.builder().ird(ird).ord(p.ord())
                .maxIrd(ird == ConnectionParameters.NO_NEGOTIATION ? ConnectionParameters.NO_NEGOTIATION : Math.max(ird, maxIrd))
                .peerToPeer(p.peerToPeer()).rtrTypes(p.rtrTypes()).crc(p.crc()).ulpPrivateData(p.privateData())
                .limits(limits)
                // RFC 6581 §10: retry unenhanced after a close only "if that protocol works with the
                // application": a client-server ULP needs no RTR; a peer-to-peer one does.
                .fallbackToUnenhanced(!p.peerToPeer()).build();
    }

    /**
     * The responder side (accept parameters) of the RFC 6581 engine: the IRD granted is at most
     * {@link ConnectionParameters#ird()}, the ORD at most {@link ConnectionParameters#ord()}.
     *
     * @param p           what the consumer accepts
     * @param requiredOrd the least ORD the ULP accepts; below it the request is rejected (§9.1)
     * @param limits      the MPA private-data limits of the transport
     */
    public static ResponderConfig responder(ConnectionParameters p, int requiredOrd, MpaFrameLimits limits) {
        // client-server parameters (peerToPeer false, no RTR types) accept no peer-to-peer Request: a Reply
        // must echo A=1 (RFC 6581 §9.2); the RTR set the config needs for validation is then never offered
        return ResponderConfig.builder().maxIrd(p.ird()).ord(p.ord()).requiredOrd(requiredOrd).acceptP2p(p.peerToPeer())
                .rtrTypes(p.rtrTypes().isEmpty() ? EnumSet.of(RtrType.WRITE, RtrType.READ) : p.rtrTypes()).crc(p.crc())
                .ulpPrivateData(p.privateData()).limits(limits).build();
    }
}
