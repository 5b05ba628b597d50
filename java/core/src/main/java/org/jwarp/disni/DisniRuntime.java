package org.jwarp.disni;

import java.lang.reflect.InvocationTargetException;
import java.nio.file.Path;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The loaded DiSNI runtime: the class loader that defines DiSNI and jwarp's DiSNI-facing
 * classes with the native library bound to it. DiSNI drives RNICs implementing RFC 5040
 * (RDMAP) / RFC 5041 (DDP) / RFC 5044 (MPA) in the kernel (siw, cxgb4, irdma) and RoCE devices.
 *
 * <p>{@link #get()} loads it once per JVM; failures are remembered and rethrown as
 * {@link DisniUnavailableException} naming the reason.
 */
public final class DisniRuntime {
    private static final Logger LOG = LoggerFactory.getLogger(DisniRuntime.class);
    private static final String NATIVES = "org.jwarp.disni.natives.JwarpNative";
    /** Extension version this build of the Java classes expects from the library. */
    static final int EXPECTED_EXTENSION_VERSION = 10;

    private static final Object LOCK = new Object();
    private static DisniRuntime instance;
    private static DisniUnavailableException failure;

    private final DisniClassLoader loader;

    private DisniRuntime(DisniClassLoader loader) {
        this.loader = loader;
    }

    /** The runtime, loading it on first use. */
    public static DisniRuntime get() {
        synchronized (LOCK) {
            if (instance != null) {
                return instance;
            }
            if (failure != null) {
                throw new DisniUnavailableException(failure.getMessage(), failure);
            }
            try {
                instance = load();
                return instance;
            } catch (DisniUnavailableException e) {
                failure = e;
                throw e;
            }
        }
    }

    /** Whether the runtime loads; never throws. */
    public static boolean isAvailable() {
        try {
            get();
            return true;
        } catch (DisniUnavailableException e) {
            return false;
        }
    }

    /** Why the runtime is unavailable, if it is. */
    public static Optional<String> unavailableReason() {
        try {
            get();
            return Optional.empty();
        } catch (DisniUnavailableException e) {
            return Optional.of(e.getMessage());
        }
    }

    /** slf4j-simple's level property for DiSNI's loggers; DiSNI logs every CM and verbs call at INFO. */
    static final String DISNI_LOG_LEVEL_PROPERTY = "org.slf4j.simpleLogger.log.com.ibm.disni";

    /**
     * Whether DiSNI's {@code MemoryUtils} may read {@code DirectBuffer.address()}: true when
     * {@code java.base/sun.nio.ch} is exported to the unnamed modules (the jar manifest's
     * Add-Exports with {@code java -jar}, or {@code --add-exports} on the command line).
     */
    public boolean directBufferAccess() {
        return Object.class.getModule().isExported("sun.nio.ch", loader.getUnnamedModule());
    }

    private static DisniRuntime load() {
        System.getProperties().putIfAbsent(DISNI_LOG_LEVEL_PROPERTY, "warn");
        String os = System.getProperty("os.name", "");
        if (!os.toLowerCase(java.util.Locale.ROOT).startsWith("linux")) {
            throw new DisniUnavailableException("DiSNI needs Linux rdma-core; this is " + os);
        }
        ClassLoader parent = DisniRuntime.class.getClassLoader();
        if (parent.getResource("com/ibm/disni/verbs/impl/NativeDispatcher.class") == null) {
            throw new DisniUnavailableException("com.ibm.disni:disni is not on the class path");
        }
        Path lib = NativeLibrary.extractBundled(parent).orElse(null);
        if (lib == null) {
            LOG.info("no bundled {} for {}; trying java.library.path", NativeLibrary.FILE_NAME, NativeLibrary.platform());
        }
        DisniClassLoader loader = new DisniClassLoader(parent, lib);
        if (!Object.class.getModule().isExported("sun.nio.ch", loader.getUnnamedModule())) {
            throw new DisniUnavailableException("DiSNI reads direct buffer addresses through sun.nio.ch: run the JVM with "
                    + "--add-exports java.base/sun.nio.ch=ALL-UNNAMED (java -jar jwarp.jar sets it from the manifest)");
        }
        int ext;
        try {
            Class<?> nat = Class.forName(NATIVES, true, loader);
            ext = (int) nat.getMethod("version").invoke(null);
        } catch (UnsatisfiedLinkError | ExceptionInInitializerError e) {
            throw new DisniUnavailableException(describeLinkFailure(lib, e), e);
        } catch (InvocationTargetException e) {
            Throwable c = e.getCause();
            if (c instanceof UnsatisfiedLinkError) {
                throw new DisniUnavailableException(describeLinkFailure(lib, c), c);
            }
            throw new DisniUnavailableException("jwarp native extension failed: " + c, c);
        } catch (ReflectiveOperationException e) {
            throw new DisniUnavailableException("jwarp native extension class missing: " + e, e);
        }
        if (ext != EXPECTED_EXTENSION_VERSION) {
            throw new DisniUnavailableException("libdisni at " + (lib != null ? lib : "java.library.path")
                    + " has jwarp extension version " + ext + ", this jar needs " + EXPECTED_EXTENSION_VERSION
                    + " (a foreign libdisni shadows the bundled one?)");
        }
        LOG.debug("DiSNI runtime loaded, library {}", lib != null ? lib : "from java.library.path");
        return new DisniRuntime(loader);
    }

    private static String describeLinkFailure(Path lib, Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && !(t instanceof UnsatisfiedLinkError)) {
            t = t.getCause();
        }
        String msg = String.valueOf(t.getMessage());
        if (lib == null) {
            return "no libdisni bundled for " + NativeLibrary.platform() + " and none on java.library.path (" + msg
                    + "); build with rdma-core headers (libibverbs-dev, librdmacm-dev) installed";
        }
        if (msg.contains("libibverbs") || msg.contains("librdmacm")) {
            return "rdma-core is not installed (" + msg + "); install libibverbs1 and librdmacm1";
        }
        return "libdisni at " + lib + " does not load: " + msg;
    }

    /** The loader defining {@code com.ibm.disni.*}, {@code org.jwarp.disni.impl.*} and natives. */
    public ClassLoader classLoader() {
        return loader;
    }

    /** The extracted native library, empty when it came from java.library.path. */
    public Optional<Path> libraryPath() {
        return Optional.ofNullable(loader.library());
    }

    /**
     * Instantiates {@code implClass} (a class in {@code org.jwarp.disni.impl}, no-arg
     * constructor) inside the DiSNI loader and returns it as {@code iface}, a type the caller's
     * loader owns.
     */
    public <T> T newInstance(String implClass, Class<T> iface) {
        if (!DisniClassLoader.childFirst(implClass)) {
            throw new IllegalArgumentException(implClass + " is not defined by the DiSNI loader");
        }
        try {
            Class<?> c = Class.forName(implClass, true, loader);
            return iface.cast(c.getDeclaredConstructor().newInstance());
        } catch (InvocationTargetException e) {
            Throwable c = e.getCause();
            if (c instanceof RuntimeException r) {
                throw r;
            }
            if (c instanceof Error err) {
                throw err;
            }
            throw new DisniUnavailableException(implClass + " failed to start: " + c, c);
        } catch (ReflectiveOperationException e) {
            throw new DisniUnavailableException(implClass + " cannot be instantiated: " + e, e);
        }
    }
}
