package org.jwarp.negotiation;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;
import org.jwarp.mpa.EnhancedConnectionData;
import org.jwarp.mpa.MpaDecodeException;
import org.jwarp.mpa.MpaFrame;
import org.jwarp.mpa.MpaFrameLimits;
import org.jwarp.mpa.MpaRequestReplyFlyweight;

/**
 * Carries the RFC 6581 §9 negotiation in connection-manager private data where no MPA frame
 * exists (rdma_cm over RoCE/InfiniBand). Layout:
 *
 * <pre>
 *  0..3   enhanced data ({@link EnhancedConnectionData}: A, B, IRD / C, D, ORD; RFC 6581 §9)
 *  4      ULP private-data length, u8 ({@link #ULP_LENGTH_OFFSET})
 *  5..    the ULP's private data, exactly that many bytes
 *  ...    anything after it is transport padding and ignored
 * </pre>
 *
 * The explicit length exists because the IB CM pads REQ/REP/REJ private data to fixed sizes
 * (56/196/148 bytes through rdma_cm, RDMA_PS_TCP) with zeros and reports the padded length; the
 * ULP's own bytes may end in zeros too, so only a length can say where they end. The enhanced
 * data plus the ULP part is the private-data part of an enhanced MPA frame (RFC 6581 §6).
 * {@link #toPrivateData(MpaFrame)} turns an engine's frame into those bytes, {@link #toFrame} turns
 * received (possibly padded) bytes back into the frame the engines consume; decoding is strict: a
 * missing length byte or a length past the received bytes is an {@link MpaDecodeException} naming
 * the field.
 *
 * <p>Never use this over iWARP: there the RNIC's MPA layer adds the enhanced data itself.
 */
public final class CmPrivateData {
    /** Where the ULP private-data length byte sits (after the 4 bytes of enhanced data). */
    public static final int ULP_LENGTH_OFFSET = EnhancedConnectionData.LENGTH;
    /** Where the ULP's private data starts. */
    public static final int ULP_OFFSET = ULP_LENGTH_OFFSET + 1;
    /** Bytes this format adds in front of the ULP's private data: enhanced data and the length byte. */
    public static final int OVERHEAD = ULP_OFFSET;
    /** Longest ULP private data the u8 length field can describe. */
    public static final int MAX_ULP_LENGTH = 0xFF;

    private CmPrivateData() {
    }

    /**
     * The private data for an enhanced frame: enhanced data, the ULP length, the ULP's bytes.
     *
     * @throws IllegalArgumentException when the frame carries no enhanced data or more than
     *                                  {@link #MAX_ULP_LENGTH} bytes of ULP private data
     */
    public static byte[] toPrivateData(MpaFrame frame) {
        Objects.requireNonNull(frame, "frame");
        if (!frame.enhanced()) {
            throw new IllegalArgumentException("MPA S: only enhanced frames map onto CM private data (RFC 6581 §9)");
        }
        byte[] ulp = frame.ulpPrivateData();
        if (ulp.length > MAX_ULP_LENGTH) {
            throw new IllegalArgumentException("CM private data ULP length: " + ulp.length + " bytes exceed the u8 "
                    + "length field (" + MAX_ULP_LENGTH + ")");
        }
        byte[] out = new byte[OVERHEAD + ulp.length];
        frame.enhancedData().put(ByteBuffer.wrap(out), 0);
        out[ULP_LENGTH_OFFSET] = (byte) ulp.length;
        System.arraycopy(ulp, 0, out, ULP_OFFSET, ulp.length);
        return out;
    }

    /**
     * The enhanced (Rev 2) frame equivalent of received CM private data; bytes after the ULP's
     * (transport padding) are ignored.
     *
     * @param kind        REQUEST for a CONNECT_REQUEST event, REPLY for ESTABLISHED/REJECTED
     * @param reject      whether the CM reported a rejection (R=1)
     * @param privateData the event's private data, padded or not
     * @param limits      private-data limits (applied to the received length, padding included)
     * @throws MpaDecodeException when fewer than 4 bytes of enhanced data arrived, the ULP length
     *                            byte is missing or exceeds the bytes after it, or the limits are
     *                            exceeded
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
        if (pd.length < OVERHEAD) {
            throw new MpaDecodeException("CM private data ULP length", "missing: " + pd.length
                    + " bytes end right after the enhanced data", "RFC 6581 §9");
        }
        int len = pd[ULP_LENGTH_OFFSET] & 0xFF;
        if (len > pd.length - ULP_OFFSET) {
            throw new MpaDecodeException("CM private data ULP length", len + " exceeds the " + (pd.length - ULP_OFFSET)
                    + " bytes received after it", "RFC 6581 §9");
        }
        EnhancedConnectionData ed = EnhancedConnectionData.get(ByteBuffer.wrap(pd), 0);
        if (!ed.peerToPeer()) {
            ed = new EnhancedConnectionData(false, false, false, false, ed.ird(), ed.ord()); // §9.2: B/C/D ignored
        }
        byte[] ulp = Arrays.copyOfRange(pd, ULP_OFFSET, ULP_OFFSET + len);
        MpaFrame.Builder b = kind == MpaFrame.Kind.REQUEST ? MpaFrame.request() : MpaFrame.reply().reject(reject);
        return b.revision(MpaRequestReplyFlyweight.REVISION_2).enhancedData(ed).ulpPrivateData(ulp)
                .limits(MpaFrameLimits.RFC).build();
    }
}
