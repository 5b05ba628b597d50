package org.jwarp.mpa;

import java.nio.BufferOverflowException;
import java.nio.ByteBuffer;

/**
 * Builds MPA FPDUs in place, RFC 5044 §4: the caller writes the ULPDU (DDP header and payload)
 * at {@link #ulpduIndex(ByteBuffer)}, then {@link #finish} writes ULPDU_Length, zero pad and the
 * CRC32c (or zero when CRC is off, RFC 5044 §4.4 / §7.1) and advances the buffer's position past
 * the FPDU. With markers on, {@code finish} re-lays the FPDU with markers through a scratch buffer
 * (markers are a rarely used slow path; siw never negotiates them).
 *
 * <p>No allocation per FPDU. Not thread-safe: one encoder per connection and direction.
 */
public final class FpduEncoder {
    private final boolean crcEnabled;
    private final MarkerInserter markers;
    private final ByteBuffer scratch;
    private final Crc32c crc = new Crc32c();

    public FpduEncoder(boolean crcEnabled, boolean markersEnabled) {
        this.crcEnabled = crcEnabled;
        this.markers = markersEnabled ? new MarkerInserter() : null;
        this.scratch = markersEnabled ? ByteBuffer.allocateDirect(Fpdu.MAX_FPDU_LENGTH) : null;
    }

    public boolean crcEnabled() {
        return crcEnabled;
    }

    public boolean markersEnabled() {
        return markers != null;
    }

    /** Stream bytes needed in {@code dst} for an FPDU carrying a ULPDU of this length. */
    public int wireLength(int ulpduLength) {
        return Fpdu.maxWireLength(ulpduLength, markers != null);
    }

    /** Absolute index in {@code dst} at which the caller writes the ULPDU of the next FPDU. */
    public int ulpduIndex(ByteBuffer dst) {
        return dst.position() + Fpdu.ULPDU_OFFSET;
    }

    /**
     * Staging bytes a gathered FPDU needs in {@code dst} (markers off): length field, header, pad
     * and CRC; the pad is that of header + payload (RFC 5044 §4.2), so it depends on both.
     */
    public int gatheredStagingLength(int headerLength, int payloadLength) {
        return Fpdu.fpduLength(headerLength + payloadLength) - payloadLength;
    }

    /**
     * Completes a gathered FPDU (no markers): the caller wrote {@code headerLength} bytes of the
     * ULPDU at {@link #ulpduIndex}; its {@code payload} (the view's remaining bytes, the view
     * {@link FpduSink#reference} returned) stays outside {@code dst} and is spliced in by the sink
     * right after the header. As {@link #finishGathered(ByteBuffer, int, ByteBuffer, int, int)}
     * over the view's remaining bytes.
     */
    public int finishGathered(ByteBuffer dst, int headerLength, ByteBuffer payload) {
        return finishGathered(dst, headerLength, payload, payload.position(), payload.remaining());
    }

    /**
     * Completes a gathered FPDU (no markers) whose payload is {@code length} bytes of {@code src}
     * from absolute index {@code index}. {@code src} must be private to the caller (the CRC moves its
     * position and limit and restores them): a view such as {@link FpduSink#reference} returns,
     * never a buffer other threads use, like a registered region's. Writes
     * ULPDU_Length, then pad and CRC directly after the header, the CRC computed over length field,
     * header, payload and pad (RFC 5044 §4.4) exactly as {@link #finish} would for the contiguous
     * FPDU, so the stream bytes are identical. Returns the staging bytes written (length field,
     * header, pad, CRC: {@link #gatheredStagingLength}) and advances {@code dst}'s position past
     * them. Checks the room first and writes nothing when it is short, so a caller that registers
     * the payload with its sink after this returned never leaves a stale reference behind.
     */
    public int finishGathered(ByteBuffer dst, int headerLength, ByteBuffer src, int index, int length) {
        if (markers != null) {
            throw new IllegalStateException("gathered FPDUs need markers off (RFC 5044 §5 markers re-lay the FPDU)");
        }
        int n = length;
        int ulpduLength = headerLength + n;
        if (ulpduLength > Fpdu.MAX_ULPDU_LENGTH) {
            throw new FpduFormatException("ULPDU_Length " + ulpduLength + " outside 0..65535 (RFC 5044 §4.1)");
        }
        int start = dst.position();
        int pad = Fpdu.padLength(ulpduLength);
        int staged = Fpdu.ULPDU_OFFSET + headerLength + pad + Fpdu.CRC_SIZE;
        if (dst.limit() - start < staged) {
            throw new BufferOverflowException();
        }
        dst.putShort(start + Fpdu.LENGTH_OFFSET, (short) ulpduLength);
        int padAt = start + Fpdu.ULPDU_OFFSET + headerLength;
        for (int i = 0; i < pad; i++) {
            dst.put(padAt + i, (byte) 0);
        }
        int value = 0;
        if (crcEnabled) {
            crc.begin();
            crc.update(dst, start, Fpdu.ULPDU_OFFSET + headerLength);
            crc.update(src, index, n);
            crc.update(dst, padAt, pad);
            value = crc.value();
        }
        Crc32c.putWire(dst, padAt + pad, value);
        dst.position(start + staged);
        return staged;
    }

    /**
     * Completes the FPDU whose ULPDU of {@code ulpduLength} bytes the caller wrote at
     * {@link #ulpduIndex}; returns the stream bytes written and advances {@code dst}'s position.
     */
    public int finish(ByteBuffer dst, int ulpduLength) {
        if (ulpduLength < 0 || ulpduLength > Fpdu.MAX_ULPDU_LENGTH) {
            throw new FpduFormatException("ULPDU_Length " + ulpduLength + " outside 0..65535 (RFC 5044 §4.1)");
        }
        int start = dst.position();
        int pad = Fpdu.padLength(ulpduLength);
        dst.putShort(start + Fpdu.LENGTH_OFFSET, (short) ulpduLength);
        int padAt = start + Fpdu.ULPDU_OFFSET + ulpduLength;
        for (int i = 0; i < pad; i++) {
            dst.put(padAt + i, (byte) 0);
        }
        int crcAt = padAt + pad;
        int value = crcEnabled ? crc.compute(dst, start, crcAt - start) : 0;
        Crc32c.putWire(dst, crcAt, value);
        int fpduLength = crcAt + Fpdu.CRC_SIZE - start;
        if (markers == null) {
            dst.position(start + fpduLength);
            return fpduLength;
        }
        scratch.put(0, dst, start, fpduLength);
        int written = markers.copyFpdu(scratch, 0, fpduLength, dst, start);
        dst.position(start + written);
        return written;
    }
}
