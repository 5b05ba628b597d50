package org.jwarp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The guest side of the CLI device suites ({@link ClientServerDeviceTest}, {@link SrqEventsDeviceTest};
 * the guest check also for {@link org.jwarp.interop.RpingInteropTest}):
 * the check that they run inside {@code scripts/siw-guest} with siw0 (iWARP, RFC 5040/5041 over MPA)
 * and rxe0 up, the warm-up a cold JVM under TCG needs, and one {@code jwarp server} /
 * {@code jwarp client} run on the DiSNI provider. Outside the guest the suites fail, never skip.
 */
public final class GuestCli {
    static final String SIW = System.getenv().getOrDefault("JWARP_SIW_IP", "10.77.0.1");
    static final String RXE = System.getenv().getOrDefault("JWARP_RXE_IP", "10.78.0.1");
    /** A cold JVM under TCG needs minutes for its first server start. */
    static final long LISTEN_S = 300;
    static final long RUN_S = 300;

    private GuestCli() {
    }

    /** A run that may throw; the warm-up retries it on an {@link AssertionError}. */
    interface Attempt {
        void run() throws Exception;
    }

    /** The client's capture of one run and the transcript of both ends, for assertion messages. */
    record Run(CliCapture client, String why) {
    }

    /** The address of device {@code dev} (siw0 or rxe0) in the guest. */
    static String ip(String dev) {
        return dev.equals("siw0") ? SIW : RXE;
    }

    /** Fails unless this JVM runs in the guest with siw0 and rxe0 present. */
    public static void requireGuest(Class<?> suite) {
        if (!"1".equals(System.getenv("JWARP_GUEST"))) {
            fail("JWARP_GUEST is not set: " + suite.getSimpleName() + " needs siw0 and rxe0; it runs only inside "
                    + "scripts/siw-guest (scripts/guest-tests --select " + suite.getName() + ")");
        }
        for (String dev : List.of("siw0", "rxe0")) {
            if (!Files.isDirectory(Path.of("/sys/class/infiniband", dev))) {
                fail("RDMA device " + dev + " is missing: the guest did not bring it up");
            }
        }
    }

    /**
     * JVM warm-up: {@code attempt} (one short run on siw0) repeated until it passes, three times at
     * most. A cold JVM under TCG can answer siw's MPA Request after siw's own timeout, and the first
     * connection of the run then fails as unreachable (seen in the guest). The warm-up may fail; the
     * cases may not.
     */
    static void warmUp(Attempt attempt) throws Exception {
        StringBuilder failures = new StringBuilder();
        for (int i = 1; i <= 3; i++) {
            try {
                attempt.run();
                return;
            } catch (AssertionError e) {
                failures.append("attempt ").append(i).append(": ").append(e.getMessage()).append('\n');
            }
        }
        fail("jwarp client/server on siw0 failed three times in the warm-up\n" + failures);
    }

    /**
     * Runs {@code jwarp server --provider disni --bind IP --port P --count 1 SERVER-OPTS} and then
     * {@code jwarp client IP --provider disni --port P --op OP --iters N --size 1000 --json --verify
     * --timeout 60000 CLIENT-OPTS}; asserts that both exit 0 and that the client opened {@code dev}.
     */
    static Run run(String dev, List<String> serverOpts, String op, int iters, List<String> clientOpts)
            throws Exception {
        String ip = ip(dev);
        int port = ServerCommandTest.freePort();
        List<String> sargs = new ArrayList<>(List.of("server", "--provider", "disni", "--bind", ip, "--port",
                String.valueOf(port), "--count", "1"));
        sargs.addAll(serverOpts);
        ServerCommandTest.Server server = ServerCommandTest.Server.start(sargs.toArray(new String[0]))
                .listening(LISTEN_S);
        List<String> args = new ArrayList<>(List.of("client", ip, "--provider", "disni", "--port", String.valueOf(port),
                "--op", op, "--iters", String.valueOf(iters), "--size", "1000", "--json", "--verify", "--timeout",
                "60000"));
        args.addAll(clientOpts);
        CliCapture c = CliCapture.run(args.toArray(new String[0]));
        String why = String.join(" ", args) + "\nclient:\n" + c.out() + c.err() + "\nserver:\n" + server.out() + "\n"
                + server.err();
        assertEquals(0, c.exit(), why);
        assertEquals(0, server.await(RUN_S), why);
        assertEquals(List.of(dev), c.strings("device"), why);
        return new Run(c, why);
    }
}
