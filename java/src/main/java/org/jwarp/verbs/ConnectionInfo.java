package org.jwarp.verbs;

import java.net.InetSocketAddress;

/**
 * The outcome of connection setup as both sides see it. RFC 6581 §9.1 requires the peer's IRD and
 * ORD to be reported to the ULP: {@link #peerIrd()} and {@link #peerOrd()} are the values the peer
 * sent; {@link #ird()} and {@link #ord()} are what this side settled on (its ORD never exceeds the
 * peer's IRD after a successful negotiation).
 *
 * @param rtr         the RTR type used in the peer-to-peer model, or null in client-server mode
 * @param mpaRevision MPA revision in use (2 for RFC 6581 enhanced setup; 0 on transports without MPA)
 */
public record ConnectionInfo(InetSocketAddress local, InetSocketAddress remote, int ird, int ord,
                             int peerIrd, int peerOrd, boolean peerToPeer, RtrType rtr, boolean crc,
                             int mpaRevision, byte[] peerPrivateData) {
    public ConnectionInfo {
        peerPrivateData = peerPrivateData == null ? new byte[0] : peerPrivateData.clone();
    }

    @Override
    public byte[] peerPrivateData() {
        return peerPrivateData.clone();
    }
}
