package org.jwarp.rdmap;

/** Bytes that are not a well-formed RDMAP message, RFC 5040 §4; the message names the field and section. */
public final class RdmapFormatException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public RdmapFormatException(String message) {
        super(message);
    }
}
