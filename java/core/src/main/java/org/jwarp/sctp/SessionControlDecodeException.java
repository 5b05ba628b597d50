package org.jwarp.sctp;

import org.jwarp.ground.TermCode;
import org.jwarp.ground.DecodeException;

/**
 * A received DDP Stream Session Control payload (RFC 5043 §4, RFC 6581 §7) breaks a rule; the
 * message names the field and the RFC section. The only exception {@link SessionControlChunk#decode}
 * throws for bad input.
 */
public final class SessionControlDecodeException extends DecodeException {
    private static final long serialVersionUID = 1L;

    public SessionControlDecodeException(String field, String detail, String rfcSection) {
        super(TermCode.MPA_INVALID_REQ_REP, field, detail, rfcSection);
    }
}
