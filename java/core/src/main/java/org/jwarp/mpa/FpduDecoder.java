package org.jwarp.mpa;

import java.nio.ByteBuffer;
import org.jwarp.ground.TermCode;

/**
 * Finds FPDU boundaries in a TCP byte stream that arrives in arbitrary chunks, RFC 5044 §4,
 * verifies the CRC (§4.4) when negotiated, strips and checks markers (§4.3) when negotiated, and
 * hands each ULPDU to an {@link FpduHandler}.
 *
 * <p>Without markers, an FPDU that lies wholly inside the chunk is handed over in place (no copy);
 * a FPDU split across chunks is gathered in one direct buffer of {@link Fpdu#MAX_FPDU_LENGTH}
 * bytes, allocated when the first split FPDU (or, with markers, the first FPDU) arrives and reused
 * from then on: a stream that only ever sees whole FPDUs never holds one (at 1,000 QPs those 64 KiB
 * per stream were most of a QP's direct memory). A CRC mismatch is
 * reported as {@link TermCode#MPA_CRC_ERROR} (2/0/2), a marker whose FPDUPTR does not point at the
 * current FPDU as {@link TermCode#MPA_MARKER_OR_FPDU_ERROR} (2/0/3); after either the decoder
 * discards all further bytes. Nothing else leaves this class: arbitrary input produces only
 * handler calls.
 *
 * <p>The receiver does not enforce the MULPDU (siw does not either; over loopback siw sends
 * FPDUs of about 64 KiB). Not thread-safe.
 */
public final class FpduDecoder {
    private final boolean crcEnabled;
    private final boolean markersEnabled;
    private final FpduHandler handler;
    private final Crc32c crc = new Crc32c();
    /** Gather buffer for FPDUs split across chunks; null until the first one. */
    private ByteBuffer gather;

    private int gathered;
    private int needed = Fpdu.LENGTH_FIELD_SIZE;
    private boolean failed;
    private long fpdus;

    // Marker state (RFC 5044 §4.3), offsets in raw stream bytes.
    private long streamOffset;
    private long fpduStreamStart;
    private long markerStart;
    private int markerBytes = -1;
    private int markerValue;

    public FpduDecoder(boolean crcEnabled, boolean markersEnabled, FpduHandler handler) {
        this.crcEnabled = crcEnabled;
        this.markersEnabled = markersEnabled;
        this.handler = handler;
    }

    /** True once a CRC or framing error was reported. */
    public boolean failed() {
        return failed;
    }

    /** Number of FPDUs handed to the handler. */
    public long fpduCount() {
        return fpdus;
    }

    /** True when part of an FPDU (or marker) is buffered, waiting for more bytes. */
    public boolean hasPartial() {
        return gathered > 0 || markerBytes >= 0;
    }

    /** The gather buffer, or null before the first split FPDU (tests). */
    ByteBuffer gatherBuffer() {
        return gather;
    }

    private ByteBuffer gather() {
        ByteBuffer g = gather;
        if (g == null) {
            g = ByteBuffer.allocateDirect(Fpdu.MAX_FPDU_LENGTH);
            gather = g;
        }
        return g;
    }

    /** Consumes every remaining byte of {@code src} (its position ends at its limit). */
    public void feed(ByteBuffer src) {
        if (failed) {
            src.position(src.limit());
            return;
        }
        if (markersEnabled) {
            feedWithMarkers(src);
        } else {
            feedPlain(src);
        }
        if (failed) {
            src.position(src.limit());
        }
    }

    private void feedPlain(ByteBuffer src) {
        final int end = src.limit();
        while (!failed && src.position() < end) {
            int pos = src.position();
            if (gathered == 0 && end - pos >= Fpdu.LENGTH_FIELD_SIZE) {
                int ulpdu = src.getShort(pos) & 0xFFFF;
                int total = Fpdu.fpduLength(ulpdu);
                if (end - pos >= total) {
                    src.position(pos + total);
                    deliver(src, pos, ulpdu);
                    continue;
                }
            }
            int take = Math.min(needed - gathered, end - pos);
            gather().put(gathered, src, pos, take);
            src.position(pos + take);
            gathered += take;
            stepGathered();
        }
    }

    private void feedWithMarkers(ByteBuffer src) {
        while (!failed && src.hasRemaining()) {
            if (markerBytes >= 0) {
                markerValue = (markerValue << 8) | (src.get() & 0xFF);
                streamOffset++;
                if (++markerBytes == MarkerInserter.MARKER_LENGTH) {
                    markerBytes = -1;
                    checkMarker();
                }
                continue;
            }
            int phase = (int) (streamOffset & (MarkerInserter.MARKER_INTERVAL - 1));
            if (phase == 0) {
                markerBytes = 0;
                markerValue = 0;
                markerStart = streamOffset;
                continue;
            }
            if (gathered == 0) {
                fpduStreamStart = streamOffset;
            }
            int pos = src.position();
            int take = Math.min(Math.min(MarkerInserter.MARKER_INTERVAL - phase, src.remaining()), needed - gathered);
            gather().put(gathered, src, pos, take);
            src.position(pos + take);
            streamOffset += take;
            gathered += take;
            stepGathered();
        }
    }

    private void checkMarker() {
        int ptr = markerValue & 0xFFFC; // RFC 5044 §4.3: the two low bits are treated as zero
        long expected = gathered == 0 ? 0 : markerStart - fpduStreamStart;
        if (ptr != expected) {
            fail(TermCode.MPA_MARKER_OR_FPDU_ERROR, "marker at stream offset " + markerStart + " has FPDUPTR " + ptr
                    + ", expected " + expected + " (RFC 5044 §4.3)");
        }
    }

    private void stepGathered() {
        if (gathered < needed) {
            return;
        }
        if (needed == Fpdu.LENGTH_FIELD_SIZE) {
            needed = Fpdu.fpduLength(gather.getShort(0) & 0xFFFF);
            return;
        }
        int ulpdu = gather.getShort(0) & 0xFFFF;
        gathered = 0;
        needed = Fpdu.LENGTH_FIELD_SIZE;
        deliver(gather, 0, ulpdu);
    }

    private void deliver(ByteBuffer buf, int start, int ulpdu) {
        if (crcEnabled) {
            int crcAt = start + Fpdu.ULPDU_OFFSET + ulpdu + Fpdu.padLength(ulpdu);
            int expected = crc.compute(buf, start, crcAt - start);
            int actual = Crc32c.getWire(buf, crcAt);
            if (expected != actual) {
                fail(TermCode.MPA_CRC_ERROR, String.format("FPDU CRC 0x%08x does not match computed 0x%08x "
                        + "(RFC 5044 §4.4)", actual, expected));
                return;
            }
        }
        fpdus++;
        handler.onUlpdu(buf, start + Fpdu.ULPDU_OFFSET, ulpdu);
    }

    private void fail(TermCode code, String detail) {
        failed = true;
        handler.onFpduError(code, detail);
    }
}
