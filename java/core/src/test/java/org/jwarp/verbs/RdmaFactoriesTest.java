package org.jwarp.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Provider discovery survives a provider factory that cannot load: one compiled for a newer Java
 * than the running one (as a Java 25 provider is on Java 17), one whose static initializer throws,
 * one listed but absent. Each is skipped and reported; the others still open. The broken entries
 * live in a services file of a dedicated class loader, so no other test sees them.
 */
class RdmaFactoriesTest {
    static final String SERVICES = "META-INF/services/" + RdmaProviderFactory.class.getName();
    static final String FUTURE = "org.jwarp.verbs.fixture.FutureJavaFactory";
    static final String ABSENT = "org.jwarp.verbs.fixture.NoSuchFactory";

    /** A factory whose class initialization fails (only ever named by the test loader's services file). */
    public static final class ThrowingFactory implements RdmaProviderFactory {
        static {
            if (Boolean.parseBoolean("true")) {
                throw new IllegalStateException("static initializer of a broken provider");
            }
        }

        @Override
        public String name() {
            return "throwing";
        }

        @Override
        public String unavailableReason() {
            return null;
        }

        @Override
        public RdmaProvider open() {
            throw new AssertionError("never instantiated");
        }
    }

    /**
     * The smallest class file named {@code binaryName} (a subclass of Object, no members), with the
     * class-file major version of the next Java release: the running JVM refuses it with
     * UnsupportedClassVersionError, as Java 17 refuses a class compiled for Java 25 (version 69).
     */
    static byte[] classFileForNextJava(String binaryName) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        out.writeInt(0xCAFEBABE);
        out.writeShort(0);
        out.writeShort(Runtime.version().feature() + 44 + 1);
        out.writeShort(5); // constant pool count: entries 1..4
        out.writeByte(7); // 1: Class -> 2
        out.writeShort(2);
        out.writeByte(1); // 2: Utf8 this class
        out.writeUTF(binaryName.replace('.', '/'));
        out.writeByte(7); // 3: Class -> 4
        out.writeShort(4);
        out.writeByte(1); // 4: Utf8 java/lang/Object
        out.writeUTF("java/lang/Object");
        out.writeShort(0x0021); // public super
        out.writeShort(1);
        out.writeShort(3);
        out.writeShort(0); // interfaces
        out.writeShort(0); // fields
        out.writeShort(0); // methods
        out.writeShort(0); // attributes
        out.flush();
        return bytes.toByteArray();
    }

    /** A loader that sees the test class path plus a services file naming the three broken factories. */
    static URLClassLoader loaderWithBrokenFactories(Path dir) throws IOException {
        Path services = dir.resolve(SERVICES);
        Files.createDirectories(services.getParent());
        Files.writeString(services, FUTURE + "\n" + ThrowingFactory.class.getName() + "\n" + ABSENT + "\n",
                StandardCharsets.UTF_8);
        Path cls = dir.resolve(FUTURE.replace('.', '/') + ".class");
        Files.createDirectories(cls.getParent());
        Files.write(cls, classFileForNextJava(FUTURE));
        return new URLClassLoader(new URL[] {dir.toUri().toURL()}, RdmaFactoriesTest.class.getClassLoader());
    }

    @Test
    void aFactoryThatFailsToLoadIsSkippedAndReported(@TempDir Path dir) throws Exception {
        try (URLClassLoader loader = loaderWithBrokenFactories(dir)) {
            List<RdmaProviderFactory> found = Rdma.factories(loader);
            assertTrue(found.stream().anyMatch(f -> f.name().equals("soft")), found.toString());
            assertTrue(found.stream().noneMatch(f -> f.name().equals("throwing")), found.toString());

            List<String> skipped = Rdma.skippedFactories(loader);
            assertEquals(3, skipped.size(), skipped.toString());
            assertTrue(skipped.get(0).startsWith(FUTURE + ": ") && skipped.get(0).contains("UnsupportedClassVersionError"),
                    skipped.toString());
            assertTrue(skipped.get(1).startsWith(ThrowingFactory.class.getName() + ": ")
                    && skipped.get(1).contains("static initializer of a broken provider"), skipped.toString());
            assertTrue(skipped.get(2).startsWith(ABSENT + ": ") && skipped.get(2).contains("not found"),
                    skipped.toString());

            try (RdmaProvider soft = Rdma.open("soft", null, loader)) {
                assertEquals("soft", soft.name());
            }
            ProviderUnavailableException e = assertThrows(ProviderUnavailableException.class,
                    () -> Rdma.open("throwing", null, loader));
            assertTrue(e.getMessage().contains("skipped") && e.getMessage().contains(ThrowingFactory.class.getName())
                    && e.getMessage().contains(FUTURE) && e.getMessage().contains(ABSENT), e.getMessage());
        }
    }

    @Test
    void withoutBrokenFactoriesNothingIsSkipped() {
        assertEquals(List.of(), Rdma.skippedFactories(RdmaFactoriesTest.class.getClassLoader()));
        assertTrue(Rdma.factories().stream().anyMatch(f -> f.name().equals("soft")));
    }
}
