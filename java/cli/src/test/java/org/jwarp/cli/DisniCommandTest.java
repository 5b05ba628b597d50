package org.jwarp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code jwarp disni info}: one JSON object whose {@code available} agrees with the exit code. */
class DisniCommandTest {
    @Test
    void infoPrintsAvailabilityMatchingTheExitCode() {
        CommandLine cl = new CommandLine(new JwarpCli());
        StringWriter out = new StringWriter();
        cl.setOut(new PrintWriter(out, true));
        int rc = cl.execute("disni", "info");
        String json = out.toString().trim();
        assertTrue(json.startsWith("{\"platform\":") && json.endsWith("}"), json);
        assertEquals(org.jwarp.disni.DisniRuntime.isAvailable(), rc == 0, json);
        if (rc == 0) {
            // the surefire JVM exports sun.nio.ch as the manifest does for java -jar
            assertTrue(json.contains("\"available\":true") && json.contains("\"directBufferAccess\":true"), json);
            assertTrue(json.contains("\"devices\":["), json);
        } else {
            assertEquals(DisniCommand.EXIT_UNAVAILABLE, rc);
            assertTrue(json.contains("\"available\":false") && json.contains("\"reason\":"), json);
        }
    }
}
