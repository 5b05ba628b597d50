package org.jwarp.disni;

import java.io.IOException;
import java.io.InputStream;
import java.net.JarURLConnection;
import java.net.URL;
import java.nio.file.Path;
import java.security.CodeSource;
import java.security.ProtectionDomain;
import java.security.cert.Certificate;
import java.util.List;

/**
 * Child-first class loader for DiSNI (the Java verbs binding used for RFC 5040/5041 devices)
 * and the jwarp classes that call it, so that {@code System.loadLibrary("disni")} in DiSNI's
 * static initializers is answered by {@link #findLibrary(String)} with the library extracted
 * from the jar. JDK 17 asks the defining loader's {@code findLibrary} before
 * {@code java.library.path}; when this loader has no extracted library it returns null and the
 * JDK falls back to {@code java.library.path} (a system libdisni works too).
 *
 * <p>Class bytes come from the parent's resources (the same jar or classes directory), so the
 * classes exist twice: the parent's copies are never initialised for the packages listed here.
 */
final class DisniClassLoader extends ClassLoader {
    /** Package prefixes defined by this loader rather than the parent. */
    static final List<String> CHILD_FIRST = List.of(
            "com.ibm.disni.",
            "org.jwarp.disni.impl.",
            "org.jwarp.disni.natives.");

    static {
        registerAsParallelCapable();
    }

    private final Path library;

    DisniClassLoader(ClassLoader parent, Path library) {
        super("jwarp-disni", parent);
        this.library = library;
    }

    static boolean childFirst(String name) {
        for (String p : CHILD_FIRST) {
            if (name.startsWith(p)) {
                return true;
            }
        }
        return false;
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        if (!childFirst(name)) {
            return super.loadClass(name, resolve);
        }
        synchronized (getClassLoadingLock(name)) {
            Class<?> c = findLoadedClass(name);
            if (c == null) {
                c = findClass(name);
            }
            if (resolve) {
                resolveClass(c);
            }
            return c;
        }
    }

    @Override
    protected Class<?> findClass(String name) throws ClassNotFoundException {
        String res = name.replace('.', '/') + ".class";
        URL url = getParent().getResource(res);
        if (url == null) {
            throw new ClassNotFoundException(name);
        }
        byte[] bytes;
        try (InputStream in = url.openStream()) {
            bytes = in.readAllBytes();
        } catch (IOException e) {
            throw new ClassNotFoundException(name + ": " + e.getMessage(), e);
        }
        int dot = name.lastIndexOf('.');
        if (dot > 0) {
            String pkg = name.substring(0, dot);
            if (getDefinedPackage(pkg) == null) {
                try {
                    definePackage(pkg, null, null, null, null, null, null, null);
                } catch (IllegalArgumentException raced) {
                    // defined concurrently by another thread: fine
                }
            }
        }
        return defineClass(name, bytes, 0, bytes.length, domainOf(url, res));
    }

    private static ProtectionDomain domainOf(URL url, String res) {
        URL location = null;
        try {
            if ("jar".equals(url.getProtocol())) {
                location = ((JarURLConnection) url.openConnection()).getJarFileURL();
            } else {
                String s = url.toString();
                location = new URL(s.substring(0, s.length() - res.length()));
            }
        } catch (IOException | ClassCastException e) {
            location = null;
        }
        return new ProtectionDomain(new CodeSource(location, (Certificate[]) null), null);
    }

    @Override
    protected String findLibrary(String libname) {
        if (library != null && NativeLibrary.NAME.equals(libname)) {
            return library.toAbsolutePath().toString();
        }
        return null;
    }

    /** The extracted library this loader answers with, or null when it defers to java.library.path. */
    Path library() {
        return library;
    }
}
