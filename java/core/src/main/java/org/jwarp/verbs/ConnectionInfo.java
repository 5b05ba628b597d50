package org.jwarp.verbs;

import java.net.InetSocketAddress;
import org.jwarp.ground.RtrType;

/**
 * The outcome of connection setup as both sides see it. RFC 6581 §9.1 requires the peer's IRD and
 * ORD to be reported to the ULP: {@link #peerIrd()} and {@link #peerOrd()} are the values the peer
 * sent; {@link #ird()} and {@link #ord()} are what this side settled on (its ORD never exceeds the
 * peer's IRD after a successful negotiation).
 *
 * @param local       this side's address of the connection
 * @param remote      the peer's address
 * @param ird         the inbound RDMA Read queue depth this side settled on (RFC 6581 §9.1): Read
 *                    Requests of the peer this side serves at once
 * @param ord         the outbound RDMA Read queue depth this side settled on: Reads this side has in
 *                    flight at once; later Reads wait in the send queue
 * @param peerIrd     the IRD the peer sent in its MPA frame, or -1 when it sent no enhanced data
 * @param peerOrd     the ORD the peer sent in its MPA frame, or -1 when it sent no enhanced data
 * @param peerToPeer  whether the peer-to-peer model with an RTR is in use (RFC 6581 §9.2)
 * @param crc         whether MPA CRCs are in use on the stream (RFC 5044 §7.1.1 C bit, both sides)
 * @param peerPrivateData the peer's ULP private data, without the enhanced data (empty when none)
 * @param rtr         the RTR type used in the peer-to-peer model, or null in client-server mode
 * @param mpaRevision MPA revision in use (2 for RFC 6581 enhanced setup; 0 on transports without MPA)
 * @param mpaRequest  the MPA Request frame as sent or received (RFC 5044 §7.1.1), empty where the
 *                    provider does not see it (on DiSNI the kernel's MPA layer exchanges it)
 * @param mpaReply    the MPA Reply frame as sent or received, empty where the provider does not see it
 */
public record ConnectionInfo(InetSocketAddress local, InetSocketAddress remote, int ird, int ord,
                             int peerIrd, int peerOrd, boolean peerToPeer, RtrType rtr, boolean crc,
                             int mpaRevision, byte[] peerPrivateData, byte[] mpaRequest, byte[] mpaReply) {
    /**
     * Copies the arrays (null becomes empty), so the record is immutable.
     *
     * @param local           this side's address of the connection
     * @param remote          the peer's address
     * @param ird             the IRD this side settled on
     * @param ord             the ORD this side settled on
     * @param peerIrd         the IRD the peer sent, or -1
     * @param peerOrd         the ORD the peer sent, or -1
     * @param peerToPeer      whether the peer-to-peer model is in use
     * @param rtr             the RTR type used, or null
     * @param crc             whether MPA CRCs are in use
     * @param mpaRevision     MPA revision in use
     * @param peerPrivateData the peer's ULP private data
     * @param mpaRequest      the MPA Request frame, or null
     * @param mpaReply        the MPA Reply frame, or null
     */
    public ConnectionInfo {
        peerPrivateData = peerPrivateData == null ? new byte[0] : peerPrivateData.clone();
        mpaRequest = mpaRequest == null ? new byte[0] : mpaRequest.clone();
        mpaReply = mpaReply == null ? new byte[0] : mpaReply.clone();
    }

    /** {@return a copy of the MPA Request frame, empty where the provider does not see it} */
    @Override
    public byte[] mpaRequest() {
        return mpaRequest.clone();
    }

    /** {@return a copy of the MPA Reply frame, empty where the provider does not see it} */
    @Override
    public byte[] mpaReply() {
        return mpaReply.clone();
    }

    /** {@return a copy of the peer's ULP private data, empty when it sent none} */
    @Override
    public byte[] peerPrivateData() {
        return peerPrivateData.clone();
    }
}
