package org.jwarp.soft;

import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaProvider;
import org.jwarp.verbs.RdmaProviderFactory;

/**
 * ServiceLoader entry of the embedded pure-Java iWARP provider ({@code soft}): MPA setup and FPDUs
 * (RFC 5044 §4 and §7.1, RFC 6581 §9), DDP placement (RFC 5041 §5, §7) and RDMAP data transfer
 * (RFC 5040 §5) over NIO TCP. It needs no RNIC and runs everywhere a JVM does.
 */
public final class SoftProviderFactory implements RdmaProviderFactory {
    public static final String NAME = "soft";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String unavailableReason() {
        return null;
    }

    @Override
    public RdmaProvider open() throws RdmaException {
        return new SoftProvider(SoftConfig.fromSystemProperties());
    }

    /** {@link SoftConfig#fromSettings}: defaults, then system properties, then {@code settings}. */
    @Override
    public RdmaProvider open(java.util.Map<String, String> settings) throws RdmaException {
        return new SoftProvider(SoftConfig.fromSettings(settings));
    }
}
