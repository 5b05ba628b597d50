package org.jwarp.mpa;

import org.jwarp.ground.DecodeException;
import org.jwarp.ground.TermCode;

/**
 * A byte sequence that is not a well-formed MPA FPDU, RFC 5044 §4. The message names the field and
 * the RFC section.
 */
public final class FpduFormatException extends DecodeException {
    private static final long serialVersionUID = 1L;

    public FpduFormatException(String message) {
        super(TermCode.MPA_MARKER_OR_FPDU_ERROR, message);
    }
}
