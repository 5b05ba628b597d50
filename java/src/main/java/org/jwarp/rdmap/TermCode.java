package org.jwarp.rdmap;

/**
 * The (layer, error type, error code) triple of an RDMAP Terminate message, RFC 5040 §4.8 and
 * §7.2, with the LLP (MPA) codes of RFC 5044 §8 and RFC 6581 §8 (codes 5, 6, 7).
 *
 * <p>On the wire: bits 31–28 layer, 27–24 etype, 23–16 ecode of the first TERM word. Layer 2
 * errors from cxgb4 and irdma use etype 3 instead of 0; {@link #isMpa()} accepts both.
 */
public record TermCode(int layer, int etype, int ecode) {

    public static final int LAYER_RDMAP = 0;
    public static final int LAYER_DDP = 1;
    public static final int LAYER_LLP = 2;

    /** RFC 5040 §7.2: MPA errors are reported with etype 0 at layer 2. */
    public static final int ETYPE_LLP_MPA = 0;
    /** Layer-2 etype used by cxgb4/irdma (LAYER_MPA | DDP_LLP); accepted on receive. */
    public static final int ETYPE_LLP_MPA_ALT = 3;

    // RFC 5044 §8 / RFC 6581 §8: MPA error codes.
    public static final TermCode MPA_TCP_CONNECTION_LOST = new TermCode(LAYER_LLP, ETYPE_LLP_MPA, 0x01);
    public static final TermCode MPA_CRC_ERROR = new TermCode(LAYER_LLP, ETYPE_LLP_MPA, 0x02);
    public static final TermCode MPA_MARKER_OR_FPDU_ERROR = new TermCode(LAYER_LLP, ETYPE_LLP_MPA, 0x03);
    public static final TermCode MPA_INVALID_REQ_REP = new TermCode(LAYER_LLP, ETYPE_LLP_MPA, 0x04);
    /** RFC 6581 §8 code 5: local catastrophic error. */
    public static final TermCode MPA_LOCAL_CATASTROPHIC = new TermCode(LAYER_LLP, ETYPE_LLP_MPA, 0x05);
    /** RFC 6581 §8 code 6: insufficient IRD resources. */
    public static final TermCode MPA_INSUFFICIENT_IRD = new TermCode(LAYER_LLP, ETYPE_LLP_MPA, 0x06);
    /** RFC 6581 §8 code 7: no matching RTR model. */
    public static final TermCode MPA_NO_MATCHING_RTR = new TermCode(LAYER_LLP, ETYPE_LLP_MPA, 0x07);

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

    /** True for a layer-2 (MPA) error in either etype encoding seen in the field. */
    public boolean isMpa() {
        return layer == LAYER_LLP && (etype == ETYPE_LLP_MPA || etype == ETYPE_LLP_MPA_ALT);
    }

    /** The top byte pair of the TERM control word: layer(4) | etype(4) | ecode(8), bits 31–16. */
    public int controlBits() {
        return (layer << 28) | (etype << 24) | (ecode << 16);
    }

    public static TermCode fromControlWord(int word) {
        return new TermCode((word >>> 28) & 0xF, (word >>> 24) & 0xF, (word >>> 16) & 0xFF);
    }
}
