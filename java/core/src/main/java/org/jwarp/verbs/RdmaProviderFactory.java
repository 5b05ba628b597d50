package org.jwarp.verbs;

/** ServiceLoader entry point of a provider ({@code META-INF/services/org.jwarp.verbs.RdmaProviderFactory}). */
public interface RdmaProviderFactory {
    /** Short stable name, e.g. {@code soft} or {@code disni}. */
    String name();

    /** Null when the provider can run on this machine, otherwise the reason it cannot. */
    String unavailableReason();

    /** Opens the provider; throws {@link ProviderUnavailableException} carrying {@link #unavailableReason()}. */
    RdmaProvider open() throws RdmaException;

    /**
     * Opens the provider with {@code settings}: its tunables by their system-property names (the
     * soft provider's {@code jwarp.soft.*}), which win over the system properties. Names of other
     * providers are ignored; a provider without tunables ignores them all.
     */
    default RdmaProvider open(java.util.Map<String, String> settings) throws RdmaException {
        return open();
    }
}
