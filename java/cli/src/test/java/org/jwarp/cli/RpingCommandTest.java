package org.jwarp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jwarp.verbs.Access;
import org.jwarp.verbs.CompletionQueue;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionRequest;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.ProtectionDomain;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.Rdma;
import org.jwarp.verbs.RdmaProvider;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WorkCompletion;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code jwarp rping} on the soft provider over loopback: server and client of this project
 * against each other, and each against a hand-driven peer that breaks rping's protocol (a wrong
 * length, an advertisement larger than the buffer, silence, a disconnect mid-iteration, wrong
 * data). The data path is RFC 5040 §5.3 Sends, §5.2 RDMA Read and §5.1 RDMA Write.
 */
class RpingCommandTest {
    static final String LOOP = "127.0.0.1";

    /** How long a run may take to bind and print "listening on" on a loaded 2-core machine. */
    static final long LISTEN_SECONDS = 30;

    /**
     * One in-process run of {@code jwarp rping} with its own output, on a thread of its own: a
     * run blocks for its whole life, so a shared pool (the ForkJoin common pool has as few as one
     * worker on 2 cores) could leave a client queued behind a blocked server.
     */
    record Run(CompletableFuture<Integer> exit, StringWriter out, StringWriter err, Thread thread) {
        static Run start(String... args) {
            StringWriter o = new StringWriter();
            StringWriter e = new StringWriter();
            CompletableFuture<Integer> f = new CompletableFuture<>();
            Thread t = new Thread(() -> {
                try {
                    f.complete(JwarpCli.run(new PrintWriter(o, true), new PrintWriter(e, true), args));
                } catch (Throwable x) {
                    f.completeExceptionally(x);
                }
            }, "jwarp-" + String.join(" ", args));
            t.setDaemon(true);
            t.start();
            return new Run(f, o, e, t);
        }

        int await(long seconds) throws Exception {
            return exit.get(seconds, TimeUnit.SECONDS);
        }

        /** Waits for the -d line that says the server listens; fails if it never comes. */
        Run listening() throws Exception {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(LISTEN_SECONDS);
            while (!out.toString().contains("listening on")) {
                if (exit.isDone() || System.nanoTime() > end) {
                    throw new AssertionError("server did not listen: " + out + err);
                }
                Thread.sleep(10);
            }
            return this;
        }

        List<String> lines(String prefix) {
            return out.toString().lines().filter(l -> l.startsWith(prefix)).toList();
        }

        /** The last lines of both streams (a 64 KiB -v line is cut). */
        String transcript() {
            return "--- out ---\n" + tail(out.toString()) + "--- err ---\n" + tail(err.toString());
        }

        private static String tail(String s) {
            return s.length() <= 3000 ? s : "..." + s.substring(s.length() - 3000);
        }
    }

    static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** rping's ping text for iteration {@code ping} at {@code size} (without its NUL). */
    static String expectedPing(int ping, int size) {
        StringBuilder b = new StringBuilder("rdma-ping-" + ping + ": ");
        char c = (char) ('A' + ping % 58);
        while (b.length() < size - 1) {
            b.append(c);
            c = c == 'z' ? 'A' : (char) (c + 1);
        }
        return b.toString();
    }

    @ParameterizedTest(name = "jwarp rping -s <-> jwarp rping -c -C 10 -V -S {0}")
    @ValueSource(ints = {64, 65535})
    void serverAndClientPingTenTimes_5040_5(int size) throws Exception {
        int port = freePort();
        Run server = Run.start("rping", "-s", "-a", LOOP, "-p", "" + port, "-S", "" + size, "-v", "-d").listening();
        Run client = Run.start("rping", "-c", "-a", LOOP, "-p", "" + port, "-S", "" + size, "-C", "10", "-V", "-v");
        assertEquals(0, client.await(60), client.transcript());
        assertEquals(0, server.await(30), server.transcript());
        List<String> pings = client.lines("ping data: ");
        assertEquals(10, pings.size(), client.transcript());
        for (int i = 0; i < 10; i++) {
            assertEquals("ping data: " + expectedPing(i, size), pings.get(i));
        }
        List<String> served = server.lines("server ping data: ");
        assertEquals(10, served.size(), server.transcript());
        assertEquals("server ping data: " + expectedPing(9, size), served.get(9));
        assertTrue(server.out().toString().contains("client disconnected after 10 pings"), server.transcript());
        assertEquals("", client.err().toString());
        assertEquals("", server.err().toString());
    }

    @Test
    void clientLeavesFromItsSourceAddress_5044_7_1() throws Exception {
        int port = freePort();
        Run server = Run.start("rping", "-s", "-a", LOOP, "-p", "" + port, "-d").listening();
        // 127.0.0.2 is loopback too, but not the server's address: the request must come from it
        Run client = Run.start("rping", "-c", "-I", "127.0.0.2", "-a", LOOP, "-p", "" + port, "-C", "2", "-V");
        assertEquals(0, client.await(60), client.transcript());
        assertEquals(0, server.await(30), server.transcript());
        assertTrue(server.out().toString().contains("connect request from /127.0.0.2:"), server.transcript());
        // an address this host does not have cannot be the source: a setup failure naming it
        Run foreign = Run.start("rping", "-c", "-I", "192.0.2.1", "-a", LOOP, "-p", "" + port, "-C", "1");
        assertTrue(foreign.await(30) != 0, foreign.transcript());
        assertTrue(foreign.err().toString().contains("192.0.2.1"), foreign.transcript());
    }

    @Test
    void persistentServerServesConcurrentClientsUntilInterrupted_5040_5() throws Exception {
        int port = freePort();
        Run server = Run.start("rping", "-s", "-P", "-a", LOOP, "-p", "" + port, "-d", "-S", "1000").listening();
        StringWriter o = server.out();
        Thread t = server.thread();
        Run a = Run.start("rping", "-c", "-a", LOOP, "-p", "" + port, "-C", "3", "-V");
        Run b = Run.start("rping", "-c", "-a", LOOP, "-p", "" + port, "-C", "5", "-V", "-S", "1000");
        assertEquals(0, a.await(30), a.transcript());
        assertEquals(0, b.await(30), b.transcript());
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!(o.toString().contains("client disconnected after 3 pings")
                && o.toString().contains("client disconnected after 5 pings")) && System.nanoTime() < end) {
            Thread.sleep(10);
        }
        assertTrue(o.toString().contains("client disconnected after 3 pings"), o.toString());
        assertTrue(o.toString().contains("client disconnected after 5 pings"), o.toString());
        assertTrue(t.isAlive(), "a persistent server keeps listening");
        t.interrupt();
        assertEquals(RpingException.EXIT_FAILED, server.await(30), "interrupt ends the persistent server");
        assertTrue(server.err().toString().contains("jwarp rping: interrupted"), server.transcript());
    }

    @Test
    void pingDataIsRpingsText() {
        ByteBuffer b = ByteBuffer.allocateDirect(64);
        RpingSession.fillPing(b, 64, 3, 'x');
        assertEquals("rdma-ping-3: xyzABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmno",
                RpingSession.cString(b, 64));
        assertEquals(0, b.get(63));
        RpingSession.fillPing(b, 23, 2147483647, 'A');
        assertEquals("rdma-ping-2147483647: ", RpingSession.cString(b, 23));
    }

    @ParameterizedTest(name = "-S {0} is refused with EINVAL")
    @ValueSource(ints = {0, 22, 65536, 100000})
    void sizeOutsideRpingsRangeIsRefused(int size) {
        CliRun r = CliRun.of("rping", "-c", "-a", LOOP, "-S", "" + size);
        assertEquals(RpingException.EXIT_USAGE, r.exit(), r.err());
        assertTrue(r.err().contains("invalid size " + size + " (-S): rping's range is 23 to 65535"), r.err());
    }

    @Test
    void optionErrorsExitWithEinval() {
        CliRun none = CliRun.of("rping", "-a", LOOP);
        assertEquals(22, none.exit());
        assertTrue(none.err().contains("one of -s (server) or -c (client) is required"), none.err());
        CliRun both = CliRun.of("rping", "-s", "-c", "-a", LOOP);
        assertEquals(22, both.exit());
        CliRun noAddr = CliRun.of("rping", "-c");
        assertEquals(22, noAddr.exit());
        assertTrue(noAddr.err().contains("-a ADDR"), noAddr.err());
        CliRun count = CliRun.of("rping", "-c", "-a", LOOP, "-C", "-1");
        assertEquals(22, count.exit());
        CliRun unknown = CliRun.of("rping", "-c", "-a", LOOP, "-x");
        assertEquals(22, unknown.exit(), unknown.err());
        CliRun timeout = CliRun.of("rping", "-c", "-a", LOOP, "--timeout", "0");
        assertEquals(22, timeout.exit());
    }

    @Test
    void clientWithoutServerFailsWith255() {
        long t0 = System.nanoTime();
        CliRun r = CliRun.of("rping", "-c", "-a", LOOP, "-p", "1", "--timeout", "2");
        assertEquals(RpingException.EXIT_FAILED, r.exit(), r.err());
        assertTrue(r.err().startsWith("jwarp rping: connect to "), r.err());
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(10));
    }

    // ---- hand-driven peers over the verbs API --------------------------------------------------

    RdmaProvider provider;
    Device dev;
    ProtectionDomain pd;
    CompletionQueue cq;
    MemoryRegion mr;
    final WorkCompletion[] wcs = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion(),
            new WorkCompletion()};

    @BeforeEach
    void open() throws Exception {
        provider = Rdma.open("soft");
        dev = provider.open(InetAddress.getByName(LOOP));
        pd = dev.allocateProtectionDomain();
        cq = dev.createCompletionQueue(32);
        mr = pd.register(ByteBuffer.allocateDirect(4096), EnumSet.allOf(Access.class));
    }

    @AfterEach
    void close() {
        provider.close();
    }

    /** Receives at 0 and 64; messages leave from 1024; data at 2048. */
    QueuePairConfig qpc() {
        return QueuePairConfig.of(pd, cq, 16).withBeforeConnect(q -> {
            q.postRecv(100, mr, 0, 64);
            q.postRecv(101, mr, 64, 64);
        });
    }

    Connection connectTo(int port) throws Exception {
        return dev.connectionManager().connect(new InetSocketAddress(LOOP, port), qpc(),
                RpingCommand.connectionParameters(false), Duration.ofSeconds(30));
    }

    void send(Connection c, int len) throws Exception {
        c.queuePair().postSend(new SendRequest().send(1, mr, 1024, len));
    }

    void advertise(Connection c, long addr, int rkey, int size) throws Exception {
        RpingAdvert.put(mr.buffer(), 1024, addr, rkey, size);
        send(c, RpingAdvert.LENGTH);
    }

    /** Waits for a receive completion and returns its length. */
    int awaitRecv() throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < end) {
            int n = cq.await(wcs, 1, 200, TimeUnit.MILLISECONDS);
            if (n == 1 && wcs[0].opcode == org.jwarp.verbs.WcOpcode.RECV) {
                assertTrue(wcs[0].isSuccess(), wcs[0].toString());
                return wcs[0].byteLength;
            }
        }
        throw new AssertionError("no message from jwarp rping");
    }

    Run server(int port, String... more) throws Exception {
        String[] base = {"rping", "-s", "-a", LOOP, "-p", "" + port, "-d"};
        String[] args = java.util.Arrays.copyOf(base, base.length + more.length);
        System.arraycopy(more, 0, args, base.length, more.length);
        return Run.start(args).listening();
    }

    @ParameterizedTest(name = "a {0}-byte message is refused")
    @ValueSource(ints = {12, 20})
    void serverRefusesWrongLengthMessage_5041_4_4(int len) throws Exception {
        int port = freePort();
        Run server = server(port, "--timeout", "10");
        try (Connection c = connectTo(port)) {
            send(c, len);
            assertEquals(255, server.await(30), server.transcript());
        }
        assertTrue(server.err().toString().contains("received bogus data waiting for the client's source advertisement: a "
                + len + "-byte message; every rping message is 16 bytes"), server.transcript());
    }

    @Test
    void serverRefusesAdvertisementLargerThanItsBuffer_5040_5_2() throws Exception {
        int port = freePort();
        Run server = server(port, "-S", "64", "--timeout", "10");
        try (Connection c = connectTo(port)) {
            advertise(c, mr.address() + 2048, mr.rkey(), 65);
            assertEquals(255, server.await(30), server.transcript());
        }
        assertTrue(server.err().toString().contains("the client advertised 65 bytes of ping data; this server's buffer "
                + "holds 1..64 (-S 64)"), server.transcript());
    }

    @Test
    void serverGivesUpOnSilentPeerWithinTimeout_5040_5_3() throws Exception {
        int port = freePort();
        Run server = server(port, "--timeout", "1");
        try (Connection c = connectTo(port)) {
            assertTrue(c.isOpen(), "connected, and never sends");
            long t0 = System.nanoTime();
            assertEquals(255, server.await(30), server.transcript());
            // --timeout 1 must end the wait; the bound only says "no hang" (a loaded CI box is slow)
            assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(15), "gave up late");
        }
        assertTrue(server.err().toString().contains("no progress within 1000 ms waiting for the client's source "
                + "advertisement (--timeout)"), server.transcript());
    }

    @Test
    void serverFailsWhenClientDisconnectsMidIteration_5040_5_3() throws Exception {
        int port = freePort();
        Run server = server(port, "--timeout", "10");
        byte[] ping = "rdma-ping-0: hello\0".getBytes(StandardCharsets.US_ASCII);
        mr.buffer().put(2048, ping);
        try (Connection c = connectTo(port)) {
            advertise(c, mr.address() + 2048, mr.rkey(), ping.length);
            assertEquals(16, awaitRecv(), "go-ahead after the server's RDMA Read");
        }
        assertEquals(255, server.await(30), server.transcript());
        assertTrue(server.err().toString().contains("the client disconnected waiting for the client's sink "
                + "advertisement after 0 pings"), server.transcript());
    }

    /** A server of our own that answers one source advertisement, then writes back {@code back}. */
    @ParameterizedTest(name = "-V catches a server that writes back {0}")
    @ValueSource(strings = {"corrupt", "short-go-ahead"})
    void clientRefusesBadServer_5040_5_1(String mode) throws Exception {
        int port = freePort();
        try (Listener l = dev.connectionManager().listen(new InetSocketAddress(LOOP, port), 1)) {
            Run client = Run.start("rping", "-c", "-a", LOOP, "-p", "" + port, "-C", "1", "-V", "--timeout", "10");
            ConnectionRequest req = l.next(Duration.ofSeconds(30));
            try (Connection c = req.accept(qpc(), RpingCommand.connectionParameters(false))) {
                assertEquals(16, awaitRecv());
                ByteBuffer b = mr.buffer();
                long addr = RpingAdvert.address(b, 0);
                int rkey = RpingAdvert.rkey(b, 0);
                int size = (int) RpingAdvert.size(b, 0);
                c.queuePair().postSend(new SendRequest().read(READ_WR, mr, 2048, size, addr, rkey));
                RpingAdvert.putGoAhead(b, 1024);
                if (mode.equals("short-go-ahead")) {
                    send(c, 8);
                    assertEquals(255, client.await(30), client.transcript());
                    assertTrue(client.err().toString().contains("a 8-byte message; every rping message is 16 bytes"),
                            client.transcript());
                    return;
                }
                // A Send is not ordered behind the Read Response data (RFC 5040 §5.5): only the
                // Read's own completion says the ping data has landed at 2048.
                awaitSendCompletion(READ_WR);
                send(c, 16);
                assertEquals(16, awaitRecvAt(64));
                addr = RpingAdvert.address(b, 64);
                rkey = RpingAdvert.rkey(b, 64);
                b.put(2048 + 20, (byte) (b.get(2048 + 20) ^ 1));
                c.queuePair().postSend(new SendRequest().write(3, mr, 2048, size, addr, rkey));
                send(c, 16);
                assertEquals(255, client.await(30), client.transcript());
                assertTrue(client.err().toString().contains("data mismatch in ping 0 at byte 20 of 64"),
                        client.transcript());
            }
        }
    }

    static final long READ_WR = 2;

    /** Waits for the send-queue completion of {@code wrId}; no message may arrive meanwhile. */
    void awaitSendCompletion(long wrId) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (System.nanoTime() < end) {
            int n = cq.await(wcs, 1, 200, TimeUnit.MILLISECONDS);
            if (n == 1) {
                assertTrue(wcs[0].isSuccess(), wcs[0].toString());
                assertTrue(wcs[0].opcode != org.jwarp.verbs.WcOpcode.RECV, "unexpected message: " + wcs[0]);
                if (wcs[0].wrId == wrId) {
                    return;
                }
            }
        }
        throw new AssertionError("no completion for work request " + wrId);
    }

    private int awaitRecvAt(int offset) throws Exception {
        int len = awaitRecv();
        assertEquals(offset == 0 ? 100 : 101, wcs[0].wrId);
        return len;
    }
}
