package org.jwarp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code jwarp server --srq --events} against {@code jwarp client --srq --events --verify} on the
 * DiSNI provider over siw0 and rxe0 in the qemu guest: receive buffers from {@code ibv_srq}
 * (RFC 5041 §5.1 untagged buffers) and every wait a sleep on an {@code ibv_comp_channel}. Guest
 * only; fails when a device is missing. The soft loopback run is {@link SrqEventsCommandTest}.
 */
@Tag("guest")
@Tag("device")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SrqEventsDeviceTest {
    static final long LISTEN_S = 300;
    static final long RUN_S = 300;

    @BeforeAll
    void guestAndWarmUp() throws Exception {
        if (!"1".equals(System.getenv("JWARP_GUEST"))) {
            fail("JWARP_GUEST is not set: SrqEventsDeviceTest needs siw0 and rxe0 (scripts/guest-tests --select "
                    + "org.jwarp.cli.SrqEventsDeviceTest)");
        }
        for (String dev : List.of("siw0", "rxe0")) {
            if (!Files.isDirectory(Path.of("/sys/class/infiniband", dev))) {
                fail("RDMA device " + dev + " is missing: the guest did not bring it up");
            }
        }
        // a cold JVM under TCG may answer siw's MPA Request after siw's own timeout: warm up first
        StringBuilder failures = new StringBuilder();
        for (int attempt = 1; attempt <= 3; attempt++) {
            try {
                run("siw0", "send", 5, "--sge", "1");
                return;
            } catch (AssertionError e) {
                failures.append("attempt ").append(attempt).append(": ").append(e.getMessage()).append('\n');
            }
        }
        fail("warm-up failed three times\n" + failures);
    }

    static CliCapture run(String dev, String op, int iters, String... clientOpts) throws Exception {
        String ip = ClientServerDeviceTest.ip(dev);
        int port = ServerCommandTest.freePort();
        ServerCommandTest.Server server = ServerCommandTest.Server.start("server", "--provider", "disni", "--bind", ip,
                "--port", String.valueOf(port), "--count", "1", "--sge", "2", "--verify", "--srq", "--events")
                .listening(LISTEN_S);
        List<String> args = new ArrayList<>(List.of("client", ip, "--provider", "disni", "--bind", ip, "--port",
                String.valueOf(port), "--op", op, "--iters", String.valueOf(iters), "--size", "1000", "--json",
                "--verify", "--srq", "--events", "--timeout", "60000"));
        args.addAll(List.of(clientOpts));
        CliCapture c = CliCapture.run(args.toArray(new String[0]));
        String why = String.join(" ", args) + "\nclient:\n" + c.out() + c.err() + "\nserver:\n" + server.out() + "\n"
                + server.err();
        assertEquals(0, c.exit(), why);
        assertEquals(0, server.await(RUN_S), why);
        assertTrue(c.out().contains("\"srq\":true") && c.out().contains("\"events\":true"), why);
        assertEquals(List.of(dev), c.strings("device"), why);
        System.out.println("client/server disni " + dev + " --op " + op + " --srq --events: " + c.out().strip());
        return c;
    }

    @ParameterizedTest(name = "jwarp client --provider disni --op {0} on {1} --srq --events --verify {2}")
    @CsvSource({"send,siw0,'--sge,2'", "write,siw0,'--sge,2'", "read,siw0,'--sge,1'",
            "send,rxe0,'--sge,2'", "write,rxe0,'--sge,2'", "read,rxe0,'--sge,1'"})
    @DisplayName("--srq and --events on siw0/rxe0, payload verified (RFC 5041 §5.1)")
    void srqAndEventsOnDevice_5041_5_1(String op, String dev, String opts) throws Exception {
        CliCapture c = run(dev, op, 100, opts.split(","));
        assertEquals(List.of(op), c.strings("op"));
    }
}
