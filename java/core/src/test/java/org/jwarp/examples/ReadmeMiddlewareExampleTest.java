package org.jwarp.examples;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Runs the README's middleware example on the soft provider over loopback, and checks that the
 * README shows exactly the example's source, imports included, so the block compiles as pasted
 * (RFC 5041 §5.1 shared buffers, RFC 5040 §6.9 solicited events, RFC 5041 §5.3 scatter-gather).
 */
class ReadmeMiddlewareExampleTest {
    @Test
    void readmeExampleRunsOnSoft_5041_5_1() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        String before = System.getProperty("jwarp.provider");
        System.setProperty("jwarp.provider", "soft");
        try {
            ReadmeMiddlewareExample.example("127.0.0.1", port);
        } finally {
            if (before == null) {
                System.clearProperty("jwarp.provider");
            } else {
                System.setProperty("jwarp.provider", before);
            }
        }
    }

    @Test
    void readmeShowsTheCompiledExample() throws Exception {
        Path root = Path.of("").toAbsolutePath();
        while (root != null && !Files.exists(root.resolve("README.md"))) {
            root = root.getParent();
        }
        assertTrue(root != null, "README.md not found above " + Path.of("").toAbsolutePath());
        List<String> src = Files.readAllLines(root.resolve(
                "java/core/src/test/java/org/jwarp/examples/ReadmeMiddlewareExample.java"), StandardCharsets.UTF_8);
        int b = src.indexOf("// README-BEGIN");
        int e = src.indexOf("// README-END");
        assertTrue(b >= 0 && e > b, "markers missing");
        StringBuilder block = new StringBuilder();
        for (String line : src.subList(b + 1, e)) {
            block.append(line).append('\n');
        }
        String readme = Files.readString(root.resolve("README.md"), StandardCharsets.UTF_8);
        assertTrue(readme.contains("```java run-quick\n" + block + "```"),
                "README.md must show ReadmeMiddlewareExample's block as a java run-quick block:\n" + block);
    }
}
