package org.jwarp.interop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import org.jwarp.mpa.EnhancedConnectionData;
import org.jwarp.mpa.MpaFrame;
import org.jwarp.mpa.MpaFrameLimits;
import org.jwarp.negotiation.NegotiationStatus;
import org.jwarp.negotiation.ResponderConfig;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Interop, role (b): the kernel's siw as MPA initiator ({@code siw_peer client} on siw0) against the
 * project's wire engine as responder listening on siw0's address (RFC 5044 §7.1, RFC 6581).
 */
@Tag("guest")
@Tag("device")
class SiwInitiatorJavaResponderTest {
    static final Duration TIMEOUT = Duration.ofSeconds(60);
    static final byte[] SIW_PD = "siw-initiator".getBytes();
    static final byte[] JAVA_PD = "jwarp-responder".getBytes();

    @BeforeAll
    static void guest() {
        Guest.require();
    }

    static ResponderConfig.Builder config() {
        return ResponderConfig.builder().maxIrd(8).ord(2).crc(false).ulpPrivateData(JAVA_PD).limits(MpaFrameLimits.SIW);
    }

    static ServerSocketChannel listen(int port) throws Exception {
        ServerSocketChannel s = ServerSocketChannel.open();
        s.bind(new InetSocketAddress(Guest.siwIp(), port));
        return s;
    }

    static SiwPeer client(int port, String script, String... more) throws Exception {
        String[] base = {"-a", Guest.siwIp(), "-p", "" + port, "-s", script, "-r", "5", "-i", "3", "-d",
                HexFormat.of().formatHex(SIW_PD), "-t", "50"};
        String[] all = new String[base.length + more.length];
        System.arraycopy(base, 0, all, 0, base.length);
        System.arraycopy(more, 0, all, base.length, more.length);
        return SiwPeer.start("client", all);
    }

    @Test
    @DisplayName("setup: siw's MPA Request decodes as Rev 2 with S and its IRD/ORD (RFC 6581 §9); siw adopts our "
            + "Reply's IRD/ORD and private data (RFC 6581 §9.1)")
    void connectionSetup_6581_9() throws Exception {
        int port = Guest.port();
        try (ServerSocketChannel server = listen(port); SiwPeer siw = client(port, "none")) {
            try (WirePeer java = WirePeer.accept(server, config().build(), TIMEOUT)) {
                MpaFrame req = java.peerFrame;
                System.out.println("interop: siw request " + HexFormat.of().formatHex(java.peerFrameBytes) + " = " + req);
                System.out.println("interop: java reply " + HexFormat.of().formatHex(java.localFrame) + " outcome "
                        + java.outcome);
                assertTrue(req.isRequest(), "key \"MPA ID Req Frame\"");
                assertEquals(2, req.revision(), "Rev: siw always sends Rev 2 (RFC 6581 §10)");
                assertTrue(req.enhanced(), "S: enhanced data present (RFC 6581 §9)");
                assertFalse(req.marker(), "M: siw never asks for markers");
                assertFalse(req.crc(), "C: siw does not require CRC");
                EnhancedConnectionData ed = req.enhancedData();
                assertEquals(5, ed.ird(), "request IRD = rdma_connect responder_resources");
                assertEquals(3, ed.ord(), "request ORD = rdma_connect initiator_depth");
                assertArrayEquals(SIW_PD, req.ulpPrivateData(), "ULP private data of rdma_connect");
                assertEquals(NegotiationStatus.ESTABLISHED, java.outcome.status(), java.outcome::reason);
                // RFC 6581 §9.1: the responder's ORD must not exceed the initiator's IRD.
                assertTrue(java.outcome.ord() <= ed.ird(), "responder ORD ≤ initiator IRD");
                assertTrue(java.outcome.ird() >= ed.ord(), "responder IRD ≥ initiator ORD");
                if (!ed.peerToPeer()) {
                    assertNull(java.outcome.rtr(), "no A: client-server model, no RTR (RFC 5044 §7.1.2)");
                }
                System.out.println("interop: siw request A=" + ed.peerToPeer() + " B=" + ed.sendRtr() + " C="
                        + ed.writeRtr() + " D=" + ed.readRtr() + "; RTR chosen " + java.outcome.rtr());
                String est = siw.awaitLine("event=RDMA_CM_EVENT_ESTABLISHED", TIMEOUT);
                Map<String, String> e = SiwPeer.fields(est);
                assertEquals(HexFormat.of().formatHex(JAVA_PD), e.get("private_data"), "reply private data at siw");
                // siw adopts ird = reply ORD, ord = reply IRD; cma maps event ird to initiator_depth.
                EnhancedConnectionData rep = MpaFrame.decode(java.localFrame, MpaFrameLimits.RFC).enhancedData();
                System.out.println("interop: reply IRD=" + rep.ird() + " ORD=" + rep.ord() + "; siw ESTABLISHED " + e);
                assertEquals("" + rep.ord(), e.get("initiator_depth"), "siw adopts IRD = our reply ORD");
                assertEquals("" + rep.ird(), e.get("responder_resources"), "siw adopts ORD = our reply IRD");
                assertTrue(java.awaitClose(TIMEOUT), "siw_peer -s none disconnects");
            }
            assertEquals(0, siw.waitExit(TIMEOUT), siw::transcript);
        }
    }

    @Test
    @DisplayName("send/recv, RDMA Write and RDMA Read with siw as initiator, CRC off (RFC 5040 §5.1-§5.3)")
    void sendWriteRead_crcOff() throws Exception {
        runBasic(config().build());
    }

    @Test
    @DisplayName("CRC turned on by our Reply (C=1): siw adopts it, data path with CRC32c both ways (RFC 5044 §7.1.1)")
    void sendWriteRead_crcByResponder() throws Exception {
        runBasic(config().crc(true).build());
    }

    static void runBasic(ResponderConfig cfg) throws Exception {
        int port = Guest.port();
        try (ServerSocketChannel server = listen(port); SiwPeer siw = client(port, "basic")) {
            try (WirePeer java = WirePeer.accept(server, cfg, TIMEOUT)) {
                System.out.println("interop: siw request " + java.peerFrame + " outcome " + java.outcome);
                assertEquals(NegotiationStatus.ESTABLISHED, java.outcome.status(), java.outcome::reason);
                assertEquals(cfg.crc(), java.outcome.crc(), "CRC as our Reply's C bit (siw's request has C=0)");
                new BasicExchange(java, 8192, TIMEOUT).run();
                assertTrue(java.awaitClose(TIMEOUT), "siw disconnects after the script");
            }
            assertEquals(0, siw.waitExit(TIMEOUT), siw::transcript);
            assertNotNull(siw.line("check=rdma_read_from_peer bytes=8192 ok"), siw::transcript);
            assertNotNull(siw.line("check=rdma_write_from_peer bytes=8192 ok"), siw::transcript);
        }
    }

    @Test
    @DisplayName("our Reply R=1 with private data: siw's rdma_cm reports REJECTED carrying it (RFC 5044 §7.1.1)")
    void rejectWithPrivateData_5044_7_1_1() throws Exception {
        int port = Guest.port();
        byte[] why = "go-away".getBytes();
        try (ServerSocketChannel server = listen(port); SiwPeer siw = client(port, "none")) {
            try (WirePeer java = WirePeer.accept(server, config().build(), why, TIMEOUT)) {
                System.out.println("interop: java reject " + HexFormat.of().formatHex(java.localFrame));
                assertEquals(NegotiationStatus.REJECTED, java.outcome.status());
                String ev = siw.awaitLine("event=RDMA_CM_EVENT_REJECTED", TIMEOUT);
                assertEquals(HexFormat.of().formatHex(why), SiwPeer.fields(ev).get("private_data"),
                        "REJECTED private data");
            }
            assertEquals(1, siw.waitExit(TIMEOUT), siw::transcript);
            assertNotNull(siw.line("result=REJECTED"), siw::transcript);
        }
    }
}
