package org.jwarp.mpa;

/**
 * Received connection-setup input breaks a rule of the protocol: an MPA Request/Reply frame
 * (RFC 5044 §7.1.1, §7.1.2; RFC 6581 §6 and §9) or a DDP Stream Session Control payload
 * (RFC 5043 §4, RFC 6581 §7). The message is always {@code "<field>: <detail> (<RFC section>)"},
 * e.g. {@code "MPA PD_Length: 600 exceeds 512 (RFC 5044 §7.1.1)"}.
 *
 * <p>The common shape of {@link MpaDecodeException} and
 * {@link org.jwarp.sctp.SessionControlDecodeException}; each decoder throws its own subtype, so a
 * caller can still tell MPA from session control. The CLI maps every subtype to exit 2 through
 * the CLI maps it to exit code 2.
 */
public abstract class ProtocolDecodeException extends Exception {
    private static final long serialVersionUID = 1L;

    private final String field;
    private final String rfcSection;

    /**
     * @param field      the field as the RFC names it, e.g. "MPA PD_Length"
     * @param detail     what is wrong with it
     * @param rfcSection the rule, e.g. "RFC 5044 §7.1.1"
     */
    protected ProtocolDecodeException(String field, String detail, String rfcSection) {
        super(field + ": " + detail + " (" + rfcSection + ")");
        this.field = field;
        this.rfcSection = rfcSection;
    }

    /** The offending field, e.g. "MPA PD_Length". */
    public final String field() {
        return field;
    }

    /** The RFC and section whose rule was violated, e.g. "RFC 5044 §7.1.1". */
    public final String rfcSection() {
        return rfcSection;
    }
}
