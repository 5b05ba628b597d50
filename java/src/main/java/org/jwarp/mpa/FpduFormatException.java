package org.jwarp.mpa;

/**
 * A byte sequence that is not a well-formed MPA FPDU, RFC 5044 §4. The message names the field and
 * the RFC section.
 */
public final class FpduFormatException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public FpduFormatException(String message) {
        super(message);
    }
}
