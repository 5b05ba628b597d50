package org.jwarp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code jwarp server --srq --events} answering {@code jwarp client --srq --events --verify} over
 * loopback on the soft provider: receive buffers from shared receive queues (RFC 5041 §5.1) on
 * both sides, every wait a sleep on a completion channel, payload verified end to end, and both
 * settings echoed in {@code --json}.
 */
class SrqEventsCommandTest {
    @ParameterizedTest(name = "server/client --op {0} --srq --events --verify {1}")
    @CsvSource({"send,'--sge,2'", "write,'--sge,2'", "read,'--sge,1'"})
    @DisplayName("--srq and --events end to end, verified (RFC 5041 §5.1)")
    void srqAndEventsVerified_5041_5_1(String op, String opts) throws Exception {
        int port = ServerCommandTest.freePort();
        ServerCommandTest.Server server = ServerCommandTest.Server.start("server", "--bind", "127.0.0.1", "--port",
                String.valueOf(port), "--count", "1", "--sge", "2", "--verify", "--srq", "--events").listening();
        List<String> args = new ArrayList<>(List.of("client", "127.0.0.1", "--port", String.valueOf(port), "--op", op,
                "--iters", "300", "--size", "1000", "--json", "--verify", "--srq", "--events"));
        args.addAll(List.of(opts.split(",")));
        CliCapture c = CliCapture.run(args.toArray(new String[0]));
        assertEquals(0, c.exit(), c.out() + c.err());
        assertEquals(List.of(op), c.strings("op"));
        assertTrue(c.out().contains("\"srq\":true"), c.out());
        assertTrue(c.out().contains("\"events\":true"), c.out());
        assertTrue(c.out().contains("\"verify\":true"), c.out());
        assertEquals(0, server.await(), server.out() + "\n" + server.err());
        assertTrue(server.out().toString().contains("connection done"), server.out() + "\n" + server.err());
    }
}
