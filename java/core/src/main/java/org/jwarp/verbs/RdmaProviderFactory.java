package org.jwarp.verbs;

/** ServiceLoader entry point of a provider ({@code META-INF/services/org.jwarp.verbs.RdmaProviderFactory}). */
public interface RdmaProviderFactory {
    /** {@return the short stable name, e.g. {@code soft} or {@code disni}} */
    String name();

    /** {@return null when the provider can run on this machine, otherwise the reason it cannot} */
    String unavailableReason();

    /**
     * Opens the provider.
     *
     * @return the open provider
     * @throws ProviderUnavailableException carrying {@link #unavailableReason()} when it cannot run here
     * @throws RdmaException                when it fails to open
     */
    RdmaProvider open() throws RdmaException;

    /**
     * Opens the provider with {@code settings}: its tunables by their system-property names (the
     * soft provider's {@code jwarp.soft.*}), which win over the system properties. Names of other
     * providers are ignored; a provider without tunables ignores them all.
     *
     * @param settings tunables by property name
     * @return the open provider
     * @throws ProviderUnavailableException when it cannot run here
     * @throws RdmaException                when it fails to open
     */
    default RdmaProvider open(java.util.Map<String, String> settings) throws RdmaException {
        return open();
    }
}
