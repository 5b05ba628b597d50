package org.jwarp.negotiation;

import org.jwarp.ground.RtrType;
import java.util.HexFormat;
import java.util.Objects;
import org.jwarp.ground.TermCode;
import org.jwarp.mpa.MpaFrame;

/**
 * The result of MPA connection setup for one side, RFC 5044 §7.1 and RFC 6581 §9. RFC 6581 §9.1
 * requires the peer's IRD and ORD to be reported to the ULP: {@link #peerIrd()} and
 * {@link #peerOrd()} are the values the peer sent (also on rejection), {@link #NOT_EXCHANGED} when
 * no enhanced data arrived. {@link #ird()} and {@link #ord()} are this side's final values; after
 * an established enhanced negotiation each side's ORD is at most the other side's IRD, unless one
 * of them is {@code 0x3FFF} (no automatic negotiation).
 *
 * @param status          how setup ended
 * @param revision        MPA revision of the exchange (the Reply's when there was one)
 * @param enhanced        whether both frames carried RFC 6581 §9 enhanced data
 * @param peerToPeer      whether the peer-to-peer (RTR) model is in use
 * @param rtr             the RTR type chosen, or null
 * @param crc             whether FPDUs carry CRC32c (either frame set C, RFC 5044 §7.1.1)
 * @param markersToPeer   whether this side must insert markers (the peer set M)
 * @param markersFromPeer whether the peer inserts markers (this side set M)
 * @param ird             this side's final IRD
 * @param ord             this side's final ORD
 * @param peerIrd         the peer's IRD as sent, or {@link #NOT_EXCHANGED}
 * @param peerOrd         the peer's ORD as sent, or {@link #NOT_EXCHANGED}
 * @param term            the MPA TERM sent or received, or null
 * @param peerPrivateData the peer's ULP private data (after enhanced data); empty when none
 * @param reason          a human-readable explanation naming the RFC rule
 */
public record NegotiationOutcome(NegotiationStatus status, int revision, boolean enhanced, boolean peerToPeer,
                                 RtrType rtr, boolean crc, boolean markersToPeer, boolean markersFromPeer,
                                 int ird, int ord, int peerIrd, int peerOrd, TermCode term,
                                 byte[] peerPrivateData, String reason) {

    /** {@link #peerIrd()}/{@link #peerOrd()} when the peer sent no enhanced data. */
    public static final int NOT_EXCHANGED = -1;

    public NegotiationOutcome {
        Objects.requireNonNull(status, "status");
        peerPrivateData = peerPrivateData == null ? new byte[0] : peerPrivateData.clone();
        reason = reason == null ? "" : reason;
    }

    /**
     * A setup that ended before the two sides agreed: nothing enhanced, no peer-to-peer, RTR, CRC
     * or markers to the peer in use; {@code request} is the Request sent or received, or null.
     */
    static NegotiationOutcome unagreed(NegotiationStatus status, MpaFrame request, boolean markersFromPeer, int ird,
            int ord, PeerRequest peer, TermCode term, String why) {
        return new NegotiationOutcome(status, request != null ? request.revision() : 0, false, false, null, false, false,
                markersFromPeer, ird, ord, peer != null ? peer.ird() : NOT_EXCHANGED,
                peer != null ? peer.ord() : NOT_EXCHANGED, term, peer != null ? peer.ulpPrivateData() : null, why);
    }

    @Override
    public byte[] peerPrivateData() {
        return peerPrivateData.clone();
    }

    public boolean isEstablished() {
        return status == NegotiationStatus.ESTABLISHED;
    }

    /** Whether the peer's IRD/ORD arrived (in enhanced data). */
    public boolean peerValuesKnown() {
        return peerIrd != NOT_EXCHANGED;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof NegotiationOutcome n && n.status == status && n.revision == revision
                && n.enhanced == enhanced && n.peerToPeer == peerToPeer && n.rtr == rtr && n.crc == crc
                && n.markersToPeer == markersToPeer && n.markersFromPeer == markersFromPeer && n.ird == ird
                && n.ord == ord && n.peerIrd == peerIrd && n.peerOrd == peerOrd && Objects.equals(n.term, term)
                && java.util.Arrays.equals(n.peerPrivateData, peerPrivateData) && n.reason.equals(reason);
    }

    @Override
    public int hashCode() {
        return Objects.hash(status, rtr, ird, ord, peerIrd, peerOrd, term);
    }

    @Override
    public String toString() {
        return "NegotiationOutcome{" + status.jsonName() + ", rev=" + revision + ", enhanced=" + enhanced
                + ", p2p=" + peerToPeer + ", rtr=" + (rtr == null ? "none" : rtr.wireName()) + ", crc=" + crc
                + ", ird=" + ird + ", ord=" + ord + ", peerIrd=" + peerIrd + ", peerOrd=" + peerOrd
                + ", term=" + term + ", peerPd=" + HexFormat.of().formatHex(peerPrivateData)
                + (reason.isEmpty() ? "" : ", reason=" + reason) + "}";
    }
}
