package org.jwarp.ground;

/**
 * The (layer, error type, error code) triple of an RDMAP Terminate message, RFC 5040 §4.8 and
 * §7.2, with the LLP (MPA) codes of RFC 5044 §8 and RFC 6581 §8 (codes 5, 6, 7).
 *
 * <p>On the wire: bits 31–28 layer, 27–24 etype, 23–16 ecode of the first TERM word. Layer 2
 * errors from cxgb4 and irdma use etype 3 instead of 0; {@link #isMpa()} accepts both. The DDP
 * codes are those of RFC 5041 §7.2, the RDMAP codes those of RFC 5040 §4.8.
 *
 * <p>Applications meet it in {@code ConnectionTerminatedException#term()} (verbs package): e.g.
 * {@link #MPA_INSUFFICIENT_IRD} or {@link #MPA_NO_MATCHING_RTR} when connection setup fails
 * (RFC 6581 §8), {@link #MPA_CRC_ERROR} when the peer saw a CRC error.
 *
 * <p>Immutable, so thread-safe.
 *
 * @param layer the layer (bits 31–28): {@link #LAYER_RDMAP}, {@link #LAYER_DDP} or {@link #LAYER_LLP}
 * @param etype the error type within the layer (bits 27–24)
 * @param ecode the error code within the type (bits 23–16)
 */
public record TermCode(int layer, int etype, int ecode) {

    /** Layer 0: RDMAP (RFC 5040 §4.8). */
    public static final int LAYER_RDMAP = 0;
    /** Layer 1: DDP (RFC 5041 §7.2). */
    public static final int LAYER_DDP = 1;
    /** Layer 2: the lower-layer protocol, MPA (RFC 5044 §8, RFC 6581 §8). */
    public static final int LAYER_LLP = 2;

    /** RFC 5040 §7.2: MPA errors are reported with etype 0 at layer 2. */
    public static final int ETYPE_LLP_MPA = 0;
    /** Layer-2 etype used by cxgb4/irdma (LAYER_MPA | DDP_LLP); accepted on receive. */
    public static final int ETYPE_LLP_MPA_ALT = 3;

    // RFC 5044 §8 / RFC 6581 §8: MPA error codes.
    /** RFC 5044 §8 code 1: TCP connection closed, terminated or lost. */
    public static final TermCode MPA_TCP_CONNECTION_LOST = new TermCode(LAYER_LLP, ETYPE_LLP_MPA, 0x01);
    /** RFC 5044 §8 code 2: MPA CRC error (e.g. a region written while a zero-copy transmit read it). */
    public static final TermCode MPA_CRC_ERROR = new TermCode(LAYER_LLP, ETYPE_LLP_MPA, 0x02);
    /** RFC 5044 §8 code 3: MPA marker or FPDU length error. */
    public static final TermCode MPA_MARKER_OR_FPDU_ERROR = new TermCode(LAYER_LLP, ETYPE_LLP_MPA, 0x03);
    /** RFC 5044 §8 code 4: invalid MPA Request or Reply frame. */
    public static final TermCode MPA_INVALID_REQ_REP = new TermCode(LAYER_LLP, ETYPE_LLP_MPA, 0x04);
    /** RFC 6581 §8 code 5: local catastrophic error. */
    public static final TermCode MPA_LOCAL_CATASTROPHIC = new TermCode(LAYER_LLP, ETYPE_LLP_MPA, 0x05);
    /** RFC 6581 §8 code 6: insufficient IRD resources. */
    public static final TermCode MPA_INSUFFICIENT_IRD = new TermCode(LAYER_LLP, ETYPE_LLP_MPA, 0x06);
    /** RFC 6581 §8 code 7: no matching RTR model. */
    public static final TermCode MPA_NO_MATCHING_RTR = new TermCode(LAYER_LLP, ETYPE_LLP_MPA, 0x07);

    // RFC 5041 §7.2: DDP error types and codes (layer 1).
    /** RFC 5041 §7.2 DDP error type 0: local catastrophic. */
    public static final int ETYPE_DDP_CATASTROPHIC = 0;
    /** RFC 5041 §7.2 DDP error type 1: tagged buffer error. */
    public static final int ETYPE_DDP_TAGGED = 1;
    /** RFC 5041 §7.2 DDP error type 2: untagged buffer error. */
    public static final int ETYPE_DDP_UNTAGGED = 2;
    /** RFC 5041 §7.2: local catastrophic error (etype 0, code 0). */
    public static final TermCode DDP_LOCAL_CATASTROPHIC = new TermCode(LAYER_DDP, ETYPE_DDP_CATASTROPHIC, 0x00);
    /** RFC 5041 §7.2 tagged buffer error: invalid STag. */
    public static final TermCode DDP_TAGGED_INVALID_STAG = new TermCode(LAYER_DDP, ETYPE_DDP_TAGGED, 0x00);
    /** RFC 5041 §7.2 tagged buffer error: base or bounds violation. */
    public static final TermCode DDP_TAGGED_BASE_BOUNDS = new TermCode(LAYER_DDP, ETYPE_DDP_TAGGED, 0x01);
    /** RFC 5041 §7.2 tagged buffer error: STag not associated with the DDP stream. */
    public static final TermCode DDP_TAGGED_STAG_NOT_ASSOCIATED = new TermCode(LAYER_DDP, ETYPE_DDP_TAGGED, 0x02);
    /** RFC 5041 §7.2 tagged buffer error: TO wrap. */
    public static final TermCode DDP_TAGGED_TO_WRAP = new TermCode(LAYER_DDP, ETYPE_DDP_TAGGED, 0x03);
    /** RFC 5041 §7.2 tagged buffer error: invalid DDP version. */
    public static final TermCode DDP_TAGGED_INVALID_VERSION = new TermCode(LAYER_DDP, ETYPE_DDP_TAGGED, 0x04);
    /** RFC 5041 §7.2 untagged buffer error: invalid QN. */
    public static final TermCode DDP_UNTAGGED_INVALID_QN = new TermCode(LAYER_DDP, ETYPE_DDP_UNTAGGED, 0x01);
    /** RFC 5041 §7.2 untagged buffer error: invalid MSN, no buffer available. */
    public static final TermCode DDP_UNTAGGED_MSN_NO_BUFFER = new TermCode(LAYER_DDP, ETYPE_DDP_UNTAGGED, 0x02);
    /** RFC 5041 §7.2 untagged buffer error: invalid MSN, MSN range is not valid. */
    public static final TermCode DDP_UNTAGGED_MSN_RANGE = new TermCode(LAYER_DDP, ETYPE_DDP_UNTAGGED, 0x03);
    /** RFC 5041 §7.2 untagged buffer error: invalid MO. */
    public static final TermCode DDP_UNTAGGED_INVALID_MO = new TermCode(LAYER_DDP, ETYPE_DDP_UNTAGGED, 0x04);
    /** RFC 5041 §7.2 untagged buffer error: DDP message too long for available buffer. */
    public static final TermCode DDP_UNTAGGED_MESSAGE_TOO_LONG = new TermCode(LAYER_DDP, ETYPE_DDP_UNTAGGED, 0x05);
    /** RFC 5041 §7.2 untagged buffer error: invalid DDP version. */
    public static final TermCode DDP_UNTAGGED_INVALID_VERSION = new TermCode(LAYER_DDP, ETYPE_DDP_UNTAGGED, 0x06);

    // RFC 5040 §4.8: RDMAP error types and codes (layer 0).
    /** RFC 5040 §4.8 RDMAP error type 0: local catastrophic. */
    public static final int ETYPE_RDMAP_CATASTROPHIC = 0;
    /** RFC 5040 §4.8 RDMAP error type 1: remote protection error. */
    public static final int ETYPE_RDMAP_REMOTE_PROTECTION = 1;
    /** RFC 5040 §4.8 RDMAP error type 2: remote operation error. */
    public static final int ETYPE_RDMAP_REMOTE_OPERATION = 2;
    /** RFC 5040 §4.8: local catastrophic error. */
    public static final TermCode RDMAP_LOCAL_CATASTROPHIC = new TermCode(LAYER_RDMAP, ETYPE_RDMAP_CATASTROPHIC, 0x00);
    /** RFC 5040 §4.8 remote protection error: invalid STag. */
    public static final TermCode RDMAP_INVALID_STAG = new TermCode(LAYER_RDMAP, ETYPE_RDMAP_REMOTE_PROTECTION, 0x00);
    /** RFC 5040 §4.8 remote protection error: base or bounds violation. */
    public static final TermCode RDMAP_BASE_BOUNDS = new TermCode(LAYER_RDMAP, ETYPE_RDMAP_REMOTE_PROTECTION, 0x01);
    /** RFC 5040 §4.8 remote protection error: access rights violation. */
    public static final TermCode RDMAP_ACCESS_VIOLATION = new TermCode(LAYER_RDMAP, ETYPE_RDMAP_REMOTE_PROTECTION, 0x02);
    /** RFC 5040 §4.8 remote protection error: STag not associated with RDMAP stream. */
    public static final TermCode RDMAP_STAG_NOT_ASSOCIATED = new TermCode(LAYER_RDMAP, ETYPE_RDMAP_REMOTE_PROTECTION, 0x03);
    /** RFC 5040 §4.8 remote protection error: TO wrap. */
    public static final TermCode RDMAP_TO_WRAP = new TermCode(LAYER_RDMAP, ETYPE_RDMAP_REMOTE_PROTECTION, 0x04);
    /** RFC 5040 §4.8 remote protection error: STag cannot be invalidated. */
    public static final TermCode RDMAP_CANNOT_INVALIDATE = new TermCode(LAYER_RDMAP, ETYPE_RDMAP_REMOTE_PROTECTION, 0x09);
    /** RFC 5040 §4.8 remote operation error: invalid RDMAP version. */
    public static final TermCode RDMAP_INVALID_VERSION = new TermCode(LAYER_RDMAP, ETYPE_RDMAP_REMOTE_OPERATION, 0x05);
    /** RFC 5040 §4.8 remote operation error: unexpected opcode. */
    public static final TermCode RDMAP_UNEXPECTED_OPCODE = new TermCode(LAYER_RDMAP, ETYPE_RDMAP_REMOTE_OPERATION, 0x06);
    /**
     * RFC 5040 §4.8 remote operation error: catastrophic error, localized to the RDMAP stream. Also
     * what siw reports when an inbound Read Request exceeds the IRD.
     */
    public static final TermCode RDMAP_CATASTROPHIC_STREAM = new TermCode(LAYER_RDMAP, ETYPE_RDMAP_REMOTE_OPERATION, 0x07);
    /** RFC 5040 §4.8 remote operation error: catastrophic error, global. */
    public static final TermCode RDMAP_CATASTROPHIC_GLOBAL = new TermCode(LAYER_RDMAP, ETYPE_RDMAP_REMOTE_OPERATION, 0x08);

    /**
     * Checks the fields' ranges.
     *
     * @param layer the layer, 0..15
     * @param etype the error type, 0..15
     * @param ecode the error code, 0..255
     * @throws IllegalArgumentException when a field is out of range
     */
    public TermCode {
        if (layer < 0 || layer > 0xF) {
            throw new IllegalArgumentException("TERM layer out of range 0..15: " + layer);
        }
        if (etype < 0 || etype > 0xF) {
            throw new IllegalArgumentException("TERM etype out of range 0..15: " + etype);
        }
        if (ecode < 0 || ecode > 0xFF) {
            throw new IllegalArgumentException("TERM ecode out of range 0..255: " + ecode);
        }
    }

    /** {@return true for a layer-2 (MPA) error in either etype encoding seen in the field} */
    public boolean isMpa() {
        return layer == LAYER_LLP && (etype == ETYPE_LLP_MPA || etype == ETYPE_LLP_MPA_ALT);
    }

    /** {@return the top byte pair of the TERM control word: layer(4) | etype(4) | ecode(8), bits 31–16} */
    public int controlBits() {
        return (layer << 28) | (etype << 24) | (ecode << 16);
    }

    /**
     * Reads a TERM control word in RFC 5040 §4.8 order: layer in bits 31–28, etype in bits 27–24,
     * code in bits 23–16.
     *
     * @param word the first word of the TERM
     * @return its code
     */
    public static TermCode fromControlWord(int word) {
        return new TermCode((word >>> 28) & 0xF, (word >>> 24) & 0xF, (word >>> 16) & 0xFF);
    }

    /**
     * Linux siw's order: its little-endian bitfield puts the layer in bits 27–24 and the etype in
     * bits 31–28 (seen from kernel 6.1 siw as {@code 0x2102...} for DDP layer 1, untagged etype 2,
     * code 2). The rdmap package's {@code TerminateCodec} decides when a received word is read this way.
     *
     * @param word the first word of the TERM, as siw sends it
     * @return its code
     */
    public static TermCode fromSiwControlWord(int word) {
        return new TermCode((word >>> 24) & 0xF, (word >>> 28) & 0xF, (word >>> 16) & 0xFF);
    }

    /**
     * True when layer and etype form a combination RFC 5040 §4.8 defines (RDMAP and DDP: etype
     * 0–2; LLP: the MPA etypes of {@link #isMpa()}). The error code is not judged.
     *
     * @return whether the combination is defined
     */
    public boolean isDefined() {
        return switch (layer) {
            case LAYER_RDMAP, LAYER_DDP -> etype <= 2;
            case LAYER_LLP -> isMpa();
            default -> false;
        };
    }
}
