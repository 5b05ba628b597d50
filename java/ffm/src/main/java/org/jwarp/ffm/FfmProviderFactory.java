package org.jwarp.ffm;

import java.lang.reflect.InvocationTargetException;
import org.jwarp.verbs.ProviderUnavailableException;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaProvider;
import org.jwarp.verbs.RdmaProviderFactory;

/**
 * The {@value #NAME} provider's entry in {@code META-INF/services}. Compiled for release 17 like
 * {@link FfmRuntime}: a Java 17 JVM that finds {@code jwarp-ffm} on its class path loads it, lists
 * the provider as unavailable with the reason, and opens the others as before. The Java 25
 * provider class is named only by string and loaded only after {@link FfmRuntime} found the JVM
 * and rdma-core able to run it.
 */
public final class FfmProviderFactory implements RdmaProviderFactory {
    public static final String NAME = "ffm";
    static final String PROVIDER = "org.jwarp.ffm.impl.FfmProvider";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String unavailableReason() {
        String why = FfmRuntime.unavailableReason();
        if (why != null) {
            return why;
        }
        try {
            Class.forName(PROVIDER, false, FfmProviderFactory.class.getClassLoader());
            return null;
        } catch (ClassNotFoundException e) {
            return "this jwarp-ffm has no connection manager yet (" + PROVIDER + " is missing): only its device objects "
                    + "and post/poll can be used";
        }
    }

    @Override
    public RdmaProvider open() throws RdmaException {
        String why = unavailableReason();
        if (why != null) {
            throw new ProviderUnavailableException(NAME, why);
        }
        try {
            return Class.forName(PROVIDER).asSubclass(RdmaProvider.class).getConstructor().newInstance();
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof RdmaException r) {
                throw r;
            }
            throw new ProviderUnavailableException(NAME, String.valueOf(e.getCause()), e.getCause());
        } catch (ReflectiveOperationException | LinkageError e) {
            throw new ProviderUnavailableException(NAME, "its Java 25 classes did not load: " + e, e);
        }
    }
}
