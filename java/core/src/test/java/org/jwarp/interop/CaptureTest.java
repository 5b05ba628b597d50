package org.jwarp.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.jwarp.memory.StagRegion;
import org.jwarp.mpa.MpaFrameLimits;
import org.jwarp.negotiation.NegotiationStatus;
import org.jwarp.negotiation.ResponderConfig;
import org.jwarp.ground.RtrType;
import org.jwarp.rdmap.RdmapOpcode;
import org.jwarp.ground.TermCode;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Captures the project's iWARP traffic with tshark on the guest's {@code lo} (where traffic
 * between two endpoints on the guest's own addresses flows) and checks that Wireshark's
 * dissectors decode it as MPA (RFC 5044) and DDP/RDMAP (RFC 5041/5040) without a malformed
 * packet: Java ↔ siw (CRC on), Java ↔ Java (CRC on, Send, Write, Read, zero-length Sends and
 * Writes, TERM) and siw's TERM for a Write to an invalid STag. The MPA
 * dissector is a heuristic on TCP ({@code tshark -G heuristic-decodes}: {@code tcp iwarp_mpa T}),
 * enabled by default on every port, so no {@code -d} option is needed.
 *
 * <p>Zero-length Sends (24-byte FPDUs: length 18, the 18-byte untagged header, no pad, CRC) are
 * correct RFC 5041 §5.2 / RFC 5044 §4 framing, and the DDP/RDMAP dissector decodes them; Wireshark
 * 4.0's RPC-over-RDMA heuristic, which the iWARP dissector offers every Send payload, then throws
 * on the empty payload and marks the frame "Malformed Packet: RPCoRDMA". That is the dissector's
 * fault, not the bytes': the malformed check runs with {@code --disable-protocol rpcordma}, and a
 * second pass without it asserts that every malformed frame is such an RPCoRDMA exception.
 */
@Tag("guest")
@Tag("device")
class CaptureTest {
    static final Duration TIMEOUT = Duration.ofSeconds(60);

    @BeforeAll
    static void guest() {
        Guest.require();
    }

    @Test
    @DisplayName("tshark decodes Java<->siw and Java<->Java traffic as iwarp_mpa / iwarp_ddp_rdmap, no malformed "
            + "packets (RFC 5044 §7, RFC 5041 §5, RFC 5040 §4)")
    void captureDecodesAsIwarp() throws Exception {
        Path tshark = which("tshark");
        Path dir = Path.of("target", "guest-capture").toAbsolutePath();
        Files.createDirectories(dir);
        Path file = dir.resolve("iwarp-lo.pcapng");
        Files.deleteIfExists(file);
        int siwPort = Guest.port();
        int javaPort = Guest.port();
        int termPort = Guest.port();
        Process ts = new ProcessBuilder(tshark.toString(), "-i", "lo", "-f",
                "tcp port " + siwPort + " or tcp port " + javaPort + " or tcp port " + termPort, "-w", file.toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("tshark-capture.log").toFile()).start();
        try {
            awaitCaptureStarted(ts, dir.resolve("tshark-capture.log"));
            JavaInitiatorSiwResponderTest.runBasic(siwPort, JavaInitiatorSiwResponderTest.config().crc(true).build(),
                    true, RtrType.WRITE);
            javaToJava(javaPort);
            TerminateInteropTest.invalidStagCase(termPort); // siw's own TERM on the wire
            Thread.sleep(500); // the last segments reach the capture
        } finally {
            ts.destroy(); // SIGTERM: tshark finishes the file
            if (!ts.waitFor(60, TimeUnit.SECONDS)) {
                ts.destroyForcibly();
            }
        }
        String capLog = Files.readString(dir.resolve("tshark-capture.log"));
        System.out.println("interop: tshark capture: " + capLog.trim().replace('\n', ' '));
        assertTrue(Files.size(file) > 0, "capture file written");

        List<String> rows = run(tshark.toString(), "-r", file.toString(), "-T", "fields", "-E", "separator=|",
                "-e", "frame.number", "-e", "frame.protocols", "-e", "iwarp_mpa.key.req", "-e", "iwarp_mpa.key.rep",
                "-e", "iwarp_rdma.opcode", "-e", "tcp.port");
        int mpaReq = 0;
        int mpaRep = 0;
        int ddp = 0;
        Set<String> opcodes = new TreeSet<>();
        Set<String> ddpPorts = new TreeSet<>();
        for (String r : rows) {
            String[] f = r.split("\\|", -1);
            if (f.length < 6) {
                continue;
            }
            if (!f[2].isEmpty()) {
                mpaReq++;
            }
            if (!f[3].isEmpty()) {
                mpaRep++;
            }
            if (f[1].contains("iwarp_ddp_rdmap")) {
                ddp++;
                for (String p : f[5].split(",")) {
                    ddpPorts.add(p);
                }
            }
            for (String op : f[4].split(",")) {
                if (!op.isEmpty()) {
                    opcodes.add(op);
                }
            }
        }
        List<String> bad = run(tshark.toString(), "-r", file.toString(), "--disable-protocol", "rpcordma", "-Y",
                "_ws.malformed || _ws.expert.severity == error");
        List<String> notRpc = run(tshark.toString(), "-r", file.toString(), "-Y",
                "_ws.malformed && !(frame.protocols contains \"rpcordma\")");
        List<String> rpc = run(tshark.toString(), "-r", file.toString(), "-Y",
                "_ws.malformed && frame.protocols contains \"rpcordma\" && !(iwarp_rdma.opcode == 3 "
                        + "&& iwarp_mpa.ulpdulength == 18)");
        // One TCP segment may carry several FPDUs: pair each FPDU's ULPDU length with its opcode.
        int zeroSends = 0;
        int zeroWrites = 0;
        for (String r : run(tshark.toString(), "-r", file.toString(), "--disable-protocol", "rpcordma", "-T", "fields",
                "-E", "separator=|", "-E", "occurrence=a", "-e", "iwarp_mpa.ulpdulength", "-e", "iwarp_rdma.opcode")) {
            String[] f = r.split("\\|", -1);
            if (f.length < 2 || f[0].isEmpty() || f[1].isEmpty()) {
                continue;
            }
            String[] len = f[0].split(",");
            String[] op = f[1].split(",");
            for (int i = 0; i < Math.min(len.length, op.length); i++) {
                int o = Integer.decode(op[i]);
                zeroSends += len[i].equals("18") && o == 3 ? 1 : 0;
                zeroWrites += len[i].equals("14") && o == 0 ? 1 : 0;
            }
        }
        System.out.println("interop: tshark zero-length Sends=" + zeroSends + " zero-length Writes=" + zeroWrites);
        assertTrue(zeroSends >= 2, "both zero-length Sends decoded: " + zeroSends);
        assertTrue(zeroWrites >= 2, "the zero-length Write and the Write RTRs decoded: " + zeroWrites);
        assertTrue(notRpc.isEmpty(), "every malformed frame is the RPCoRDMA heuristic's: " + notRpc);
        assertTrue(rpc.isEmpty(), "the RPCoRDMA heuristic fails only on zero-length Sends: " + rpc);
        System.out.println("interop: tshark frames=" + rows.size() + " mpaRequests=" + mpaReq + " mpaReplies=" + mpaRep
                + " iwarp_ddp_rdmap=" + ddp + " rdmap opcodes=" + opcodes + " ports=" + ddpPorts);
        bad.forEach(l -> System.out.println("interop: tshark problem: " + l));
        assertTrue(bad.isEmpty(), "no malformed packet and no error-level expert info: " + bad);
        assertEquals(3, mpaReq, "MPA Request frames decoded (one per connection)");
        assertEquals(3, mpaRep, "MPA Reply frames decoded");
        assertTrue(ddp > 0, "iwarp_ddp_rdmap frames decoded");
        assertTrue(ddpPorts.contains("" + siwPort) && ddpPorts.contains("" + javaPort) && ddpPorts.contains("" + termPort),
                "DDP/RDMAP decoded on both connections: " + ddpPorts);
        for (String op : List.of("0", "1", "2", "3", "7")) {
            assertTrue(opcodes.contains(op) || opcodes.contains("0x0" + op) || opcodes.contains("0x" + op),
                    "RDMAP opcode " + op + " decoded (Write 0, Read Request 1, Read Response 2, Send 3, Terminate 7): "
                            + opcodes);
        }
    }

    /** Java initiator and Java responder over lo, both on the wire engine, CRC on. */
    private static void javaToJava(int port) throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(Guest.siwIp(), port));
            ResponderConfig rc = ResponderConfig.builder().crc(true).limits(MpaFrameLimits.SIW).build();
            CompletableFuture<WirePeer> accepted = CompletableFuture.supplyAsync(() -> {
                try {
                    return WirePeer.accept(server, rc, TIMEOUT);
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            });
            try (WirePeer a = WirePeer.connect(Guest.siwAddress(port),
                    JavaInitiatorSiwResponderTest.config().crc(true).build(), TIMEOUT);
                    WirePeer b = accepted.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                assertEquals(NegotiationStatus.ESTABLISHED, a.outcome.status(), a.outcome::reason);
                assertEquals(NegotiationStatus.ESTABLISHED, b.outcome.status(), b.outcome::reason);
                assertTrue(a.outcome.crc() && b.outcome.crc(), "CRC on both sides");
                int n = 8192;
                StagRegion ma = a.register(3 * n, 0x1000);
                StagRegion mb = b.register(2 * n, 0x2000_0000L);
                BasicExchange.fill(ma.buffer(), 0, 5, n);
                BasicExchange.fill(mb.buffer(), n, 6, n);
                java.nio.ByteBuffer rq = java.nio.ByteBuffer.allocateDirect(64);
                b.endpoint.postReceive(9, rq, 0, 64);
                a.endpoint.postSend(1, RdmapOpcode.SEND, ma.buffer(), 0, 64, 0, true);
                a.endpoint.postWrite(2, ma.buffer(), 0, n, mb.stag(), 0x2000_0000L, true);
                a.endpoint.postRead(3, ma.stag(), 0x1000 + 2L * n, n, mb.stag(), 0x2000_0000L + n, true);
                pumpBoth(a, b, () -> a.sendCompleted(3) && !b.receives.isEmpty());
                // zero-length messages, one DDP segment each (RFC 5041 §5.2), each pumped alone so it is
                // alone in its TCP segment too (as the demo's are)
                b.endpoint.postReceive(10, rq, 0, 64);
                b.endpoint.postReceive(11, rq, 0, 64);
                a.endpoint.postSend(4, RdmapOpcode.SEND, ma.buffer(), 0, 0, 0, true);
                pumpBoth(a, b, () -> a.sendCompleted(4) && b.receives.size() >= 2);
                a.endpoint.postSend(5, RdmapOpcode.SEND, ma.buffer(), 0, 0, 0, true);
                pumpBoth(a, b, () -> a.sendCompleted(5) && b.receives.size() >= 3);
                a.endpoint.postWrite(6, ma.buffer(), 0, 0, mb.stag(), 0x2000_0000L, true);
                pumpBoth(a, b, () -> a.sendCompleted(6));
                assertEquals(-1, BasicExchange.verify(mb.buffer(), 0, 5, n), "Write placed at the responder");
                assertEquals(-1, BasicExchange.verify(ma.buffer(), 2 * n, 6, n), "Read Response placed");
                a.endpoint.terminate(TermCode.RDMAP_CATASTROPHIC_STREAM, "capture test: end with a TERM");
                pumpBoth(a, b, () -> !b.peerTerms.isEmpty());
                assertEquals(TermCode.RDMAP_CATASTROPHIC_STREAM, b.peerTerms.get(0).code(), "TERM decoded by the peer");
            }
        }
    }

    private static void pumpBoth(WirePeer a, WirePeer b, BooleanSupplier done) throws Exception {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("Java<->Java exchange timed out: a " + a.state() + " / b " + b.state());
            }
            boolean progress = a.pumpOnce() | b.pumpOnce();
            if (!progress) {
                Thread.sleep(1);
            }
        }
    }

    private static void awaitCaptureStarted(Process ts, Path log) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (System.nanoTime() < deadline) {
            String s = Files.exists(log) ? Files.readString(log) : "";
            if (s.contains("Capture started")) {
                return;
            }
            if (!ts.isAlive()) {
                fail("tshark exited before capturing (" + ts.exitValue() + "): " + s);
            }
            Thread.sleep(200);
        }
        fail("tshark did not start capturing within 120 s: " + Files.readString(log));
    }

    private static List<String> run(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        List<String> lines = new ArrayList<>();
        try (var r = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String l;
            while ((l = r.readLine()) != null) {
                lines.add(l);
            }
        }
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "tshark -r finished");
        assertEquals(0, p.exitValue(), "tshark exit status for " + String.join(" ", cmd));
        return lines;
    }

    private static Path which(String tool) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(":")) {
            Path p = Path.of(d, tool);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        fail(tool + " is not installed: run scripts/setup-guest-deps --all");
        return null;
    }

}
