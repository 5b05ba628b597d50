package org.jwarp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
    @DisplayName("no server: exit 1 with the connection error")
    void noServer() throws Exception {
        int port = ServerCommandTest.freePort();
        CliCapture c = CliCapture.run("client", "127.0.0.1", "--port", String.valueOf(port), "--timeout", "3000");
        assertEquals(1, c.exit());
        assertTrue(c.err().startsWith("jwarp: "), c.err());
    }

    @Test
    @DisplayName("an unknown provider is reported with the known ones")
    void unknownProvider() {
        CliCapture c = CliCapture.run("client", "127.0.0.1", "--provider", "nope");
        assertEquals(1, c.exit());
        assertTrue(c.err().contains("soft"), c.err());
    }
}
