package org.jwarp.rdmap;

import org.jwarp.ground.DecodeException;
import org.jwarp.ground.TermCode;

/** Bytes that are not a well-formed RDMAP message, RFC 5040 §4; the message names the field and section. */
public final class RdmapFormatException extends DecodeException {
    private static final long serialVersionUID = 1L;

    public RdmapFormatException(String message) {
        super(TermCode.RDMAP_CATASTROPHIC_STREAM, message);
    }
}
