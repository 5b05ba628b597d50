package org.jwarp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The {@code ffm} provider (java.lang.foreign over rdma-core) through the launcher a user runs,
 * {@code scripts/jwarp ... --provider ffm}, on the kernel's siw0 (iWARP: RFC 5040 Send, Write and
 * Read over MPA, set up per RFC 6581 §9.1) in the qemu guest: the launcher picks the JDK 25 and puts
 * the jwarp-ffm jar beside the CLI jar. Client and server both on ffm with {@code --verify}; each
 * against the other end on DiSNI (in this JVM); rdma-core's kernel {@code rping} against
 * {@code jwarp rping --provider ffm} in both roles; {@code jwarp devices --provider ffm}. Every ffm
 * end is a process of its own (one JVM start under TCG costs tens of seconds). Guest only; fails,
 * never skips, when the JDK 25, {@code /usr/bin/rping} or a device is missing.
 */
@Tag("guest")
@Tag("device")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FfmLauncherDeviceTest {
    static final Path LAUNCHER = Path.of("scripts/jwarp").toAbsolutePath();
    static final String JDK25 = System.getenv().getOrDefault("JWARP_JAVA25", "/usr/lib/jvm/temurin-25-jdk-amd64");
    static final long RUN_S = 300;
    static final int PINGS = 10;

    @BeforeAll
    void guestAndWarmUp() throws Exception {
        GuestCli.requireGuest(FfmLauncherDeviceTest.class);
        for (Path p : List.of(LAUNCHER, Path.of(JDK25, "bin/java"), Path.of("/usr/bin/rping"))) {
            if (!Files.isExecutable(p)) {
                fail(p + " is missing: the ffm CLI suite needs the launcher, a JDK 25 (JWARP_JAVA25) and rdma-core's "
                        + "rping (rdmacm-utils)");
            }
        }
        // This JVM's DiSNI ends answer siw's MPA exchange in time only once warm.
        GuestCli.warmUp(() -> ClientServerDeviceTest.run("siw0", "send", true, 5));
    }

    @Test
    @DisplayName("jwarp devices --provider ffm lists siw0 and rxe0 through the JDK 25")
    void devicesListsSiwAndRxe() throws Exception {
        Proc p = Proc.start("devices", "--provider", "ffm", "--json");
        assertEquals(0, p.await(), p.transcript());
        String out = p.out();
        assertTrue(out.contains("\"name\":\"siw0\"") && out.contains("\"name\":\"rxe0\""), p.transcript());
        assertTrue(out.contains("\"provider\":\"ffm\""), p.transcript());
    }

    @ParameterizedTest(name = "jwarp client --provider ffm --op {0} --verify <-> jwarp server --provider ffm on siw0")
    @CsvSource({"send", "write", "read"})
    @DisplayName("client and server both on ffm through the launcher, payload verified (RFC 5040 §5)")
    void ffmClientFfmServerVerified_5040_5(String op) throws Exception {
        int port = ServerCommandTest.freePort();
        Proc server = Proc.start("server", "--provider", "ffm", "--bind", GuestCli.SIW, "--port", "" + port, "--count",
                "1", "--verify").listening();
        try {
            Proc client = Proc.start(clientArgs("ffm", port, op).toArray(new String[0]));
            int rc = client.await();
            String why = "client " + client.transcript() + "\nserver " + server.transcript();
            assertEquals(0, rc, why);
            assertEquals(0, server.await(), why);
            assertVerified(client.out(), why);
        } finally {
            server.destroy();
        }
    }

    @Test
    @DisplayName("jwarp client --provider disni against jwarp server --provider ffm on siw0, verified")
    void disniClientFfmServer_6581_9_1() throws Exception {
        int port = ServerCommandTest.freePort();
        Proc server = Proc.start("server", "--provider", "ffm", "--bind", GuestCli.SIW, "--port", "" + port, "--count",
                "1", "--verify").listening();
        try {
            CliCapture c = CliCapture.run(clientArgs("disni", port, "write").toArray(new String[0]));
            String why = "disni client:\n" + c.out() + c.err() + "\nffm server " + server.transcript();
            assertEquals(0, c.exit(), why);
            assertEquals(0, server.await(), why);
            assertVerified(c.out(), why);
        } finally {
            server.destroy();
        }
    }

    @Test
    @DisplayName("jwarp client --provider ffm against jwarp server --provider disni on siw0, verified")
    void ffmClientDisniServer_6581_9_1() throws Exception {
        int port = ServerCommandTest.freePort();
        ServerCommandTest.Server server = ServerCommandTest.Server.start("server", "--provider", "disni", "--bind",
                GuestCli.SIW, "--port", "" + port, "--count", "1", "--verify").listening(GuestCli.LISTEN_S);
        Proc client = Proc.start(clientArgs("ffm", port, "read").toArray(new String[0]));
        int rc = client.await();
        String why = "ffm client " + client.transcript() + "\ndisni server:\n" + server.out() + server.err();
        assertEquals(0, rc, why);
        assertEquals(0, server.await(RUN_S), why);
        assertVerified(client.out(), why);
    }

    @Test
    @DisplayName("rping -s (kernel) <-> jwarp rping -c --provider ffm on siw0, -C 10 -V")
    void kernelServerFfmClient_5040_5() throws Exception {
        int port = ServerCommandTest.freePort();
        Proc server = Proc.of(List.of("stdbuf", "-oL", "rping", "-s", "-a", GuestCli.SIW, "-p", "" + port, "-v", "-d"));
        try {
            server.awaitOutput("rdma_listen", 60);
            Thread.sleep(300); // rping prints the line just before rdma_listen
            Proc client = Proc.start("rping", "-c", "-a", GuestCli.SIW, "-p", "" + port, "-C", "" + PINGS, "-V", "-v",
                    "--provider", "ffm", "--timeout", "60");
            int rc = client.await();
            String why = "ffm client " + client.transcript() + "\nkernel server " + server.transcript();
            assertEquals(0, rc, why);
            assertEquals(0, server.await(), why);
            assertEquals(PINGS, client.lines("ping data: ").size(), why);
            assertEquals(PINGS, server.lines("server ping data: ").size(), why);
        } finally {
            server.destroy();
        }
    }

    @Test
    @DisplayName("jwarp rping -s --provider ffm <-> rping -c (kernel) on siw0, -C 10 -V")
    void ffmServerKernelClient_5040_5() throws Exception {
        int port = ServerCommandTest.freePort();
        Proc server = Proc.start("rping", "-s", "-a", GuestCli.SIW, "-p", "" + port, "-v", "-d", "--provider", "ffm",
                "--timeout", "60").listening();
        try {
            Proc client = Proc.of(List.of("stdbuf", "-oL", "rping", "-c", "-a", GuestCli.SIW, "-p", "" + port, "-C",
                    "" + PINGS, "-V", "-v"));
            int rc = client.await();
            String why = "kernel client " + client.transcript() + "\nffm server " + server.transcript();
            assertEquals(0, rc, why);
            assertEquals(0, server.await(), why);
            assertEquals(PINGS, client.lines("ping data: ").size(), why);
            assertEquals(PINGS, server.lines("server ping data: ").size(), why);
        } finally {
            server.destroy();
        }
    }

    static List<String> clientArgs(String provider, int port, String op) {
        return List.of("client", GuestCli.SIW, "--provider", provider, "--bind", GuestCli.SIW, "--port", "" + port,
                "--op", op, "--iters", "100", "--size", "1000", "--json", "--verify", "--timeout", "60000");
    }

    static void assertVerified(String clientOut, String why) {
        assertTrue(clientOut.contains("\"verify\":true"), why);
        assertTrue(clientOut.contains("\"device\":\"siw0\""), why);
    }

    /** A process (the launcher, or kernel rping) with its output in files. */
    static final class Proc {
        final Process p;
        final String cmd;
        final Path out;
        final Path err;

        private Proc(Process p, String cmd, Path out, Path err) {
            this.p = p;
            this.cmd = cmd;
            this.out = out;
            this.err = err;
        }

        /** {@code scripts/jwarp ARGS} with the guest's JVM flags (C1 only, serial GC: faster start-up under TCG). */
        static Proc start(String... args) throws IOException {
            List<String> cmd = new ArrayList<>(List.of(LAUNCHER.toString()));
            cmd.addAll(List.of(args));
            return of(cmd);
        }

        static Proc of(List<String> cmd) throws IOException {
            Path o = Files.createTempFile("ffm-cli-out", ".txt");
            Path e = Files.createTempFile("ffm-cli-err", ".txt");
            ProcessBuilder b = new ProcessBuilder(cmd).redirectOutput(o.toFile()).redirectError(e.toFile());
            b.environment().put("JWARP_JAVA25", JDK25);
            b.environment().put("JWARP_JAVA_OPTS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmx512m");
            return new Proc(b.start(), String.join(" ", cmd), o, e);
        }

        /** Waits for the line that says the server listens (a cold JDK 25 start under TCG takes a while). */
        Proc listening() throws Exception {
            awaitOutput("listening on", GuestCli.LISTEN_S);
            return this;
        }

        void awaitOutput(String needle, long seconds) throws Exception {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            while (!out().contains(needle)) {
                if (!p.isAlive() || System.nanoTime() > end) {
                    fail("'" + needle + "' not printed within " + seconds + " s: " + transcript());
                }
                Thread.sleep(50);
            }
        }

        int await() throws Exception {
            if (!p.waitFor(RUN_S, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                fail("did not exit within " + RUN_S + " s: " + transcript());
            }
            return p.exitValue();
        }

        List<String> lines(String prefix) {
            return out().lines().filter(l -> l.startsWith(prefix)).toList();
        }

        String out() {
            return read(out);
        }

        String transcript() {
            return cmd + "\n--- out ---\n" + read(out) + "\n--- err ---\n" + read(err);
        }

        void destroy() {
            if (p.isAlive()) {
                p.destroyForcibly();
            }
        }

        private static String read(Path f) {
            try {
                return Files.readString(f, StandardCharsets.ISO_8859_1);
            } catch (IOException e) {
                return "(unreadable: " + e + ")";
            }
        }
    }
}
