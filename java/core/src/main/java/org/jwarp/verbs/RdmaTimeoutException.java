package org.jwarp.verbs;

/** A connection-setup step did not finish in time. */
public class RdmaTimeoutException extends RdmaException {
    private static final long serialVersionUID = 1L;

    /**
     * A timeout.
     *
     * @param message the step and the time it was given
     */
    public RdmaTimeoutException(String message) {
        super(message);
    }
}
