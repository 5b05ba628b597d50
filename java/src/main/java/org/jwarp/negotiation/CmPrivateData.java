package org.jwarp.negotiation;

import java.nio.ByteBuffer;
import java.util.Objects;
import org.jwarp.mpa.EnhancedConnectionData;
import org.jwarp.mpa.MpaDecodeException;
import org.jwarp.mpa.MpaFrame;
import org.jwarp.mpa.MpaFrameLimits;
import org.jwarp.mpa.MpaRequestReplyFlyweight;

/**
 * Carries the RFC 6581 §9 negotiation in connection-manager private data where no MPA frame
 * exists (rdma_cm over RoCE/InfiniBand): the private data is the 4 bytes of
 * {@link EnhancedConnectionData} followed by the ULP's private data, exactly the private-data
 * part of an enhanced MPA frame. {@link #toPrivateData(MpaFrame)} turns an engine's frame into
 * those bytes, {@link #toFrame} turns received bytes back into the frame the engines consume.
 *
 * <p>Never use this over iWARP: there the RNIC's MPA layer adds the enhanced data itself.
 */
public final class CmPrivateData {
    private CmPrivateData() {
    }

    /**
     * The private data for an enhanced frame: enhanced data, then ULP private data.
     *
     * @throws IllegalArgumentException when the frame carries no enhanced data
     */
    public static byte[] toPrivateData(MpaFrame frame) {
        Objects.requireNonNull(frame, "frame");
        if (!frame.enhanced()) {
            throw new IllegalArgumentException("MPA S: only enhanced frames map onto CM private data (RFC 6581 §9)");
        }
        byte[] ulp = frame.ulpPrivateData();
        byte[] out = new byte[EnhancedConnectionData.LENGTH + ulp.length];
        frame.enhancedData().put(ByteBuffer.wrap(out), 0);
        System.arraycopy(ulp, 0, out, EnhancedConnectionData.LENGTH, ulp.length);
        return out;
    }

    /**
     * The enhanced (Rev 2) frame equivalent of received CM private data.
     *
     * @param kind        REQUEST for a CONNECT_REQUEST event, REPLY for ESTABLISHED/REJECTED
     * @param reject      whether the CM reported a rejection (R=1)
     * @param privateData the event's private data
     * @param limits      private-data limits
     * @throws MpaDecodeException when fewer than 4 bytes arrived or the limits are exceeded
     */
    public static MpaFrame toFrame(MpaFrame.Kind kind, boolean reject, byte[] privateData, MpaFrameLimits limits)
            throws MpaDecodeException {
        Objects.requireNonNull(kind, "kind");
        byte[] pd = privateData == null ? new byte[0] : privateData;
        if (pd.length < EnhancedConnectionData.LENGTH) {
            throw new MpaDecodeException("CM private data", pd.length
                    + " bytes, too short for the 4 bytes of enhanced data", "RFC 6581 §9");
        }
        if (pd.length > limits.maxPrivateDataLength()) {
            throw new MpaDecodeException("CM private data", pd.length + " bytes exceed the limit of "
                    + limits.maxPrivateDataLength(), "RFC 5044 §7.1.1");
        }
        EnhancedConnectionData ed = EnhancedConnectionData.get(ByteBuffer.wrap(pd), 0);
        if (!ed.peerToPeer()) {
            ed = new EnhancedConnectionData(false, false, false, false, ed.ird(), ed.ord()); // §9.2: B/C/D ignored
        }
        byte[] ulp = java.util.Arrays.copyOfRange(pd, EnhancedConnectionData.LENGTH, pd.length);
        MpaFrame.Builder b = kind == MpaFrame.Kind.REQUEST ? MpaFrame.request() : MpaFrame.reply().reject(reject);
        return b.revision(MpaRequestReplyFlyweight.REVISION_2).enhancedData(ed).ulpPrivateData(ulp)
                .limits(MpaFrameLimits.RFC).build();
    }
}
