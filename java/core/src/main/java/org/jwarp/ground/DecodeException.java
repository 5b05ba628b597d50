package org.jwarp.ground;

/**
 * Received bytes break a rule of the wire protocol: an MPA Request/Reply frame (RFC 5044 §7.1,
 * RFC 6581 §6 and §9), an FPDU (RFC 5044 §4), a DDP Stream Session Control payload (RFC 5043 §4,
 * RFC 6581 §7), a DDP segment (RFC 5041 §4) or an RDMAP message (RFC 5040 §4).
 *
 * <p>The one base of every decoder's exception, so a caller catches one type and always learns
 * the Terminate it owes the peer: {@link #term()} is the (layer, type, code) triple of RFC 5040
 * §4.8 / RFC 5041 §7.2 / RFC 6581 §8 that reports this error. The message is
 * {@code "<field>: <detail> (<RFC section>)"} when the decoder names a field, e.g.
 * {@code "MPA PD_Length: 600 exceeds 512 (RFC 5044 §7.1.1)"}.
 *
 * <p>Unchecked, as Netty's {@code DecoderException}: a decoder is handed whatever bytes arrived,
 * and a violation is a property of that input, not a condition a caller can avoid by checking first.
 */
public abstract class DecodeException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final transient TermCode term;
    private final String field;
    private final String rfcSection;

    /**
     * An error in a named field.
     *
     * @param term       the Terminate that reports this error to the peer
     * @param field      the field as the RFC names it, e.g. "MPA PD_Length"
     * @param detail     what is wrong with it
     * @param rfcSection the rule, e.g. "RFC 5044 §7.1.1"
     */
    protected DecodeException(TermCode term, String field, String detail, String rfcSection) {
        super(field + ": " + detail + " (" + rfcSection + ")");
        this.term = java.util.Objects.requireNonNull(term, "term");
        this.field = field;
        this.rfcSection = rfcSection;
    }

    /**
     * For decoders whose message already names the field and the section.
     *
     * @param term    the Terminate that reports this error to the peer
     * @param message the whole message
     */
    protected DecodeException(TermCode term, String message) {
        super(message);
        this.term = java.util.Objects.requireNonNull(term, "term");
        this.field = "";
        this.rfcSection = "";
    }

    /** {@return the Terminate (layer, error type, error code) that reports this error to the peer} */
    public final TermCode term() {
        return term;
    }

    /** {@return the offending field, e.g. "MPA PD_Length"; empty when the message alone names it} */
    public final String field() {
        return field;
    }

    /** {@return the RFC and section whose rule was violated, e.g. "RFC 5044 §7.1.1"; empty when the message names it} */
    public final String rfcSection() {
        return rfcSection;
    }
}
