package org.jwarp.disni;

/**
 * The DiSNI provider cannot run on this machine: no native library for the platform, rdma-core
 * (libibverbs/librdmacm, which carry the RDMA verbs of RFC 5040/5041 hardware) not installed,
 * a version mismatch, or the JDK 17 export DiSNI needs is missing. The message names the
 * reason and what to do about it.
 */
public final class DisniUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Why the provider is unavailable, as one sentence. */
    public DisniUnavailableException(String reason) {
        super(reason);
    }

    /** Why the provider is unavailable, with the underlying failure. */
    public DisniUnavailableException(String reason, Throwable cause) {
        super(reason, cause);
    }
}
