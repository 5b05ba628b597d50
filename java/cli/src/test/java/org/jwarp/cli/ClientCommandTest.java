package org.jwarp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** {@code jwarp client} input checking and failure reporting. */
class ClientCommandTest {

    @Test
    @DisplayName("an unknown --op is a usage error naming the option")
    void unknownOp() {
        CliCapture c = CliCapture.run("client", "127.0.0.1", "--op", "teleport");
        assertEquals(2, c.exit());
        assertTrue(c.err().contains("--op"), c.err());
    }

    @Test
    @DisplayName("--passes 0 is a usage error naming the option")
    void passesAtLeastOne() {
        CliCapture c = CliCapture.run("client", "127.0.0.1", "--passes", "0");
        assertEquals(2, c.exit());
        assertTrue(c.err().contains("--passes"), c.err());
    }

    @Test
    @DisplayName("the bandwidth of passes is their median (the upper one of an even count), min and max beside it")
    void bandwidthMedianOfPasses() {
        Workload.Bandwidth b = Workload.Bandwidth.of(new double[] {300, 100, 500, 200, 400}, 7, 12);
        assertEquals(300, b.median());
        assertEquals(100, b.min());
        assertEquals(500, b.max());
        assertEquals(5, b.passes());
        assertEquals(7, b.opsPerPass());
        assertEquals(12, b.jitMillis());
        assertEquals(300, Workload.Bandwidth.of(new double[] {400, 100, 300, 200}, 1, 0).median());
        assertEquals(100, Workload.Bandwidth.of(new double[] {100}, 1, 0).median());
    }

    @Test
    @DisplayName("no server: exit 1, the refused connection in words with a hint, no class names")
    void noServer() throws Exception {
        int port = ServerCommandTest.freePort();
        CliCapture c = CliCapture.run("client", "127.0.0.1", "--port", String.valueOf(port), "--timeout", "3000");
        assertEquals(1, c.exit());
        assertEquals("jwarp: cannot connect to 127.0.0.1:" + port + ": connection refused. Is `jwarp server` running on "
                + "127.0.0.1:" + port + "?", c.err().strip(), c.err());
        assertFalse(c.err().contains("Exception"), c.err());
    }

    @Test
    @DisplayName("-V prints the project version as Maven has it")
    void versionIsMavens() {
        CliCapture c = CliCapture.run("-V");
        assertEquals(0, c.exit());
        String expected = System.getProperty("jwarp.expectedVersion");
        assertTrue(expected != null && !expected.isBlank(), "surefire passes jwarp.expectedVersion");
        assertEquals("jwarp " + expected, c.out().strip());
    }

    @Test
    @DisplayName("a runtime failure prints its messages without class names")
    void failuresInWords() {
        assertEquals("socket timeout", UserError.describe(new java.net.SocketTimeoutException()));
        assertEquals("outer: inner", UserError.describe(new IllegalStateException("outer", new java.io.IOException("inner"))));
    }

    @Test
    @DisplayName("an unknown provider is reported with the known ones")
    void unknownProvider() {
        CliCapture c = CliCapture.run("client", "127.0.0.1", "--provider", "nope");
        assertEquals(1, c.exit());
        assertTrue(c.err().contains("soft"), c.err());
    }
}
