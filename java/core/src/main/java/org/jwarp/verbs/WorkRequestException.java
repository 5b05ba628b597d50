package org.jwarp.verbs;

/** A work request was refused at post time; nothing was sent and no completion will follow. */
public class WorkRequestException extends RdmaException {
    private static final long serialVersionUID = 1L;

    public WorkRequestException(String message) {
        super(message);
    }
}
