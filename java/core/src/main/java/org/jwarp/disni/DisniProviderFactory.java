package org.jwarp.disni;

import org.jwarp.verbs.ProviderUnavailableException;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaProvider;
import org.jwarp.verbs.RdmaProviderFactory;

/**
 * ServiceLoader entry of the DiSNI provider ({@code disni}): kernel RNICs and soft devices
 * (siw for RFC 5040/5041/5044 iWARP with RFC 6581 setup, rxe for RoCE) through DiSNI 2.1 and the
 * libdisni bundled in the jar. The implementation is created inside the DiSNI class loader.
 */
public final class DisniProviderFactory implements RdmaProviderFactory {
    /** Provider name for {@code Rdma.open}. */
    public static final String NAME = "disni";
    static final String IMPL = "org.jwarp.disni.impl.DisniProviderImpl";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String unavailableReason() {
        return DisniRuntime.unavailableReason().orElse(null);
    }

    @Override
    public RdmaProvider open() throws RdmaException {
        DisniRuntime rt;
        try {
            rt = DisniRuntime.get();
        } catch (DisniUnavailableException e) {
            throw new ProviderUnavailableException(NAME, e.getMessage(), e);
        }
        try {
            return rt.newInstance(IMPL, RdmaProvider.class);
        } catch (DisniUnavailableException e) {
            throw new ProviderUnavailableException(NAME, e.getMessage(), e);
        }
    }
}
