package org.jwarp.disni;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds the jwarp build of {@code libdisni.so} packaged in the jar and extracts it to a
 * content-addressed cache directory, so the DiSNI provider (verbs of RFC 5040 / RFC 5041
 * devices) loads without LD_LIBRARY_PATH. The library lives in the jar at
 * {@code org/jwarp/native/linux-<arch>/libdisni.so}.
 *
 * <p>Cache: {@code -Djwarp.native.cache=DIR}, else {@code $XDG_CACHE_HOME/jwarp/native}, else
 * {@code ~/.cache/jwarp/native}; a temp directory if none is writable. The file sits in a
 * directory named after its SHA-256, so two versions never collide and a half-written file is
 * never used (written beside, then moved in atomically).
 */
public final class NativeLibrary {
    private static final Logger LOG = LoggerFactory.getLogger(NativeLibrary.class);

    /** Short name passed to System.loadLibrary by DiSNI's static initializers. */
    public static final String NAME = "disni";
    /** File name of the library on Linux. */
    public static final String FILE_NAME = "lib" + NAME + ".so";
    /** Folder in the jar holding one sub-folder per platform. */
    public static final String RESOURCE_ROOT = "org/jwarp/native/";

    private NativeLibrary() {
    }

    /** Platform folder name, e.g. {@code linux-x86_64}. */
    public static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        String osPart = os.startsWith("linux") ? "linux" : os.replace(' ', '_');
        String archPart = switch (arch) {
            case "amd64", "x86_64" -> "x86_64";
            case "aarch64", "arm64" -> "aarch64";
            default -> arch;
        };
        return osPart + "-" + archPart;
    }

    /** Resource path of the bundled library for this platform. */
    public static String resourcePath() {
        return RESOURCE_ROOT + platform() + "/" + FILE_NAME;
    }

    /**
     * Extracts the bundled library (if the jar has one for this platform) and returns its path;
     * empty when none is bundled.
     */
    public static Optional<Path> extractBundled(ClassLoader from) {
        String res = resourcePath();
        byte[] bytes;
        try (InputStream in = from.getResourceAsStream(res)) {
            if (in == null) {
                return Optional.empty();
            }
            bytes = in.readAllBytes();
        } catch (IOException e) {
            throw new DisniUnavailableException("cannot read " + res + " from the jar: " + e.getMessage(), e);
        }
        String sha = sha256(bytes);
        IOException last = null;
        for (Path base : cacheCandidates()) {
            try {
                return Optional.of(place(base.resolve(sha), bytes, sha));
            } catch (IOException e) {
                last = e;
                LOG.debug("native cache {} not usable: {}", base, e.toString());
            }
        }
        try {
            Path tmp = Files.createTempDirectory("jwarp-native-");
            Path p = place(tmp, bytes, sha);
            p.toFile().deleteOnExit();
            tmp.toFile().deleteOnExit();
            return Optional.of(p);
        } catch (IOException e) {
            if (last != null) {
                e.addSuppressed(last);
            }
            throw new DisniUnavailableException("cannot extract " + FILE_NAME + " to any cache or temp directory: "
                    + e.getMessage(), e);
        }
    }

    private static Path place(Path dir, byte[] bytes, String sha) throws IOException {
        Path target = dir.resolve(FILE_NAME);
        if (Files.isRegularFile(target) && Files.size(target) == bytes.length
                && sha.equals(sha256(Files.readAllBytes(target)))) {
            return target;
        }
        Files.createDirectories(dir);
        Path part = Files.createTempFile(dir, FILE_NAME, ".part");
        try {
            Files.write(part, bytes);
            try {
                Files.move(part, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(part, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(part);
        }
        return target;
    }

    private static Iterable<Path> cacheCandidates() {
        java.util.List<Path> out = new java.util.ArrayList<>(3);
        String prop = System.getProperty("jwarp.native.cache");
        if (prop != null && !prop.isBlank()) {
            out.add(Paths.get(prop));
        }
        String xdg = System.getenv("XDG_CACHE_HOME");
        if (xdg != null && !xdg.isBlank()) {
            out.add(Paths.get(xdg, "jwarp", "native"));
        }
        String home = System.getProperty("user.home");
        if (home != null && !home.isBlank()) {
            out.add(Paths.get(home, ".cache", "jwarp", "native"));
        }
        return out;
    }

    static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is mandatory in every JDK", e);
        }
    }
}
