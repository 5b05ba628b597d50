package org.jwarp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code jwarp server} answering {@code jwarp client} over loopback for each op and model. */
class ServerCommandTest {

    /** How long a cold server may take to bind on a loaded 2-core machine. */
    static final long LISTEN_SECONDS = 30;

    static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** A {@code jwarp server} on a thread of its own, printing to its own writers. */
    record Server(CompletableFuture<Integer> exit, StringWriter out, StringWriter err) {
        static Server start(String... args) {
            StringWriter o = new StringWriter();
            StringWriter e = new StringWriter();
            CompletableFuture<Integer> f = new CompletableFuture<>();
            Thread t = new Thread(() -> {
                try {
                    f.complete(JwarpCli.run(new PrintWriter(o, true), new PrintWriter(e, true), args));
                } catch (Throwable x) {
                    f.completeExceptionally(x);
                }
            }, "jwarp-server-test");
            t.setDaemon(true);
            t.start();
            return new Server(f, o, e);
        }

        /** Waits for the "listening on" line (the listener is bound once it is printed). */
        Server listening() throws Exception {
            return listening(LISTEN_SECONDS);
        }

        /** As {@link #listening()}, waiting up to {@code seconds} (a cold JVM under emulation is slow). */
        Server listening(long seconds) throws Exception {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            while (!out.toString().contains("listening on")) {
                if (exit.isDone() || System.nanoTime() > end) {
                    throw new AssertionError("server did not listen: " + out + err);
                }
                Thread.sleep(10);
            }
            return this;
        }

        int await() throws Exception {
            return await(30);
        }

        int await(long seconds) throws Exception {
            return exit.get(seconds, TimeUnit.SECONDS);
        }
    }

    @ParameterizedTest(name = "server/client --op {0} {1}")
    @CsvSource({"send,''", "write,''", "read,''", "send,--p2p", "write,--p2p", "read,--p2p"})
    void serverServesClient(String op, String p2p) throws Exception {
        int port = freePort();
        Server server = Server.start("server", "--bind", "127.0.0.1", "--port", String.valueOf(port), "--count", "1",
                "--p2p").listening();
        String[] args = p2p.isEmpty()
                ? new String[] {"client", "127.0.0.1", "--port", String.valueOf(port), "--op", op, "--iters", "200",
                        "--size", "1024", "--json"}
                : new String[] {"client", "127.0.0.1", "--port", String.valueOf(port), "--op", op, "--iters", "200",
                        "--size", "1024", "--json", "--p2p", "--rtr", "read"};
        CliCapture c = CliCapture.run(args);
        assertEquals(0, c.exit(), c.out() + c.err());
        assertEquals(List.of(op), c.strings("op"));
        assertEquals(1024.0, c.numbers("bytes").get(0));
        assertTrue(c.numbers("p99Us").get(0) > 0);
        assertTrue(c.numbers("bandwidthMBps").get(0) > 0);
        // the bandwidth is the median of --passes (default 5) timed passes of iters/5, as scripts/bench's
        assertEquals(5.0, c.numbers("bandwidthPasses").get(0));
        assertEquals(40.0, c.numbers("bandwidthOpsPerPass").get(0));
        assertTrue(c.numbers("latencyJitMs").get(0) >= 0 && c.numbers("bandwidthJitMs").get(0) >= 0, c.out());
        double min = c.numbers("bandwidthMBpsMin").get(0);
        double max = c.numbers("bandwidthMBpsMax").get(0);
        assertTrue(min > 0 && min <= c.numbers("bandwidthMBps").get(0) && c.numbers("bandwidthMBps").get(0) <= max,
                c.out());
        assertEquals(p2p.isEmpty() ? List.<String>of() : List.of("read"), c.strings("rtr"));
        assertEquals(0, server.await(), server.out() + "\n" + server.err());
    }

    @ParameterizedTest(name = "server/client --op {0} {1} --verify")
    @CsvSource({"send,'--sge,4,--post-list,8,--inline-size,64'", "write,'--sge,4,--post-list,8,--inline-size,64'",
            "read,'--sge,1,--post-list,8'"})
    @DisplayName("SGL, chains and inline, payload verified end to end; settings echoed (RFC 5041 §5.3)")
    void scatterGatherChainsInlineVerified_5041_5_3(String op, String opts) throws Exception {
        int port = freePort();
        Server server = Server.start("server", "--bind", "127.0.0.1", "--port", String.valueOf(port), "--count", "1",
                "--sge", "4", "--inline-size", "64", "--verify").listening();
        List<String> args = new java.util.ArrayList<>(List.of("client", "127.0.0.1", "--port", String.valueOf(port),
                "--op", op, "--iters", "300", "--size", "1000", "--json", "--verify"));
        args.addAll(List.of(opts.split(",")));
        CliCapture c = CliCapture.run(args.toArray(new String[0]));
        assertEquals(0, c.exit(), c.out() + c.err());
        assertEquals(List.of(op), c.strings("op"));
        assertEquals(op.equals("read") ? 1.0 : 4.0, c.numbers("sge").get(0));
        assertEquals(8.0, c.numbers("postList").get(0));
        assertEquals(op.equals("read") ? 0.0 : 64.0, c.numbers("inlineSize").get(0));
        assertTrue(c.out().contains("\"verify\":true"), c.out());
        assertEquals(0, server.await(), server.out() + "\n" + server.err());
    }

    @Test
    @DisplayName("an option that does not apply to the op exits 2 with a message")
    void inlineDoesNotApplyToRead() {
        CliCapture c = CliCapture.run("client", "127.0.0.1", "--op", "read", "--inline-size", "64");
        assertEquals(2, c.exit());
        assertTrue(c.err().contains("--inline-size"), c.err());
        CliCapture h = CliCapture.run("client", "--help");
        assertTrue(h.out().contains("--post-list N") && h.out().contains("send  write  read"), h.out());
    }

    @Test
    @DisplayName("jwarp devices lists the soft device with its SGE, inline and port attributes")
    void devicesListsSoftDevice() {
        CliCapture c = CliCapture.run("devices", "--json", "--provider", "soft");
        assertEquals(0, c.exit(), c.out() + c.err());
        assertEquals(List.of("soft0"), c.strings("name"));
        assertEquals(16.0, c.numbers("maxSge").get(0));
        assertEquals(1.0, c.numbers("maxSgeRd").get(0));
        assertEquals(List.of("ACTIVE"), c.strings("portState"));
    }
}
