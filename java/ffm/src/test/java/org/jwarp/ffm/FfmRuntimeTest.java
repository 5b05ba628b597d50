package org.jwarp.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The release-17 entry class: an older JVM loads it and is told why, before any Java 25 class. */
class FfmRuntimeTest {
    @Test
    void olderJavaIsRefusedByName() {
        String why = FfmRuntime.javaTooOld(17);
        assertTrue(why.contains("Java 25") && why.contains("Java 17"), why);
        assertNull(FfmRuntime.javaTooOld(25));
        assertNull(FfmRuntime.javaTooOld(26));
    }

    /**
     * The JVM Maven runs on (JDK 17 in this project's build) loads FfmRuntime from the module's
     * classes, where every other class is a Java 25 class file, and prints the refusal instead of
     * failing with UnsupportedClassVersionError.
     */
    @Test
    void theBuildJvmLoadsTheEntryClassAndIsToldWhy() throws Exception {
        String home = System.getProperty("jwarp.build.java.home");
        assertTrue(home != null && Files.isExecutable(Path.of(home, "bin", "java")), "jwarp.build.java.home: " + home);
        Path classes = Path.of(FfmRuntime.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Process p = new ProcessBuilder(Path.of(home, "bin", "java").toString(), "-cp", classes.toString(),
                FfmRuntime.class.getName()).redirectErrorStream(true).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the entry class did not answer within 60 s");
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        int feature = Integer.parseInt(out.replaceFirst("^java (\\d+):.*$", "$1"));
        if (feature < FfmRuntime.REQUIRED_FEATURE) {
            assertEquals("java " + feature + ": " + FfmRuntime.javaTooOld(feature), out);
            assertEquals(2, p.exitValue(), out);
        } else {
            assertTrue(!out.contains("UnsupportedClassVersionError"), out);
        }
    }
}
