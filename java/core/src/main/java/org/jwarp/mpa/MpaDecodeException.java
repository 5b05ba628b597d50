package org.jwarp.mpa;

import org.jwarp.ground.TermCode;
import org.jwarp.ground.DecodeException;
/**
 * A received MPA Request/Reply frame (RFC 5044 §7.1.1, RFC 6581 §6 and §9), SCTP session control
 * chunk (RFC 5043 §4, RFC 6581 §7) or related connection-setup input violates a rule of the
 * protocol. The message always names the offending field and the RFC section, e.g.
 * {@code "MPA PD_Length: 600 exceeds 512 (RFC 5044 §7.1.1)"}.
 *
 * <p>This is the only exception the connection-setup decoders throw for bad input.
 */
public final class MpaDecodeException extends DecodeException {
    private static final long serialVersionUID = 1L;

    /**
     * @param field      the field as the RFC names it, e.g. "PD_Length"
     * @param detail     what is wrong with it
     * @param rfcSection the rule, e.g. "RFC 5044 §7.1.1"
     */
    public MpaDecodeException(String field, String detail, String rfcSection) {
        super(TermCode.MPA_INVALID_REQ_REP, field, detail, rfcSection);
    }
}
