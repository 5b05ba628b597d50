package org.jwarp.examples.kv;

/** A key-value operation or the store failed; the message names the connection, the operation and what was seen. */
public class KvException extends Exception {
    private static final long serialVersionUID = 1L;

    public KvException(String message) {
        super(message);
    }

    public KvException(String message, Throwable cause) {
        super(message, cause);
    }
}
