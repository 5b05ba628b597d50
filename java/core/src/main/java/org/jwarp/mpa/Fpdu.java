package org.jwarp.mpa;

/**
 * Layout and sizing of an MPA FPDU, RFC 5044 §4 (framing), §4.3 (markers) and §7 (MULPDU):
 * {@code ULPDU_Length(2) | ULPDU | PAD(0..3) | CRC(4)}, with the length, ULPDU and pad a multiple
 * of four bytes. Markers, when enabled, are not part of this layout: they are inserted into and
 * removed from the TCP stream by {@link MarkerInserter} and {@link FpduDecoder}.
 */
public final class Fpdu {
    private Fpdu() {
    }

    /** Offset of the 16-bit big-endian ULPDU_Length field. */
    public static final int LENGTH_OFFSET = 0;
    /** Size of the ULPDU_Length field. */
    public static final int LENGTH_FIELD_SIZE = 2;
    /** Offset of the ULPDU (the DDP segment). */
    public static final int ULPDU_OFFSET = LENGTH_FIELD_SIZE;
    /** Size of the CRC field. */
    public static final int CRC_SIZE = Crc32c.CRC_LENGTH;
    /** Framing overhead without pad: length field plus CRC. */
    public static final int OVERHEAD = LENGTH_FIELD_SIZE + CRC_SIZE;
    /** Largest ULPDU the 16-bit length field can carry. */
    public static final int MAX_ULPDU_LENGTH = 0xFFFF;
    /** Largest FPDU without markers. */
    public static final int MAX_FPDU_LENGTH = OVERHEAD + MAX_ULPDU_LENGTH + 3;

    /** Pad bytes after a ULPDU of this length, RFC 5044 §4.2: length field + ULPDU + pad ≡ 0 mod 4. */
    public static int padLength(int ulpduLength) {
        return -(LENGTH_FIELD_SIZE + ulpduLength) & 3;
    }

    /** Total FPDU length (without markers) for a ULPDU of this length. */
    public static int fpduLength(int ulpduLength) {
        return LENGTH_FIELD_SIZE + ulpduLength + padLength(ulpduLength) + CRC_SIZE;
    }

    /** Upper bound of the stream bytes an FPDU takes with markers inserted every 512 bytes. */
    public static int maxWireLength(int ulpduLength, boolean markers) {
        int n = fpduLength(ulpduLength);
        return markers ? n + MarkerInserter.MARKER_LENGTH * (n / (MarkerInserter.MARKER_INTERVAL
                - MarkerInserter.MARKER_LENGTH) + 2) : n;
    }

    /** siw's FPDU size: the MSS rounded down to a multiple of 8 (siw_update_tcpseg). */
    public static int maxFpduForMss(int mss) {
        return mss & ~7;
    }

    /**
     * The MULPDU (largest DDP segment) for an effective MSS, RFC 5044 §7.1.
     *
     * <p>Without markers this is siw's rule: a full FPDU is the MSS rounded down to 8 minus the
     * length field and CRC, so a non-last FPDU needs no pad. With markers it is the RFC formula
     * {@code EMSS - (6 + 4 * ceil(EMSS / 512) + EMSS mod 4)}.
     */
    public static int mulpduForMss(int mss, boolean markers) {
        if (mss < 64) {
            throw new IllegalArgumentException("MSS too small for an FPDU (RFC 5044 §7.1): " + mss);
        }
        int mulpdu;
        if (markers) {
            mulpdu = mss - (OVERHEAD + MarkerInserter.MARKER_LENGTH
                    * ((mss + MarkerInserter.MARKER_INTERVAL - 1) / MarkerInserter.MARKER_INTERVAL) + mss % 4);
        } else {
            mulpdu = maxFpduForMss(mss) - OVERHEAD;
        }
        return Math.min(mulpdu, MAX_ULPDU_LENGTH);
    }
}
