package org.jwarp.verbs;

import java.io.IOException;

/**
 * Base of every checked error the verbs API raises: setup failures, refused work requests
 * ({@link WorkRequestException}), rejections and TERMs ({@link ConnectionRejectedException},
 * {@link ConnectionTerminatedException}), timeouts ({@link RdmaTimeoutException}) and unavailable
 * providers ({@link ProviderUnavailableException}). Data-path failures after a successful post are
 * not thrown: they arrive as error {@link WorkCompletion}s and {@link AsyncEvent}s.
 */
public class RdmaException extends IOException {
    private static final long serialVersionUID = 1L;

    /**
     * An error with a message.
     *
     * @param message what failed and why
     */
    public RdmaException(String message) {
        super(message);
    }

    /**
     * An error with a message and its cause.
     *
     * @param message what failed and why
     * @param cause   the underlying failure
     */
    public RdmaException(String message, Throwable cause) {
        super(message, cause);
    }
}
