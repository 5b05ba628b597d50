package org.jwarp.ffm.impl;

import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Path;
import org.jwarp.disni.NativeLibrary;

/**
 * jwarp's native library for the tests of {@link FfmNativeWait}: the build's
 * {@code libdisni.so} beside core's classes (host and guest), else extracted from core's jar.
 * Tests set {@value FfmNativeWait#PROPERTY} around what they create and clear it after.
 */
public final class NativeWaitLibrary {
    /** The system property {@link FfmNativeWait} reads. */
    public static final String PROPERTY = FfmNativeWait.PROPERTY;

    private NativeWaitLibrary() {
    }

    /** The library's path (the first use may extract it). */
    public static Path path() {
        ClassLoader cl = NativeWaitLibrary.class.getClassLoader();
        URL in = cl.getResource(NativeLibrary.resourcePath());
        if (in == null) {
            throw new IllegalStateException(NativeLibrary.resourcePath() + " is not on the class path (built with -Pno-native?)");
        }
        if (in.getProtocol().equals("file")) {
            try {
                return Path.of(in.toURI());
            } catch (URISyntaxException e) {
                throw new IllegalStateException(e);
            }
        }
        return NativeLibrary.extractBundled(cl).orElseThrow();
    }

    /**
     * The one-downcall wait the property names now ("jw_cq_await of PATH"), or null when a CQ
     * created now would await in Java steps (property unset, or the library or symbol missing,
     * which {@link FfmNativeWait} only warns about).
     */
    public static String configuredWait() {
        FfmNativeWait w = FfmNativeWait.configured();
        return w == null ? null : w.toString();
    }

    /** Runs {@code body} with the property naming {@code path} (null: unset), restoring it after. */
    static <T, E extends Exception> T with(String path, ThrowingSupplier<T, E> body) throws E {
        String was = System.getProperty(FfmNativeWait.PROPERTY);
        if (path == null) {
            System.clearProperty(FfmNativeWait.PROPERTY);
        } else {
            System.setProperty(FfmNativeWait.PROPERTY, path);
        }
        try {
            return body.get();
        } finally {
            if (was == null) {
                System.clearProperty(FfmNativeWait.PROPERTY);
            } else {
                System.setProperty(FfmNativeWait.PROPERTY, was);
            }
        }
    }

    interface ThrowingSupplier<T, E extends Exception> {
        T get() throws E;
    }
}
