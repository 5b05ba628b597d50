package org.jwarp.verbs;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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

    /** Skipped entries after which discovery stops (a services entry is consumed by each). */
    private static final int MAX_SKIPPED = 64;
    private static final Logger LOG = LoggerFactory.getLogger(Rdma.class);
    /** Factories already reported at WARN: each once per JVM, not on every lookup. */
    private static final Set<String> WARNED = ConcurrentHashMap.newKeySet();
    /** "Provider a.b.C could not be instantiated", "Provider a.b.C not found", "a.b.C not a subtype". */
    private static final Pattern SCE_CLASS = Pattern.compile("(?:Provider )?([\\w$.]+) (?:could not|not found|not a subtype)");
    /** "a/b/C has been compiled by a more recent version ...": a class file the JVM refused. */
    private static final Pattern LINKAGE_CLASS = Pattern.compile("^([\\w$/]+) ");

    private Rdma() {
    }

    /**
     * All factories visible to this class's loader, in ServiceLoader order, available or not
     * ({@link RdmaProviderFactory#unavailableReason()} tells), without those that fail to load
     * ({@link #skippedFactories()}).
     *
     * @return the factories, an unmodifiable list
     */
    public static List<RdmaProviderFactory> factories() {
        return factories(Rdma.class.getClassLoader());
    }

    /**
     * The provider factories listed for this class's loader that could not be loaded, each as
     * "{@code class name: why}" (e.g. a factory compiled for a newer Java than the running one, one
     * whose static initializer threw, one listed but absent). {@link #factories()} leaves them out
     * and logs each once at WARN.
     *
     * @return one line per factory skipped, an unmodifiable list (empty when all loaded)
     */
    public static List<String> skippedFactories() {
        return skippedFactories(Rdma.class.getClassLoader());
    }

    static List<RdmaProviderFactory> factories(ClassLoader loader) {
        return discover(loader).factories();
    }

    static List<String> skippedFactories(ClassLoader loader) {
        return discover(loader).skipped();
    }

    /** What one pass of ServiceLoader over {@code loader} found. */
    private record Discovery(List<RdmaProviderFactory> factories, List<String> skipped) {
    }

    /**
     * One ServiceLoader pass. A factory that fails to load ({@link ServiceConfigurationError}: not
     * found, not a subtype, its constructor or static initializer threw; or a {@link LinkageError}
     * such as {@link UnsupportedClassVersionError} while its class is read) is skipped and the
     * iteration goes on with the next one; one listed by a loader's services file never prevents
     * another provider from opening.
     */
    private static Discovery discover(ClassLoader loader) {
        List<RdmaProviderFactory> found = new ArrayList<>();
        List<String> skipped = new ArrayList<>();
        Iterator<RdmaProviderFactory> it = ServiceLoader.load(RdmaProviderFactory.class, loader).iterator();
        while (true) {
            RdmaProviderFactory f;
            try {
                if (!it.hasNext()) {
                    break;
                }
                f = it.next();
            } catch (ServiceConfigurationError | LinkageError e) {
                skipped.add(skip(e));
                // each failure consumes one services entry; this bound only guards against a loader failing forever
                if (skipped.size() == MAX_SKIPPED) {
                    LOG.warn("Stopped looking for RDMA provider factories after {} failed to load", MAX_SKIPPED);
                    skipped.add("discovery stopped after " + MAX_SKIPPED + " factories failed to load");
                    break;
                }
                continue;
            }
            found.add(f);
        }
        return new Discovery(List.copyOf(found), List.copyOf(skipped));
    }

    /** The "class: why" line of a factory that failed to load; logs it once at WARN. */
    private static String skip(Throwable e) {
        String msg = e.getMessage() == null ? "" : e.getMessage();
        String cls = null;
        if (e instanceof ServiceConfigurationError) {
            Matcher m = SCE_CLASS.matcher(msg);
            cls = m.find() ? m.group(1) : null;
        } else if (e instanceof UnsupportedClassVersionError) {
            Matcher m = LINKAGE_CLASS.matcher(msg);
            cls = m.find() ? m.group(1).replace('/', '.') : null;
        }
        StringBuilder why = new StringBuilder(e.toString());
        for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
            why.append("; caused by ").append(c);
        }
        String line = (cls != null ? cls : "a provider factory") + ": " + why;
        if (WARNED.add(cls != null ? cls : line)) {
            LOG.warn("Skipping RDMA provider factory {}: it failed to load ({}); the other providers are "
                    + "unaffected", cls != null ? cls : "listed in META-INF/services/" + RdmaProviderFactory.class.getName(),
                    why);
        }
        return line;
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
        return open(name, settings, Rdma.class.getClassLoader());
    }

    static RdmaProvider open(String name, Map<String, String> settings, ClassLoader loader) throws RdmaException {
        Discovery d = discover(loader);
        List<String> known = new ArrayList<>();
        for (RdmaProviderFactory f : d.factories()) {
            known.add(f.name());
            if (f.name().equalsIgnoreCase(name)) {
                return settings == null ? f.open() : f.open(settings);
            }
        }
        throw new ProviderUnavailableException(name, "no provider named '" + name + "'; known: " + known
                + (d.skipped().isEmpty() ? "" : "; skipped, failed to load: " + d.skipped()));
    }
}
