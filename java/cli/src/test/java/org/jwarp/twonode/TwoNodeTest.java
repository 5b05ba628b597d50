package org.jwarp.twonode;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jwarp.cli.JwarpCli;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The two-node suite: node 1 of {@code scripts/siw-guest --nodes 2} against node 2 across the
 * virtual Ethernet link (siw0 10.80.0.1 ↔ 10.80.0.2, rxe0 10.81.0.1 ↔ 10.81.0.2), where TCP and
 * so the FPDUs (RFC 5044 §8.1 MULPDU) are cut at the link's MSS instead of loopback's 64 KiB.
 * This JVM runs the Java roles and the processes on node 1; {@link Node2Agent}, one JVM on node 2,
 * runs node 2's. Each bulk case moves 1 MiB by Send, RDMA Write and RDMA Read (RFC 5040 §5) and
 * verifies every byte on both ends. {@code scripts/two-node-tests} runs it and checks the host's
 * capture of the link (FPDU sizes, tshark decodes iWARP without a malformed frame).
 * Tagged {@code twonode} only: the host build and the one-node guest suite exclude it.
 */
@Tag("twonode")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class TwoNodeTest {
    static final String SIW = env("JWARP_SIW_IP");
    static final String SIW_PEER = env("JWARP_SIW_PEER_IP");
    static final String RXE = env("JWARP_RXE_IP");
    static final String RXE_PEER = env("JWARP_RXE_PEER_IP");
    static final int AREA = 1 << 20;
    /** rping's message: 12 FPDUs at MTU 1500, two at 9000. */
    static final String RPING_SIZE = "16384";
    static final Duration TIMEOUT = Duration.ofSeconds(180);
    static final AtomicInteger PORTS = new AtomicInteger(7700);
    /** The JDK the {@code ffm} provider's ends run on, as scripts/guest-tests finds it. */
    static final String JDK25 = System.getenv().getOrDefault("JWARP_JDK25", "/usr/lib/jvm/temurin-25-jdk-amd64");
    static Agent agent;
    /** A case that fails while the siw link is dead says so first ({@link LinkWatch}). */
    @RegisterExtension
    static final LinkWatch.Cases LINK = new LinkWatch.Cases();

    static String env(String k) {
        return System.getenv().getOrDefault(k, "");
    }

    @BeforeAll
    static void nodes() throws Exception {
        if (!"1".equals(env("JWARP_NODE")) || !"2".equals(env("JWARP_NODES"))) {
            fail("TwoNodeTest runs on node 1 of scripts/siw-guest --nodes 2 (scripts/two-node-tests); JWARP_NODE="
                    + env("JWARP_NODE") + " JWARP_NODES=" + env("JWARP_NODES"));
        }
        for (String dev : List.of("siw0", "rxe0")) {
            if (!Files.isDirectory(Path.of("/sys/class/infiniband", dev))) {
                fail("RDMA device " + dev + " is missing: the guest did not bring it up");
            }
        }
        if (!Files.isExecutable(siwPeer())) {
            fail(siwPeer() + " is not built: make -C native/interop");
        }
        long t0 = System.nanoTime();
        Node2Agent.warmUp(SIW);
        System.out.println("twonode: node 1 warm-up " + (System.nanoTime() - t0) / 1_000_000 + " ms; MTU "
                + env("JWARP_MTU") + ", siw " + SIW + " <-> " + SIW_PEER + ", rxe " + RXE + " <-> " + RXE_PEER);
        agent = Agent.connect(SIW_PEER, Node2Agent.PORT, Duration.ofSeconds(600));
        System.out.println("twonode: node 2's agent answered after " + (System.nanoTime() - t0) / 1_000_000 + " ms");
        LinkWatch.start(agent, SIW_PEER, RXE_PEER);
    }

    @AfterAll
    static void quit() throws Exception {
        LinkWatch.stop();
        if (agent != null) {
            agent.close();
        }
    }

    static Path siwPeer() {
        return Path.of("native/interop/build/siw_peer").toAbsolutePath();
    }

    @Test
    @Order(1)
    @DisplayName("soft (node 1) initiator -> kernel siw (node 2) responder: 1 MiB Send, Write, Read verified "
            + "(RFC 5040 §5, RFC 5044 §8.1)")
    void softInitiator_siwResponder_1MiB_5040_5() throws Exception {
        int port = PORTS.getAndIncrement();
        Agent.Remote siw = agent.run(siwPeer().toString(), "server", "-a", SIW_PEER, "-p", "" + port, "-s", "basic",
                "-W", "-B", "-n", "" + AREA, "-t", "150");
        siw.awaitLine("listening", TIMEOUT);
        LinkExchange.Result r = exchange(siw, () -> LinkExchange.connect("soft", SIW,
                new InetSocketAddress(SIW_PEER, port), LinkExchange.Role.MIRROR, AREA, TwoNodeTest::say));
        assertEquals(0, siw.waitExit(TIMEOUT), siw::transcript);
        peerChecks(siw.lines("siw_peer: check="), siw.transcript());
        report("soft->siw", port, "soft", "siw", r);
    }

    @Test
    @Order(2)
    @DisplayName("kernel siw (node 2) initiator -> soft (node 1) responder: 1 MiB Send, Write, Read verified "
            + "(RFC 5040 §5, RFC 5044 §7.1.2)")
    void siwInitiator_softResponder_1MiB_5040_5() throws Exception {
        int port = PORTS.getAndIncrement();
        CompletableFuture<Void> listening = new CompletableFuture<>();
        CompletableFuture<LinkExchange.Result> soft = async(() -> LinkExchange.accept("soft", SIW, port,
                LinkExchange.Role.MIRROR, AREA, line -> {
                    say(line);
                    if (line.startsWith("listening ")) {
                        listening.complete(null);
                    }
                }));
        // the peer connects only once the listener is up (a fixed sleep lost the race on a loaded host:
        // rdma_connect was refused and the listener waited out its timeout)
        CompletableFuture.anyOf(listening, soft).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        Agent.Remote siw = agent.run(siwPeer().toString(), "client", "-a", SIW, "-p", "" + port, "-s", "basic", "-B",
                "-n", "" + AREA, "-t", "150");
        LinkExchange.Result r = exchange(siw, () -> soft.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS));
        assertEquals(0, siw.waitExit(TIMEOUT), siw::transcript);
        peerChecks(siw.lines("siw_peer: check="), siw.transcript());
        report("siw->soft", port, "soft", "siw", r);
    }

    @Test
    @Order(3)
    @DisplayName("kernel siw (node 1) initiator -> soft (node 2) responder: 1 MiB Send, Write, Read verified "
            + "(RFC 5040 §5)")
    void siwInitiator_softResponderOnNode2_1MiB_5040_5() throws Exception {
        int port = PORTS.getAndIncrement();
        Agent.Remote soft = agent.java("accept", "soft", SIW_PEER, "" + port, "MIRROR", "" + AREA);
        soft.awaitLine("listening", TIMEOUT);
        Local siw = Local.start(siwPeer().toString(), "client", "-a", SIW_PEER, "-p", "" + port, "-s", "basic", "-B",
                "-n", "" + AREA, "-t", "150");
        int rc = siw.waitExit(TIMEOUT);
        String why = siw.transcript() + "\n" + soft.transcript();
        assertEquals(0, soft.waitExit(TIMEOUT), why);
        assertEquals(0, rc, why);
        peerChecks(siw.lines("siw_peer: check="), why);
        sayCase("siw(node1)->soft(node2) port " + port + " sides=siw,soft: " + soft.lines("result ").get(0));
    }

    @Test
    @Order(4)
    @DisplayName("DiSNI (node 1) -> DiSNI (node 2) on siw0: 1 MiB Send, Write, Read verified (RFC 5040 §5)")
    void disniToDisni_siw0_1MiB_5040_5() throws Exception {
        disniPair(SIW, SIW_PEER, "siw0");
    }

    @Test
    @Order(5)
    @DisplayName("DiSNI (node 1) -> DiSNI (node 2) on rxe0: 1 MiB Send, Write, Read verified (RoCEv2)")
    void disniToDisni_rxe0_1MiB_5040_5() throws Exception {
        disniPair(RXE, RXE_PEER, "rxe0");
    }

    private void disniPair(String local, String remote, String dev) throws Exception {
        int port = PORTS.getAndIncrement();
        Agent.Remote server = agent.java("accept", "disni", remote, "" + port, "PEER", "" + AREA);
        server.awaitLine("listening", TIMEOUT);
        LinkExchange.Result r = exchange(server, () -> LinkExchange.connect("disni", local,
                new InetSocketAddress(remote, port), LinkExchange.Role.MIRROR, AREA, TwoNodeTest::say));
        assertEquals(0, server.waitExit(TIMEOUT), server::transcript);
        assertEquals(3, server.lines("check=").size(), server::transcript);
        report("disni->disni " + dev, port, dev.substring(0, 3), dev.substring(0, 3), r);
    }

    @Test
    @Order(8)
    @DisplayName("DiSNI (node 1) -> ffm on JDK 25 (node 2) on siw0: 1 MiB Send, Write, Read verified (RFC 5040 §5)")
    void disniToFfm_siw0_1MiB_5040_5() throws Exception {
        disniToFfm(SIW, SIW_PEER, "siw0");
    }

    @Test
    @Order(9)
    @DisplayName("DiSNI (node 1) -> ffm on JDK 25 (node 2) on rxe0: 1 MiB Send, Write, Read verified (RoCEv2)")
    void disniToFfm_rxe0_1MiB_5040_5() throws Exception {
        disniToFfm(RXE, RXE_PEER, "rxe0");
    }

    @Test
    @Order(10)
    @DisplayName("ffm on JDK 25 (node 1) -> DiSNI (node 2) on siw0: 1 MiB Send, Write, Read verified (RFC 5040 §5)")
    void ffmToDisni_siw0_1MiB_5040_5() throws Exception {
        ffmToDisni(SIW, SIW_PEER, "siw0");
    }

    @Test
    @Order(11)
    @DisplayName("ffm on JDK 25 (node 1) -> DiSNI (node 2) on rxe0: 1 MiB Send, Write, Read verified (RoCEv2)")
    void ffmToDisni_rxe0_1MiB_5040_5() throws Exception {
        ffmToDisni(RXE, RXE_PEER, "rxe0");
    }

    /** Node 2 listens on ffm in a JDK 25 process of its own; this JVM connects on DiSNI. */
    private void disniToFfm(String local, String remote, String dev) throws Exception {
        int port = PORTS.getAndIncrement();
        Agent.Remote server = agent.run(ffmRole("accept", "ffm", remote, "" + port, "PEER", "" + AREA));
        server.awaitLine("listening ffm", TIMEOUT);
        LinkExchange.Result r = exchange(server, () -> LinkExchange.connect("disni", local,
                new InetSocketAddress(remote, port), LinkExchange.Role.MIRROR, AREA, TwoNodeTest::say));
        assertEquals(0, server.waitExit(TIMEOUT), server::transcript);
        assertEquals(3, server.lines("check=").size(), server::transcript);
        assertEquals(1, server.lines("result ").size(), server::transcript);
        report("disni->ffm " + dev, port, dev.substring(0, 3), dev.substring(0, 3), r);
    }

    /** Node 2 listens on DiSNI in its agent; node 1 connects on ffm from a JDK 25 process of its own. */
    private void ffmToDisni(String local, String remote, String dev) throws Exception {
        int port = PORTS.getAndIncrement();
        Agent.Remote server = agent.java("accept", "disni", remote, "" + port, "PEER", "" + AREA);
        server.awaitLine("listening disni", TIMEOUT);
        Local ffm = Local.start(ffmRole("connect", "ffm", local, remote, "" + port, "MIRROR", "" + AREA));
        int rc = ffm.waitExit(TIMEOUT);
        String why = ffm.transcript() + "\n" + server.transcript();
        assertEquals(0, server.waitExit(TIMEOUT), why);
        assertEquals(0, rc, why);
        assertEquals(3, ffm.lines("check=").size(), why);
        assertEquals(3, server.lines("check=").size(), why);
        List<String> result = ffm.lines("result ");
        assertEquals(1, result.size(), why);
        sayCase("ffm->disni " + dev + " port " + port + " sides=" + dev.substring(0, 3) + ","
                + dev.substring(0, 3) + ": " + result.get(0).substring("result ".length()));
    }

    /**
     * The command line of one {@link LinkExchange} role on the {@code ffm} provider (java.lang.foreign,
     * so a JDK 25 with native access) in a process of its own: the suite's JVMs run on JDK 17.
     */
    static String[] ffmRole(String... role) throws Exception {
        Path root = Path.of("").toAbsolutePath();
        Path java = Path.of(JDK25, "bin/java");
        Path ffmClasses = root.resolve("java/ffm/target/classes");
        Path cpFile = root.resolve("target/guest-tools/test-classpath.txt");
        if (!Files.isExecutable(java) || !Files.isDirectory(ffmClasses) || !Files.isRegularFile(cpFile)) {
            fail("the ffm cases need a JDK 25 at " + JDK25 + " (JWARP_JDK25) and the ffm build (" + ffmClasses + ", "
                    + cpFile + "): scripts/guest-tests --build-only builds both");
        }
        String cp = String.join(":", List.of(root.resolve("java/cli/target/test-classes").toString(),
                root.resolve("java/cli/target/classes").toString(), root.resolve("java/core/target/classes").toString(),
                ffmClasses.toString(), Files.readString(cpFile).trim()));
        List<String> cmd = new ArrayList<>(List.of(java.toString(), "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                "-Xmx512m", "--enable-native-access=ALL-UNNAMED", "-cp", cp, LinkExchange.class.getName()));
        cmd.addAll(List.of(role));
        return cmd.toArray(new String[0]);
    }

    @Test
    @Order(6)
    @DisplayName("kernel rping -s (node 2, siw0) <-> jwarp rping -c --provider soft (node 1), -C 10 -V -S 16384 "
            + "(RFC 5040 §5)")
    void kernelRpingServer_jwarpRpingClient_5040_5() throws Exception {
        int port = PORTS.getAndIncrement();
        Agent.Remote server = agent.run("stdbuf", "-oL", "rping", "-s", "-a", SIW_PEER, "-p", "" + port, "-S", RPING_SIZE,
                "-v", "-d");
        server.awaitLine("rdma_listen", TIMEOUT);
        Thread.sleep(300); // rping prints the line just before it calls rdma_listen
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int rc = JwarpCli.run(new PrintWriter(out, true), new PrintWriter(err, true), "rping", "-c", "-a", SIW_PEER,
                "-p", "" + port, "-C", "10", "-V", "-v", "-S", RPING_SIZE, "--provider", "soft", "--timeout", "120");
        String why = "jwarp rping -c:\n" + out + err + "\n" + server.transcript();
        assertEquals(0, rc, why);
        assertEquals(0, server.waitExit(TIMEOUT), why);
        assertEquals(10, out.toString().lines().filter(l -> l.startsWith("ping data: rdma-ping-")).count(), why);
        assertEquals(10, server.lines("server ping data: rdma-ping-").size(), why);
        sayCase("rping -s (kernel, node 2) <-> jwarp rping -c (soft, node 1) port " + port
                + " sides=soft,siw: 10 pings of " + RPING_SIZE + " B verified");
    }

    @Test
    @Order(7)
    @DisplayName("jwarp rping -s --provider soft (node 1) <-> kernel rping -c (node 2, siw0), -C 10 -V -S 16384 "
            + "(RFC 5040 §5)")
    void jwarpRpingServer_kernelRpingClient_5040_5() throws Exception {
        int port = PORTS.getAndIncrement();
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CompletableFuture<Integer> server = CompletableFuture.supplyAsync(() -> JwarpCli.run(new PrintWriter(out, true),
                new PrintWriter(err, true), "rping", "-s", "-a", SIW, "-p", "" + port, "-S", RPING_SIZE, "-v", "-d",
                "--provider", "soft", "--timeout", "120"));
        long end = System.nanoTime() + TIMEOUT.toNanos();
        while (!out.toString().contains("listening on")) {
            if (server.isDone() || System.nanoTime() > end) {
                fail("jwarp rping -s did not listen:\n" + out + err);
            }
            Thread.sleep(20);
        }
        Agent.Remote client = agent.run("stdbuf", "-oL", "rping", "-c", "-a", SIW, "-p", "" + port, "-C", "10", "-V",
                "-v", "-S", RPING_SIZE);
        int crc = client.waitExit(TIMEOUT);
        int src = server.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        String why = "jwarp rping -s:\n" + out + err + "\n" + client.transcript();
        assertEquals(0, src, why);
        String note = "";
        if (crc != 0 && rpingTeardownRace(client.lines(""))) {
            note = "; kernel rping then exited " + crc + " from its own teardown race (its CM thread read the event "
                    + "channel main() had destroyed: 'rdma_get_cm_event: Bad file descriptor' after DISCONNECT)";
        } else {
            assertEquals(0, crc, why);
        }
        assertEquals(10, client.lines("ping data: rdma-ping-").size(), why);
        assertTrue(out.toString().contains("client disconnected after 10 pings"), why);
        sayCase("jwarp rping -s (soft, node 1) <-> rping -c (kernel, node 2) port " + port
                + " sides=soft,siw: 10 pings of " + RPING_SIZE + " B verified" + note);
    }

    /**
     * rping's client ends with exit(-1) when its CM thread handles DISCONNECTED only after main()
     * destroyed the event channel: a race inside rping, after every ping was verified, that a slow
     * peer (a JVM under TCG) makes likely. Recognised only by its exact last two lines.
     */
    static boolean rpingTeardownRace(List<String> lines) {
        int n = lines.size();
        return n >= 2 && lines.get(n - 2).equals("client DISCONNECT EVENT...")
                && lines.get(n - 1).equals("rdma_get_cm_event: Bad file descriptor");
    }

    interface Call<T> {
        T call() throws Exception;
    }

    static <T> CompletableFuture<T> async(Call<T> c) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return c.call();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
    }

    /** Runs the local half; a failure carries node 2's transcript. */
    static LinkExchange.Result exchange(Agent.Remote peer, Call<LinkExchange.Result> local) throws Exception {
        try {
            return local.call();
        } catch (Throwable e) {
            throw new AssertionError(e + "\n" + peer.transcript(), e);
        }
    }

    /** siw_peer's own verification of what it received: the Send, our Write, its Read. */
    static void peerChecks(List<String> checks, String why) {
        for (String what : List.of("send_from_peer", "rdma_read_from_peer", "rdma_write_from_peer")) {
            String line = checks.stream().filter(l -> l.contains("check=" + what + " ")).findFirst().orElse(null);
            assertNotNull(line, "siw_peer printed no check=" + what + "\n" + why);
            assertTrue(line.contains("bytes=" + AREA + " ok"), line + "\n" + why);
        }
    }

    /** One line per case for scripts/two-node-tests: the port names the connection in the capture. */
    static void report(String what, int port, String node1, String node2, LinkExchange.Result r) {
        sayCase(what + " port " + port + " sides=" + node1 + "," + node2 + ": " + r);
    }

    /** The CASE line; a case run again after a dead link says RETRIED with its first attempt's failure. */
    static void sayCase(String s) {
        say("twonode: CASE " + s + LinkWatch.Cases.retriedNote());
    }

    static void say(String s) {
        System.out.println(s);
    }

    /** A process on node 1 (siw_peer), its merged output kept as lines. */
    static final class Local {
        final Process p;
        final List<String> lines = new ArrayList<>();
        final Thread reader;

        Local(Process p) {
            this.p = p;
            this.reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    String l;
                    while ((l = r.readLine()) != null) {
                        System.out.println("  | " + l);
                        synchronized (lines) {
                            lines.add(l);
                        }
                    }
                } catch (java.io.IOException e) {
                    System.out.println("  | reader: " + e);
                }
            });
            reader.setDaemon(true);
            reader.start();
        }

        static Local start(String... argv) throws Exception {
            say("twonode: node 1 process: " + String.join(" ", argv));
            return new Local(new ProcessBuilder(argv).redirectErrorStream(true).start());
        }

        int waitExit(Duration t) throws Exception {
            long end = System.nanoTime() + t.toNanos();
            while (!p.waitFor(500, TimeUnit.MILLISECONDS)) {
                if (LinkWatch.dead() != null) {
                    p.destroyForcibly();
                    LinkWatch.failIfDead();
                }
                if (System.nanoTime() > end) {
                    p.destroyForcibly();
                    fail("node 1 process did not end within " + t + ":\n" + transcript());
                }
            }
            reader.join(2000);
            return p.exitValue();
        }

        List<String> lines(String prefix) {
            synchronized (lines) {
                return lines.stream().filter(l -> l.startsWith(prefix)).toList();
            }
        }

        String transcript() {
            synchronized (lines) {
                return "--- node 1 process ---\n" + String.join("\n", lines);
            }
        }
    }
}
