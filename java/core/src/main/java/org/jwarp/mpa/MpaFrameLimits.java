package org.jwarp.mpa;

/**
 * Private-data limits applied to MPA Request/Reply frames, RFC 5044 §7.1.1 (PD_Length ≤ 512) with
 * an optional lower local limit.
 *
 * <p>{@link #maxPrivateDataLength()} bounds PD_Length on the wire, i.e. including the 4 bytes of
 * RFC 6581 §9 enhanced data; it applies to received and sent frames. {@link #maxUlpPrivateDataLength()}
 * bounds the ULP's own private data when sending. Linux siw takes at most 256 bytes on the wire and
 * its u8 length arithmetic wraps at 252 bytes of user data, so {@link #SIW} keeps user data ≤ 251.
 *
 * @param maxPrivateDataLength    largest PD_Length accepted or sent, 0..512
 * @param maxUlpPrivateDataLength largest ULP private data sent (excluding enhanced data), 0..512
 */
public record MpaFrameLimits(int maxPrivateDataLength, int maxUlpPrivateDataLength) {

    /** RFC 5044 §7.1.1: the largest PD_Length. */
    public static final int RFC_MAX_PRIVATE_DATA = 512;

    /** The RFC limits: 512 bytes of private data on the wire. */
    public static final MpaFrameLimits RFC = new MpaFrameLimits(RFC_MAX_PRIVATE_DATA, RFC_MAX_PRIVATE_DATA);

    /** Linux siw: 256 bytes on the wire (MPA_MAX_PRIVDATA), ≤ 251 bytes of user data. */
    public static final MpaFrameLimits SIW = new MpaFrameLimits(256, 251);

    public MpaFrameLimits {
        if (maxPrivateDataLength < 0 || maxPrivateDataLength > RFC_MAX_PRIVATE_DATA) {
            throw new IllegalArgumentException("maxPrivateDataLength: " + maxPrivateDataLength
                    + " is outside 0..512 (RFC 5044 §7.1.1)");
        }
        if (maxUlpPrivateDataLength < 0 || maxUlpPrivateDataLength > RFC_MAX_PRIVATE_DATA) {
            throw new IllegalArgumentException("maxUlpPrivateDataLength: " + maxUlpPrivateDataLength
                    + " is outside 0..512 (RFC 5044 §7.1.1)");
        }
    }

    /**
     * The largest ULP private data that may be sent, given whether the 4 enhanced bytes of
     * RFC 6581 §9 precede it.
     */
    public int ulpCapacity(boolean enhanced) {
        int wire = maxPrivateDataLength - (enhanced ? EnhancedConnectionData.LENGTH : 0);
        return Math.max(0, Math.min(wire, maxUlpPrivateDataLength));
    }
}
