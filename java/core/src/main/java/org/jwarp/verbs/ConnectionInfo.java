package org.jwarp.verbs;

import java.net.InetSocketAddress;
import org.jwarp.ground.RtrType;

/**
 * The outcome of connection setup as both sides see it. RFC 6581 §9.1 requires the peer's IRD and
 * ORD to be reported to the ULP: {@link #peerIrd()} and {@link #peerOrd()} are the values the peer
 * sent; {@link #ird()} and {@link #ord()} are what this side settled on (its ORD never exceeds the
 * peer's IRD after a successful negotiation).
 *
 * @param rtr         the RTR type used in the peer-to-peer model, or null in client-server mode
 * @param mpaRevision MPA revision in use (2 for RFC 6581 enhanced setup; 0 on transports without MPA)
 * @param mpaRequest  the MPA Request frame as sent or received (RFC 5044 §7.1.1), empty where the
 *                    provider does not see it (on DiSNI the kernel's MPA layer exchanges it)
 * @param mpaReply    the MPA Reply frame as sent or received, empty where the provider does not see it
 */
public record ConnectionInfo(InetSocketAddress local, InetSocketAddress remote, int ird, int ord,
                             int peerIrd, int peerOrd, boolean peerToPeer, RtrType rtr, boolean crc,
                             int mpaRevision, byte[] peerPrivateData, byte[] mpaRequest, byte[] mpaReply) {
    public ConnectionInfo {
        peerPrivateData = peerPrivateData == null ? new byte[0] : peerPrivateData.clone();
        mpaRequest = mpaRequest == null ? new byte[0] : mpaRequest.clone();
        mpaReply = mpaReply == null ? new byte[0] : mpaReply.clone();
    }

    @Override
    public byte[] mpaRequest() {
        return mpaRequest.clone();
    }

    @Override
    public byte[] mpaReply() {
        return mpaReply.clone();
    }

    @Override
    public byte[] peerPrivateData() {
        return peerPrivateData.clone();
    }
}
