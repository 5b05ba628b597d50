package org.jwarp.ddp;

import org.jwarp.ground.DecodeException;
import org.jwarp.ground.TermCode;

/** A byte sequence that is not a well-formed DDP segment, RFC 5041 §4; the message names the field. */
public final class DdpFormatException extends DecodeException {
    private static final long serialVersionUID = 1L;

    public DdpFormatException(String message) {
        super(TermCode.DDP_LOCAL_CATASTROPHIC, message);
    }
}
