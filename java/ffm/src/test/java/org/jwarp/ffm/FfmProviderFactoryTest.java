package org.jwarp.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.jwarp.verbs.Rdma;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The provider factory as a Java 17 application meets it: {@code jwarp-ffm} on the class path of
 * the JVM Maven runs on (JDK 17 in this build) must leave {@code Rdma.open("soft")} and
 * {@code Rdma.open("disni")} (DiSNI on the class path, sun.nio.ch exported as the CLI jar does) working and
 * list {@code ffm} as unavailable, with the reason, instead of failing ServiceLoader with a
 * class-version error.
 */
class FfmProviderFactoryTest {
    /** Run on the build JVM from source (JEP 330), so it is compiled by that JVM for that JVM. */
    private static final String PROBE = """
            import org.jwarp.verbs.Rdma;
            import org.jwarp.verbs.RdmaException;
            import org.jwarp.verbs.RdmaProvider;
            import org.jwarp.verbs.RdmaProviderFactory;

            public class Probe {
                public static void main(String[] args) throws Exception {
                    try (RdmaProvider soft = Rdma.open("soft")) {
                        System.out.println("opened " + soft.name());
                    }
                    for (RdmaProviderFactory f : Rdma.factories()) {
                        if (f.name().equals("ffm")) {
                            System.out.println("ffm unavailable: " + f.unavailableReason());
                        }
                    }
                    System.out.println("skipped " + Rdma.skippedFactories());
                    try (RdmaProvider disni = Rdma.open("disni")) {
                        System.out.println("opened " + disni.name() + " with " + disni.devices().size() + " devices");
                    } catch (RdmaException e) {
                        System.out.println("disni refused: " + e.getMessage());
                    }
                    try {
                        Rdma.open("ffm").close();
                        System.out.println("ffm opened");
                    } catch (RdmaException e) {
                        System.out.println("ffm refused: " + e.getMessage());
                    }
                }
            }
            """;

    @Test
    void aJava17ApplicationStillOpensSoftAndIsToldWhyFfmIsUnavailable(@TempDir Path dir) throws Exception {
        String home = System.getProperty("jwarp.build.java.home");
        assertTrue(home != null && Files.isExecutable(Path.of(home, "bin", "java")), "jwarp.build.java.home: " + home);
        Path probe = Files.writeString(dir.resolve("Probe.java"), PROBE);
        String cp = List.of(FfmProviderFactory.class, Rdma.class, org.slf4j.LoggerFactory.class,
                org.slf4j.simple.SimpleLogger.class, com.ibm.disni.verbs.RdmaCm.class).stream().map(FfmProviderFactoryTest::location)
                .collect(Collectors.joining(java.io.File.pathSeparator));
        Process p = new ProcessBuilder(Path.of(home, "bin", "java").toString(),
                "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED", "-cp", cp, probe.toString())
                .redirectErrorStream(true).start();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the probe did not finish within 120 s");
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), out);
        Process v = new ProcessBuilder(Path.of(home, "bin", "java").toString(), "-version").redirectErrorStream(true).start();
        String version = new String(v.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(v.waitFor(60, TimeUnit.SECONDS));
        assertTrue(version.contains("version \"17"), "the build JVM is Java 17 in this project: " + version);
        assertTrue(out.contains("opened soft"), out);
        assertTrue(out.contains("opened disni"), out);
        assertTrue(out.contains("ffm unavailable: " + FfmRuntime.javaTooOld(17)), out);
        assertTrue(out.contains("skipped []"), out);
        assertTrue(out.contains("ffm refused: provider 'ffm' unavailable: " + FfmRuntime.javaTooOld(17)), out);
    }

    private static String location(Class<?> c) {
        try {
            return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
