package org.jwarp.mpa;

import java.nio.ByteBuffer;

/**
 * MPA markers on transmit, RFC 5044 §4.3: a 4-byte marker every 512 bytes of the TCP stream,
 * counted from the first byte of the first FPDU. A marker is {@code Reserved(16) = 0 | FPDUPTR(16)},
 * FPDUPTR being the number of stream bytes from the ULPDU_Length field of the FPDU the marker
 * falls in to the marker. A marker that falls directly before an FPDU's length field has FPDUPTR
 * 0 and belongs to that FPDU. Markers are not covered by the CRC and not counted in ULPDU_Length.
 *
 * <p>Linux siw does not support markers; they are only used when both peers negotiate M.
 */
public final class MarkerInserter {
    /** Marker spacing in stream bytes. */
    public static final int MARKER_INTERVAL = 512;
    /** Marker size. */
    public static final int MARKER_LENGTH = 4;

    private long streamOffset;

    /** Stream bytes written so far (markers included). */
    public long streamOffset() {
        return streamOffset;
    }

    /**
     * Copies one whole FPDU of {@code length} bytes from {@code src[srcIndex..]} to
     * {@code dst[dstIndex..]}, inserting markers where the stream position requires. Returns the
     * bytes written, at most {@link Fpdu#maxWireLength}-sized; the caller guarantees the room.
     */
    public int copyFpdu(ByteBuffer src, int srcIndex, int length, ByteBuffer dst, int dstIndex) {
        if (length > 0xFFFF - MARKER_LENGTH * 130) {
            throw new IllegalArgumentException("FPDU of " + length + " bytes is too long for 16-bit marker pointers "
                    + "(RFC 5044 §4.3)");
        }
        int w = dstIndex;
        int copied = 0;
        long fpduStart = -1;
        while (copied < length) {
            int phase = (int) (streamOffset & (MARKER_INTERVAL - 1));
            if (phase == 0) {
                int ptr = copied == 0 ? 0 : (int) (streamOffset - fpduStart);
                dst.putInt(w, ptr & 0xFFFF);
                w += MARKER_LENGTH;
                streamOffset += MARKER_LENGTH;
                continue;
            }
            if (copied == 0) {
                fpduStart = streamOffset;
            }
            int n = Math.min(MARKER_INTERVAL - phase, length - copied);
            dst.put(w, src, srcIndex + copied, n);
            w += n;
            copied += n;
            streamOffset += n;
        }
        return w - dstIndex;
    }
}
