package org.jwarp.mpa;

import java.nio.ByteBuffer;
import org.jwarp.ground.TermCode;

/**
 * Finds FPDU boundaries in a TCP byte stream that arrives in arbitrary chunks, RFC 5044 §4,
 * verifies the CRC (§4.4) when negotiated, strips and checks markers (§4.3) when negotiated, and
 * hands each ULPDU to an {@link FpduHandler}.
 *
 * <p>Without markers, an FPDU that lies wholly inside the chunk is handed over in place (no copy,
 * CRC checked before the handler sees it). An FPDU split across chunks takes one of two ways:
 * <ul>
 * <li>up to {@link #SMALL_GATHER} bytes (Read Requests, Terminates, small Sends) it is gathered in
 * a {@value #SMALL_GATHER}-byte heap buffer, allocated with the first split FPDU, and handed over
 * whole;
 * <li>a larger one is placed directly when the handler takes it ({@link FpduHandler#beginDirect}):
 * once the MPA length and the ULP header are in (gathered in the same small buffer) the handler
 * validates the header (RFC 5041 §7.1), then every later payload byte is handed to
 * {@link FpduHandler#placeDirect} straight from the chunk it arrived in, the CRC running over
 * those bytes as they pass; pad and CRC are checked at the end ({@link FpduHandler#endDirect}).
 * On a CRC mismatch the payload is already placed: the handler learns it by
 * {@link FpduHandler#onFpduError} with {@link TermCode#MPA_CRC_ERROR} and must treat the target's
 * bytes as undefined (the stream terminates; what siw does too).
 * </ul>
 * While such an FPDU waits for payload, the reader of the stream may read it straight into the
 * target instead ({@link #directTarget}, {@link #directRead}: the socket's read lands in the
 * registered buffer, the CRC runs over the placed bytes); what follows the payload (pad, CRC,
 * later FPDUs) is fed as usual.
 *
 * <p>Only a large split FPDU the handler does not take (its header fails a check, so it is gathered,
 * CRC-checked and handed over whole for the handler to report), and every FPDU with markers, use a
 * direct buffer of {@link Fpdu#MAX_FPDU_LENGTH} bytes, allocated at the first such FPDU: a stream
 * whose traffic is placed directly never holds one (at 1,000 QPs those 64 KiB per stream were
 * most of a QP's memory).
 *
 * <p>A CRC mismatch is reported as {@link TermCode#MPA_CRC_ERROR} (2/0/2), a marker whose FPDUPTR
 * does not point at the current FPDU as {@link TermCode#MPA_MARKER_OR_FPDU_ERROR} (2/0/3); after
 * either (or a handler's refusal of a directly placed piece) the decoder discards all further bytes.
 * Nothing else leaves this class: arbitrary input produces only handler calls.
 *
 * <p>The receiver does not enforce the MULPDU (siw does not either; over loopback siw sends
 * FPDUs of about 64 KiB). Not thread-safe; allocates nothing per FPDU.
 */
public final class FpduDecoder implements PlacementHandle {
    /** Split FPDUs up to this many bytes are gathered in the small buffer and handed over whole. */
    public static final int SMALL_GATHER = 512;
    /** Where the pad and CRC of a directly placed FPDU are gathered in the small buffer. */
    private static final int TAIL_AT = SMALL_GATHER - 8;

    // Phases of the plain (marker-free) path.
    private static final int IDLE = 0;
    private static final int LENGTH = 1;
    private static final int FIRST = 2;
    private static final int HEADER = 3;
    private static final int BODY = 4;
    private static final int DIRECT = 5;
    private static final int TAIL = 6;

    private final boolean crcEnabled;
    private final boolean markersEnabled;
    private final FpduHandler handler;
    private final Crc32c crc = new Crc32c();
    /** Gathers small split FPDUs and the headers and tails of direct ones; null until the first. */
    private ByteBuffer small;
    /** Gathers what the small buffer cannot (see the class comment); null until needed. */
    private ByteBuffer big;
    /** The buffer the current FPDU is gathered in. */
    private ByteBuffer gather;

    private int phase = IDLE;
    private int gathered;
    private int needed = Fpdu.LENGTH_FIELD_SIZE;
    private int ulpdu;
    private int directLeft;
    private int tailLeft;
    private int tailGot;
    private boolean failed;
    private long fpdus;
    /** The view {@link #directTarget} handed out and its start, until {@link #directRead}. */
    private ByteBuffer target;
    private int targetAt;

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

    /** True once a CRC or framing error was reported, or the handler refused a direct piece. */
    public boolean failed() {
        return failed;
    }

    /** Number of FPDUs handed to the handler. */
    public long fpduCount() {
        return fpdus;
    }

    /** True when part of an FPDU (or marker) is buffered or being placed, waiting for more bytes. */
    public boolean hasPartial() {
        return phase != IDLE || gathered > 0 || markerBytes >= 0;
    }

    /** Bytes of reassembly memory this decoder holds (its gather buffers; heap and direct). */
    public int reassemblyBytes() {
        return (small == null ? 0 : small.capacity()) + (big == null ? 0 : big.capacity());
    }

    /** The buffer the last split FPDU was gathered in, or null before the first (tests). */
    ByteBuffer gatherBuffer() {
        return gather;
    }

    /** The large gather buffer, or null while none was needed (tests). */
    ByteBuffer largeGatherBuffer() {
        return big;
    }

    private ByteBuffer small() {
        ByteBuffer g = small;
        if (g == null) {
            g = ByteBuffer.allocate(SMALL_GATHER);
            small = g;
        }
        return g;
    }

    private ByteBuffer big() {
        ByteBuffer g = big;
        if (g == null) {
            g = ByteBuffer.allocateDirect(Fpdu.MAX_FPDU_LENGTH);
            big = g;
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

    /**
     * Reading straight into the target: when the next stream bytes are payload of an FPDU placed
     * directly (no markers), a view of where they go from its position to its limit (at most the
     * payload still due), guarded by the handler (a placement lease) until {@link #directRead},
     * which the caller must call next, also when its read failed. Null: feed the next bytes as
     * usual (also when the handler found its target revoked: it reported that, and the decoder
     * then discards what follows; a handler whose stream ended lends nothing). Null also unless at least
     * {@code minBytes} payload bytes are still due: a reader trades a copy of a short rest for
     * fewer reads (one plain read takes it and the FPDUs after it).
     */
    @Override
    public ByteBuffer directTarget(int minBytes) {
        if (failed || markersEnabled || phase != DIRECT || target != null || directLeft < minBytes) {
            return null;
        }
        ByteBuffer t = handler.directTarget(directLeft);
        if (t != null) {
            target = t;
            targetAt = t.position();
        }
        return t;
    }

    /**
     * {@code n} stream bytes were read into the view {@link #directTarget} returned, from its
     * start: the CRC runs over them (before the handler releases the target), the handler
     * releases it, and the FPDU's pad and CRC follow through {@link #feed}.
     */
    @Override
    public void directRead(int n) {
        ByteBuffer t = target;
        if (t == null) {
            throw new IllegalStateException("no direct target handed out");
        }
        target = null;
        if (n < 0 || n > directLeft) {
            handler.directFilled(0);
            throw new IllegalArgumentException("direct read of " + n + " bytes, " + directLeft + " due");
        }
        if (crcEnabled && n > 0) {
            crc.update(t, targetAt, n);
        }
        handler.directFilled(n);
        directLeft -= n;
        if (directLeft == 0) {
            tailLeft = Fpdu.padLength(ulpdu) + Fpdu.CRC_SIZE;
            tailGot = 0;
            phase = TAIL;
        }
    }

    /** ULPDU length of the FPDU being placed directly (payload or pad and CRC still due), else 0. */
    @Override
    public int directLength() {
        return phase == DIRECT || phase == TAIL ? ulpdu : 0;
    }

    /**
     * Stream bytes still due for the FPDU being placed directly: the rest of its payload, pad and
     * CRC (0 outside one). A reader sizes its next read by it.
     */
    @Override
    public int directDue() {
        switch (phase) {
            case DIRECT:
                return directLeft + Fpdu.padLength(ulpdu) + Fpdu.CRC_SIZE;
            case TAIL:
                return tailLeft - tailGot;
            default:
                return 0;
        }
    }

    private void feedPlain(ByteBuffer src) {
        final int end = src.limit();
        while (!failed && src.position() < end) {
            int pos = src.position();
            switch (phase) {
                case DIRECT: {
                    int n = Math.min(directLeft, end - pos);
                    if (crcEnabled) {
                        crc.update(src, pos, n);
                    }
                    src.position(pos + n);
                    directLeft -= n;
                    if (!handler.placeDirect(src, pos, n)) {
                        failed = true; // the handler failed the stream and said why
                        phase = IDLE;
                        return;
                    }
                    if (directLeft == 0) {
                        tailLeft = Fpdu.padLength(ulpdu) + Fpdu.CRC_SIZE; // the CRC field is there even unchecked
                        tailGot = 0;
                        phase = TAIL;
                    }
                    break;
                }
                case TAIL: {
                    int n = Math.min(tailLeft - tailGot, end - pos);
                    small.put(TAIL_AT + tailGot, src, pos, n);
                    src.position(pos + n);
                    tailGot += n;
                    if (tailGot == tailLeft) {
                        finishDirect();
                    }
                    break;
                }
                case IDLE:
                    if (end - pos >= Fpdu.LENGTH_FIELD_SIZE) {
                        int u = src.getShort(pos) & 0xFFFF;
                        int total = Fpdu.fpduLength(u);
                        if (end - pos >= total) {
                            src.position(pos + total);
                            deliver(src, pos, u);
                            break;
                        }
                    }
                    gather = small();
                    gathered = 0;
                    needed = Fpdu.LENGTH_FIELD_SIZE;
                    phase = LENGTH;
                    // fall through: gather the start of a split FPDU
                default: {
                    int take = Math.min(needed - gathered, end - pos);
                    gather.put(gathered, src, pos, take);
                    src.position(pos + take);
                    gathered += take;
                    while (!failed && gathered == needed && phase != IDLE && phase != DIRECT) {
                        stepGathered();
                    }
                    break;
                }
            }
        }
    }

    /** The gathering phase's bytes are in: decide what comes next. */
    private void stepGathered() {
        switch (phase) {
            case LENGTH: {
                ulpdu = gather.getShort(0) & 0xFFFF;
                int total = Fpdu.fpduLength(ulpdu);
                if (total <= SMALL_GATHER) {
                    needed = total;
                    phase = BODY;
                } else {
                    needed = Fpdu.ULPDU_OFFSET + 1;
                    phase = FIRST;
                }
                return;
            }
            case FIRST: {
                int hl = handler.directHeaderLength(gather.get(Fpdu.ULPDU_OFFSET) & 0xFF);
                if (hl > 0 && hl < ulpdu && Fpdu.ULPDU_OFFSET + hl <= TAIL_AT) {
                    needed = Fpdu.ULPDU_OFFSET + hl;
                    phase = HEADER;
                } else {
                    gatherWhole();
                }
                return;
            }
            case HEADER: {
                int hl = needed - Fpdu.ULPDU_OFFSET;
                if (handler.beginDirect(gather, Fpdu.ULPDU_OFFSET, hl, ulpdu)) {
                    if (crcEnabled) {
                        crc.begin();
                        crc.update(gather, 0, needed);
                    }
                    directLeft = ulpdu - hl;
                    gathered = 0; // the header stays at the front of the small buffer until the FPDU ends
                    phase = DIRECT;
                } else {
                    gatherWhole();
                }
                return;
            }
            default: { // BODY: the whole FPDU is gathered
                gathered = 0;
                phase = IDLE;
                deliver(gather, 0, ulpdu);
            }
        }
    }

    /** The split FPDU is not placed directly: gather all of it (in the large buffer). */
    private void gatherWhole() {
        ByteBuffer b = big();
        b.put(0, gather, 0, gathered);
        gather = b;
        needed = Fpdu.fpduLength(ulpdu);
        phase = BODY;
    }

    private void finishDirect() {
        phase = IDLE;
        if (crcEnabled) {
            int pad = tailLeft - Fpdu.CRC_SIZE;
            crc.update(small, TAIL_AT, pad);
            int expected = crc.value();
            int actual = Crc32c.getWire(small, TAIL_AT + pad);
            if (expected != actual) {
                fail(TermCode.MPA_CRC_ERROR, String.format("FPDU CRC 0x%08x does not match computed 0x%08x "
                        + "(RFC 5044 §4.4); its payload was already placed", actual, expected));
                return;
            }
        }
        fpdus++;
        handler.endDirect();
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
                gather = big();
            }
            int pos = src.position();
            int take = Math.min(Math.min(MarkerInserter.MARKER_INTERVAL - phase, src.remaining()), needed - gathered);
            gather.put(gathered, src, pos, take);
            src.position(pos + take);
            streamOffset += take;
            gathered += take;
            stepMarkerGathered();
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

    private void stepMarkerGathered() {
        if (gathered < needed) {
            return;
        }
        if (needed == Fpdu.LENGTH_FIELD_SIZE) {
            needed = Fpdu.fpduLength(gather.getShort(0) & 0xFFFF);
            return;
        }
        int u = gather.getShort(0) & 0xFFFF;
        gathered = 0;
        needed = Fpdu.LENGTH_FIELD_SIZE;
        deliver(gather, 0, u);
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
        phase = IDLE;
        handler.onFpduError(code, detail);
    }
}
