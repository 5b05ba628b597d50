package org.jwarp.soft;

import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaProvider;
import org.jwarp.verbs.RdmaProviderFactory;

/**
 * ServiceLoader entry of the embedded pure-Java iWARP provider ({@code soft}): MPA (RFC 5044,
 * RFC 6581), DDP (RFC 5041) and RDMAP (RFC 5040) over NIO TCP. It runs everywhere a JVM does.
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
}
