package org.jwarp.verbs;

/** The named provider cannot run here; the message says why (no rdma-core, no native library, no device). */
public class ProviderUnavailableException extends RdmaException {
    private static final long serialVersionUID = 1L;
    private final String provider;

    /**
     * A provider that cannot run.
     *
     * @param provider the provider's name
     * @param reason   why it cannot run here
     */
    public ProviderUnavailableException(String provider, String reason) {
        super("provider '" + provider + "' unavailable: " + reason);
        this.provider = provider;
    }

    /**
     * A provider that cannot run, with the failure that showed it.
     *
     * @param provider the provider's name
     * @param reason   why it cannot run here
     * @param cause    the underlying failure (e.g. the native library's load error)
     */
    public ProviderUnavailableException(String provider, String reason, Throwable cause) {
        super("provider '" + provider + "' unavailable: " + reason, cause);
        this.provider = provider;
    }

    /** {@return the name of the provider that cannot run} */
    public String provider() {
        return provider;
    }
}
