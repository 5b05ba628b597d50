package org.jwarp.sctp;

import org.jwarp.cli.JwarpCli;

/**
 * A received DDP Stream Session Control payload (RFC 5043 §4, RFC 6581 §7) breaks a rule; the
 * message names the field and the RFC section. The only exception {@link SessionControlChunk#decode}
 * throws for bad input.
 */
public final class SessionControlDecodeException extends Exception implements JwarpCli.MalformedInputException {
    private static final long serialVersionUID = 1L;

    private final String field;
    private final String rfcSection;

    public SessionControlDecodeException(String field, String detail, String rfcSection) {
        super(field + ": " + detail + " (" + rfcSection + ")");
        this.field = field;
        this.rfcSection = rfcSection;
    }

    public String field() {
        return field;
    }

    public String rfcSection() {
        return rfcSection;
    }
}
