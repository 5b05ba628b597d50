package org.jwarp.verbs;

/** The named provider cannot run here; the message says why (no rdma-core, no native library, no device). */
public class ProviderUnavailableException extends RdmaException {
    private static final long serialVersionUID = 1L;
    private final String provider;

    public ProviderUnavailableException(String provider, String reason) {
        super("provider '" + provider + "' unavailable: " + reason);
        this.provider = provider;
    }

    public ProviderUnavailableException(String provider, String reason, Throwable cause) {
        super("provider '" + provider + "' unavailable: " + reason, cause);
        this.provider = provider;
    }

    public String provider() {
        return provider;
    }
}
