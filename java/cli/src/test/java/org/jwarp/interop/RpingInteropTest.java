package org.jwarp.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import org.jwarp.cli.GuestCli;
import org.jwarp.cli.JwarpCli;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code jwarp rping} against rdma-core's {@code rping} on the kernel's siw0 (iWARP: RFC 5040
 * Sends, RDMA Read and RDMA Write over MPA, RFC 5044, set up per RFC 6581 §9) and rxe0: each
 * role of ours against the other role of theirs, on the soft provider (Java over kernel TCP to
 * kernel siw) and on the DiSNI provider (through rdma-core to siw0 and rxe0), {@code -C 10 -V}
 * at sizes 64 and 65535. The Java side runs in this JVM (one JVM for every case: under TCG a JVM
 * start costs ~20 s); kernel rping runs as a process. The JVM side starts first and is warmed
 * up by a jwarp-to-jwarp pass on siw0, since siw's MPA timeouts do not wait for a cold JVM.
 */
@Tag("guest")
@Tag("device")
class RpingInteropTest {
    static final String SIW = System.getenv().getOrDefault("JWARP_SIW_IP", "10.77.0.1");
    static final String RXE = System.getenv().getOrDefault("JWARP_RXE_IP", "10.78.0.1");
    static final long TIMEOUT_S = 60;
    static final long LISTEN_S = 300;
    static final int COUNT = 10;
    static final AtomicInteger NEXT_PORT = new AtomicInteger(7600);

    @BeforeAll
    static void guestAndWarmUp() throws Exception {
        GuestCli.requireGuest(RpingInteropTest.class);
        if (!Files.isExecutable(Path.of("/usr/bin/rping"))) {
            fail("/usr/bin/rping is missing: install rdmacm-utils (scripts/setup-guest-deps)");
        }
        // JVM warm-up: the rping code, picocli and both providers' connection paths, jwarp to jwarp.
        // A cold JVM under TCG can miss the soft provider's own 10 s MPA Reply timeout on the first
        // pass (both ends are this JVM), so a pass is repeated until one succeeds, three at most.
        for (String provider : List.of("soft", "disni")) {
            StringBuilder failures = new StringBuilder();
            boolean warm = false;
            for (int attempt = 1; attempt <= 3 && !warm; attempt++) {
                int port = NEXT_PORT.getAndIncrement();
                Jwarp server = Jwarp.start("rping", "-s", "-a", SIW, "-p", "" + port, "-d", "--provider", provider,
                        "--timeout", "20").listening();
                Jwarp client = Jwarp.start("rping", "-c", "-a", SIW, "-p", "" + port, "-C", "2", "-V", "--provider",
                        provider, "--timeout", "" + TIMEOUT_S);
                warm = client.await() == 0 && server.await() == 0;
                if (!warm) {
                    failures.append("attempt ").append(attempt).append(":\nclient ").append(client.transcript())
                            .append("\nserver ").append(server.transcript()).append('\n');
                } else if (attempt > 1) {
                    System.out.println("rping interop: warm-up (" + provider + ") passed on attempt " + attempt);
                }
            }
            if (!warm) {
                fail("jwarp rping to jwarp rping on " + SIW + " (" + provider + ") failed three times\n" + failures);
            }
        }
    }

    static Stream<Arguments> kernelServer() {
        List<Arguments> a = new ArrayList<>();
        for (int size : new int[] {64, 65535}) {
            a.add(Arguments.of("soft", "siw0", SIW, size));
            a.add(Arguments.of("disni", "siw0", SIW, size));
            a.add(Arguments.of("disni", "rxe0", RXE, size));
        }
        return a.stream();
    }

    static Stream<Arguments> jwarpServer() {
        return kernelServer();
    }

    @ParameterizedTest(name = "rping -s (kernel, {1}) <-> jwarp rping -c --provider {0} -C 10 -V -S {3}")
    @MethodSource("kernelServer")
    void kernelServer_jwarpClient_5040_5(String provider, String dev, String ip, int size) throws Exception {
        int port = NEXT_PORT.getAndIncrement();
        Kernel server = Kernel.start("rping", "-s", "-a", ip, "-p", "" + port, "-S", "" + size, "-v", "-d");
        try {
            server.awaitOutput("rdma_listen");
            Thread.sleep(300); // rping prints the line just before rdma_listen
            Jwarp client = Jwarp.start("rping", "-c", "-a", ip, "-p", "" + port, "-C", "" + COUNT, "-V", "-v", "-S",
                    "" + size, "--provider", provider, "--timeout", "" + TIMEOUT_S);
            int rc = client.await();
            String why = "jwarp client:\n" + client.transcript() + "\nkernel server:\n" + server.transcript();
            assertEquals(0, rc, why);
            assertEquals(0, server.await(), why);
            List<String> pings = client.lines("ping data: ");
            assertEquals(COUNT, pings.size(), why);
            for (int i = 0; i < COUNT; i++) {
                assertEquals("ping data: " + expectedPing(i, size), pings.get(i), why);
            }
            assertEquals(COUNT, server.lines("server ping data: ").size(), why);
            assertEquals("server ping data: " + expectedPing(COUNT - 1, size),
                    server.lines("server ping data: ").get(COUNT - 1), why);
            System.out.println("rping interop: kernel rping -s on " + dev + " <-> jwarp rping -c --provider " + provider
                    + " -S " + size + ": " + COUNT + " pings verified");
        } finally {
            server.destroy();
        }
    }

    @ParameterizedTest(name = "jwarp rping -s --provider {0} <-> rping -c (kernel, {1}) -C 10 -V -S {3}")
    @MethodSource("jwarpServer")
    void jwarpServer_kernelClient_5040_5(String provider, String dev, String ip, int size) throws Exception {
        int port = NEXT_PORT.getAndIncrement();
        Jwarp server = Jwarp.start("rping", "-s", "-a", ip, "-p", "" + port, "-S", "" + size, "-v", "-d",
                "--provider", provider, "--timeout", "" + TIMEOUT_S).listening();
        Kernel client = Kernel.start("rping", "-c", "-a", ip, "-p", "" + port, "-C", "" + COUNT, "-V", "-v", "-S",
                "" + size);
        try {
            int rc = client.await();
            String why = "kernel client:\n" + client.transcript() + "\njwarp server:\n" + server.transcript();
            assertEquals(0, rc, why);
            assertEquals(0, server.await(), why);
            List<String> pings = client.lines("ping data: ");
            assertEquals(COUNT, pings.size(), why);
            for (int i = 0; i < COUNT; i++) {
                assertEquals("ping data: " + expectedPing(i, size), pings.get(i), why);
            }
            assertEquals(COUNT, server.lines("server ping data: ").size(), why);
            assertTrue(server.out.toString().contains("client disconnected after " + COUNT + " pings"), why);
            System.out.println("rping interop: jwarp rping -s --provider " + provider + " <-> kernel rping -c on " + dev
                    + " -S " + size + ": " + COUNT + " pings verified");
        } finally {
            client.destroy();
        }
    }

    /** rping's ping text for iteration {@code ping} at {@code size}, without its NUL. */
    static String expectedPing(int ping, int size) {
        StringBuilder b = new StringBuilder("rdma-ping-" + ping + ": ");
        char c = (char) ('A' + ping % 58);
        while (b.length() < size - 1) {
            b.append(c);
            c = c == 'z' ? 'A' : (char) (c + 1);
        }
        return b.toString();
    }

    static String tail(String s) {
        return s.length() <= 4000 ? s : "..." + s.substring(s.length() - 4000);
    }

    /** {@code jwarp rping} in this JVM. */
    record Jwarp(CompletableFuture<Integer> exit, StringWriter out, StringWriter err) {
        static Jwarp start(String... args) {
            StringWriter o = new StringWriter();
            StringWriter e = new StringWriter();
            return new Jwarp(CompletableFuture.supplyAsync(() ->
                    JwarpCli.run(new PrintWriter(o, true), new PrintWriter(e, true), args)), o, e);
        }

        /**
         * Waits for the -d line that says the server listens. The first start in a cold JVM under
         * TCG on a loaded machine can take minutes (classes of picocli, the provider, the CLI).
         */
        Jwarp listening() throws Exception {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(LISTEN_S);
            while (!out.toString().contains("listening on")) {
                if (exit.isDone()) {
                    fail("jwarp rping -s ended before it listened: "
                            + exit.handle((rc, ex) -> ex != null ? ex.toString() : "exit " + rc).get() + "\n" + transcript());
                }
                if (System.nanoTime() > end) {
                    fail("jwarp rping -s did not listen within " + LISTEN_S + " s:\n" + transcript());
                }
                Thread.sleep(20);
            }
            return this;
        }

        int await() throws Exception {
            return exit.get(3 * TIMEOUT_S, TimeUnit.SECONDS);
        }

        List<String> lines(String prefix) {
            return out.toString().lines().filter(l -> l.startsWith(prefix)).toList();
        }

        String transcript() {
            return "--- out ---\n" + tail(out.toString()) + "\n--- err ---\n" + tail(err.toString());
        }
    }

    /** Kernel rping as a process, stdout line-buffered (stdbuf) so its -d lines arrive as printed. */
    static final class Kernel {
        final Process p;
        final Path outFile;
        final Path errFile;

        private Kernel(Process p, Path out, Path err) {
            this.p = p;
            this.outFile = out;
            this.errFile = err;
        }

        static Kernel start(String... args) throws IOException {
            List<String> cmd = new ArrayList<>(List.of("stdbuf", "-oL", "-eL"));
            cmd.addAll(List.of(args));
            Path o = Files.createTempFile("rping-out", ".txt");
            Path e = Files.createTempFile("rping-err", ".txt");
            Process p = new ProcessBuilder(cmd).redirectOutput(o.toFile()).redirectError(e.toFile()).start();
            return new Kernel(p, o, e);
        }

        void awaitOutput(String needle) throws Exception {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_S);
            while (!read(outFile).contains(needle)) {
                if (!p.isAlive() || System.nanoTime() > end) {
                    fail("kernel rping did not print '" + needle + "':\n" + transcript());
                }
                Thread.sleep(20);
            }
        }

        int await() throws Exception {
            if (!p.waitFor(3 * TIMEOUT_S, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                fail("kernel rping did not exit within " + 3 * TIMEOUT_S + " s:\n" + transcript());
            }
            return p.exitValue();
        }

        List<String> lines(String prefix) throws IOException {
            return read(outFile).lines().filter(l -> l.startsWith(prefix)).toList();
        }

        String transcript() {
            return "--- out ---\n" + tail(read(outFile)) + "\n--- err ---\n" + tail(read(errFile)) + "\n--- cmd "
                    + p.info().commandLine().orElse("?");
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
