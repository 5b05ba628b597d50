package org.jwarp.verbs;

import java.io.IOException;

/** Base of every checked error the verbs API raises. */
public class RdmaException extends IOException {
    private static final long serialVersionUID = 1L;

    public RdmaException(String message) {
        super(message);
    }

    public RdmaException(String message, Throwable cause) {
        super(message, cause);
    }
}
