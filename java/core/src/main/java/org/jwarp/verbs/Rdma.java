package org.jwarp.verbs;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;

/**
 * Provider discovery: providers register a {@link RdmaProviderFactory} through
 * {@link ServiceLoader}. The embedded pure-Java iWARP provider ({@value #DEFAULT_PROVIDER}) is the
 * default; it needs no RNIC.
 */
public final class Rdma {
    /** Name of the embedded default provider. */
    public static final String DEFAULT_PROVIDER = "soft";
    /** System property that overrides the default provider name. */
    public static final String PROVIDER_PROPERTY = "jwarp.provider";

    private Rdma() {
    }

    /**
     * All factories visible to this class's loader, in ServiceLoader order, available or not
     * ({@link RdmaProviderFactory#unavailableReason()} tells).
     *
     * @return the factories, a new list
     */
    public static List<RdmaProviderFactory> factories() {
        List<RdmaProviderFactory> out = new ArrayList<>();
        for (RdmaProviderFactory f : ServiceLoader.load(RdmaProviderFactory.class, Rdma.class.getClassLoader())) {
            out.add(f);
        }
        return out;
    }

    /**
     * Opens the provider named by the system property {@value #PROVIDER_PROPERTY}, or the soft
     * provider.
     *
     * @return the open provider; close it when done
     * @throws ProviderUnavailableException as {@link #open(String)}
     * @throws RdmaException                when the provider fails to open
     */
    public static RdmaProvider openDefault() throws RdmaException {
        return open(System.getProperty(PROVIDER_PROPERTY, DEFAULT_PROVIDER));
    }

    /**
     * Opens a provider by name.
     *
     * @param name the provider's name, case-insensitive: {@code soft} or {@code disni}
     * @return the open provider; close it when done
     * @throws ProviderUnavailableException if no such provider exists or it cannot run here
     *                                      (the message says why, e.g. no rdma-core, no device)
     * @throws RdmaException                when the provider fails to open
     */
    public static RdmaProvider open(String name) throws RdmaException {
        return open(name, null);
    }

    /**
     * Opens a provider by name with {@code settings}, e.g. {@code Map.of("jwarp.soft.pollSpinMicros", "0")}:
     * the names of the system properties the provider reads, winning over them (README lists the
     * soft provider's). Names of other providers are ignored.
     *
     * @param name     the provider's name, case-insensitive
     * @param settings the provider's settings by property name, or null for none
     * @return the open provider; close it when done
     * @throws ProviderUnavailableException as {@link #open(String)}
     * @throws IllegalArgumentException     for an unknown name with the provider's prefix or a bad value
     * @throws RdmaException                when the provider fails to open
     */
    public static RdmaProvider open(String name, Map<String, String> settings) throws RdmaException {
        List<String> known = new ArrayList<>();
        for (RdmaProviderFactory f : factories()) {
            known.add(f.name());
            if (f.name().equalsIgnoreCase(name)) {
                return settings == null ? f.open() : f.open(settings);
            }
        }
        throw new ProviderUnavailableException(name, "no provider named '" + name + "'; known: " + known);
    }
}
