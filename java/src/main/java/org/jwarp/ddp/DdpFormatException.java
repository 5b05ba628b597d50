package org.jwarp.ddp;

/** A byte sequence that is not a well-formed DDP segment, RFC 5041 §4; the message names the field. */
public final class DdpFormatException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public DdpFormatException(String message) {
        super(message);
    }
}
