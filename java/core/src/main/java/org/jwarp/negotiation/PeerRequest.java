package org.jwarp.negotiation;

import org.jwarp.ground.RtrType;
import java.util.Set;

/**
 * An initiator's MPA Request as the responder's ULP sees it before accepting (RFC 5044 §7.1.2,
 * RFC 6581 §9.1 "reported to the ULP"): the rdma_cm CONNECT_REQUEST view.
 *
 * @param revision        the request's Rev
 * @param enhanced        whether it carried RFC 6581 §9 enhanced data (and this responder reads it)
 * @param peerToPeer      A
 * @param offeredRtrTypes the RTR types offered (empty when A is 0: B/C/D are ignored then)
 * @param ird             the initiator's IRD, or {@link NegotiationOutcome#NOT_EXCHANGED}
 * @param ord             the initiator's ORD, or {@link NegotiationOutcome#NOT_EXCHANGED}
 * @param crc             C
 * @param markers         M
 * @param ulpPrivateData  the ULP private data
 */
public record PeerRequest(int revision, boolean enhanced, boolean peerToPeer, Set<RtrType> offeredRtrTypes,
                          int ird, int ord, boolean crc, boolean markers, byte[] ulpPrivateData) {
    public PeerRequest {
        offeredRtrTypes = Set.copyOf(offeredRtrTypes);
        ulpPrivateData = ulpPrivateData == null ? new byte[0] : ulpPrivateData.clone();
    }

    @Override
    public byte[] ulpPrivateData() {
        return ulpPrivateData.clone();
    }
}
