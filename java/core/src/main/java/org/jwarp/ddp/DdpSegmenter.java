package org.jwarp.ddp;

/**
 * DDP segmentation at the Data Source, RFC 5041 §5.2: a ULP message is cut into segments whose
 * header plus payload fills the MULPDU, the last segment carries the remainder and the L flag, and
 * a zero-length message is exactly one segment. Untagged segments carry MO = bytes already sent,
 * tagged segments TO = first TO + bytes already sent.
 *
 * <p>Pure arithmetic, no allocation: segment {@code i} starts at {@code i * maxPayload}.
 */
public final class DdpSegmenter {
    private DdpSegmenter() {
    }

    /** Payload bytes per full segment: MULPDU minus the tagged (14) or untagged (18) header. */
    public static int maxPayload(boolean tagged, int mulpdu) {
        int header = tagged ? DdpHeader.TAGGED_HEADER_LENGTH : DdpHeader.UNTAGGED_HEADER_LENGTH;
        if (mulpdu <= header) {
            throw new IllegalArgumentException("MULPDU " + mulpdu + " leaves no room for payload after the "
                    + header + "-byte " + (tagged ? "tagged" : "untagged") + " DDP header (RFC 5041 §5.2)");
        }
        if (mulpdu > 0xFFFF) {
            throw new IllegalArgumentException("MULPDU " + mulpdu + " exceeds the 16-bit MPA ULPDU length "
                    + "(RFC 5044 §4.1)");
        }
        return mulpdu - header;
    }

    /** Number of segments of a message of {@code length} bytes: at least one (RFC 5041 §5.2). */
    public static long segmentCount(long length, int maxPayload) {
        if (length < 0) {
            throw new IllegalArgumentException("message length must not be negative: " + length);
        }
        return length == 0 ? 1 : (length + maxPayload - 1) / maxPayload;
    }

    /** Payload length of the segment that starts at message offset {@code offset}. */
    public static int segmentLength(long length, long offset, int maxPayload) {
        return (int) Math.min(maxPayload, length - offset);
    }

    /** True when the segment starting at {@code offset} is the last (L = 1). */
    public static boolean isLast(long length, long offset, int maxPayload) {
        return length - offset <= maxPayload;
    }
}
