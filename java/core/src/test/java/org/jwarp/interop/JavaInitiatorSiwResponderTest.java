package org.jwarp.interop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import org.jwarp.mpa.EnhancedConnectionData;
import org.jwarp.mpa.MpaFrame;
import org.jwarp.mpa.MpaFrameLimits;
import org.jwarp.negotiation.InitiatorConfig;
import org.jwarp.negotiation.NegotiationStatus;
import org.jwarp.ground.RtrType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Interop, role (a): the project's wire engine as MPA initiator (RFC 5044 §7.1, RFC 6581) against
 * the kernel's siw as responder, through the C peer {@code siw_peer server} on siw0.
 */
@Tag("guest")
@Tag("device")
class JavaInitiatorSiwResponderTest {
    static final Duration TIMEOUT = Duration.ofSeconds(60);
    static final byte[] JAVA_PD = "jwarp-initiator".getBytes();

    @BeforeAll
    static void guest() {
        Guest.require();
        System.out.println("interop: kernel " + Guest.kernel());
    }

    static InitiatorConfig.Builder config() {
        return InitiatorConfig.builder().ird(6).ord(3).peerToPeer(true).rtrTypes(EnumSet.of(RtrType.WRITE, RtrType.READ))
                .crc(false).ulpPrivateData(JAVA_PD).limits(MpaFrameLimits.SIW).fallbackToUnenhanced(false);
    }

    @Test
    @DisplayName("setup: siw's MPA Reply decodes as Rev 2 with S, echoes A, picks the Write RTR, clamps IRD/ORD "
            + "(RFC 5044 §7.1.1, RFC 6581 §9.1, §9.2); siw's CONNECT_REQUEST shows our private data and IRD/ORD")
    void connectionSetup_6581_9() throws Exception {
        int port = Guest.port();
        byte[] acceptPd = "siw-accept".getBytes();
        // The ULP accepts with IRD 2 (below our ORD 3) and ORD 9 (above our IRD 6).
        try (SiwPeer siw = SiwPeer.start("server", "-a", Guest.siwIp(), "-p", "" + port, "-s", "none", "-r", "2",
                "-i", "9", "-d", HexFormat.of().formatHex(acceptPd), "-t", "50")) {
            siw.awaitLine("listening", TIMEOUT);
            try (WirePeer java = WirePeer.connect(Guest.siwAddress(port), config().build(), TIMEOUT)) {
                MpaFrame reply = java.peerFrame;
                System.out.println("interop: siw reply " + HexFormat.of().formatHex(java.peerFrameBytes) + " = " + reply);
                assertTrue(reply.isReply(), "key \"MPA ID Rep Frame\"");
                assertEquals(2, reply.revision(), "Rev (RFC 6581 §10)");
                assertTrue(reply.enhanced(), "S bit: enhanced data present (RFC 6581 §9)");
                assertFalse(reply.marker(), "M: siw never uses markers");
                assertFalse(reply.crc(), "C: not requested, and siw does not require CRC");
                assertFalse(reply.reject(), "R");
                EnhancedConnectionData ed = reply.enhancedData();
                assertTrue(ed.peerToPeer(), "A echoed (RFC 6581 §9.2)");
                assertTrue(ed.writeRtr(), "siw picks the Write RTR when offered");
                assertFalse(ed.readRtr(), "only one RTR type in the reply");
                assertFalse(ed.sendRtr(), "siw never uses a Send RTR");
                // siw raises a ULP IRD below the initiator's ORD and lowers a ULP ORD above its IRD.
                assertEquals(3, ed.ird(), "reply IRD: ULP's 2 raised to our ORD 3");
                assertEquals(6, ed.ord(), "reply ORD: ULP's 9 lowered to our IRD 6 (RFC 6581 §9.1)");
                assertArrayEquals(acceptPd, reply.ulpPrivateData(), "ULP private data of rdma_accept");
                assertEquals(NegotiationStatus.ESTABLISHED, java.outcome.status(), java.outcome::reason);
                assertEquals(RtrType.WRITE, java.outcome.rtr());
                assertEquals(3, java.outcome.ord());
                assertEquals(6, java.outcome.ird());
                // The RTR is the first FPDU; siw reports ESTABLISHED only after it (RFC 6581 §9.2).
                java.pumpUntil("RTR sent", () -> !java.endpoint.hasPendingOutput(), TIMEOUT);
                String est = siw.awaitLine("event=RDMA_CM_EVENT_ESTABLISHED", TIMEOUT);
                String req = siw.line("event=RDMA_CM_EVENT_CONNECT_REQUEST");
                Map<String, String> rq = SiwPeer.fields(req);
                assertEquals(HexFormat.of().formatHex(JAVA_PD), rq.get("private_data"),
                        "siw hands the ULP private data after the 4 enhanced bytes to rdma_cm");
                assertEquals("6", rq.get("initiator_depth"), "CONNECT_REQUEST initiator_depth = our IRD");
                assertEquals("3", rq.get("responder_resources"), "CONNECT_REQUEST responder_resources = our ORD");
                Map<String, String> e = SiwPeer.fields(est);
                // siw reports its own final IRD/ORD on ESTABLISHED; cma maps the event's ird to
                // initiator_depth and its ord to responder_resources.
                assertEquals("3", e.get("initiator_depth"), "ESTABLISHED: siw's final IRD (event ird)");
                assertEquals("6", e.get("responder_resources"), "ESTABLISHED: siw's final ORD (event ord)");
                assertTrue(java.awaitClose(TIMEOUT), "siw_peer -s none disconnects");
            }
            assertEquals(0, siw.waitExit(TIMEOUT), siw::transcript);
        }
    }

    @Test
    @DisplayName("send/recv, RDMA Write and RDMA Read, CRC off, Write RTR (RFC 5040 §5.1-§5.3)")
    void sendWriteRead_crcOff() throws Exception {
        runBasic(config().build(), false, RtrType.WRITE);
    }

    @Test
    @DisplayName("only a Read RTR offered: siw answers D and accepts the zero-length Read Request RTR (RFC 6581 §9.2)")
    void sendWriteRead_readRtr() throws Exception {
        runBasic(config().rtrTypes(EnumSet.of(RtrType.READ)).build(), false, RtrType.READ);
    }

    @Test
    @DisplayName("CRC requested by the initiator (C=1): siw's reply decides; data path checked with CRC32c as "
            + "negotiated (RFC 5044 §7.1.1, §8)")
    void sendWriteRead_crcRequested() throws Exception {
        runBasic(config().crc(true).build(), true, RtrType.WRITE);
    }

    static void runBasic(InitiatorConfig cfg, boolean expectCrcFromRequest, RtrType rtr) throws Exception {
        runBasic(Guest.port(), cfg, expectCrcFromRequest, rtr);
    }

    static void runBasic(int port, InitiatorConfig cfg, boolean expectCrcFromRequest, RtrType rtr) throws Exception {
        try (SiwPeer siw = SiwPeer.start("server", "-a", Guest.siwIp(), "-p", "" + port, "-s", "basic", "-t", "50")) {
            siw.awaitLine("listening", TIMEOUT);
            try (WirePeer java = WirePeer.connect(Guest.siwAddress(port), cfg, TIMEOUT)) {
                System.out.println("interop: siw reply " + java.peerFrame + " outcome " + java.outcome);
                assertEquals(NegotiationStatus.ESTABLISHED, java.outcome.status(), java.outcome::reason);
                assertEquals(rtr, java.outcome.rtr(), "RTR type");
                EnhancedConnectionData ed = java.peerFrame.enhancedData();
                assertEquals(rtr == RtrType.WRITE, ed.writeRtr(), "C bit of the reply");
                assertEquals(rtr == RtrType.READ, ed.readRtr(), "D bit of the reply");
                System.out.println("interop: CRC requested=" + cfg.crc() + " reply C=" + java.peerFrame.crc()
                        + " in use=" + java.outcome.crc());
                assertEquals(expectCrcFromRequest || java.peerFrame.crc(), java.outcome.crc(),
                        "CRC is on when either frame set C (RFC 5044 §7.1.1)");
                new BasicExchange(java, 8192, TIMEOUT).run();
                assertTrue(java.awaitClose(TIMEOUT), "siw disconnects after the script");
            }
            assertEquals(0, siw.waitExit(TIMEOUT), siw::transcript);
            assertNotNull(siw.line("check=rdma_read_from_peer bytes=8192 ok"), siw::transcript);
            assertNotNull(siw.line("check=rdma_write_from_peer bytes=8192 ok"), siw::transcript);
        }
    }

    @Test
    @DisplayName("rdma_reject with private data: siw replies R=1 carrying it (RFC 5044 §7.1.1)")
    void rejectWithPrivateData_5044_7_1_1() throws Exception {
        int port = Guest.port();
        byte[] why = "no-thanks".getBytes();
        try (SiwPeer siw = SiwPeer.start("server", "-a", Guest.siwIp(), "-p", "" + port, "-j",
                HexFormat.of().formatHex(why), "-t", "50")) {
            siw.awaitLine("listening", TIMEOUT);
            try (WirePeer java = WirePeer.connect(Guest.siwAddress(port), config().build(), TIMEOUT)) {
                System.out.println("interop: siw reject " + HexFormat.of().formatHex(java.peerFrameBytes) + " = "
                        + java.peerFrame);
                assertTrue(java.peerFrame.reject(), "R bit");
                assertEquals(2, java.peerFrame.revision(), "Rev");
                assertEquals(NegotiationStatus.REJECTED, java.outcome.status(), java.outcome::reason);
                assertArrayEquals(why, java.outcome.peerPrivateData(), "reject private data");
                assertTrue(java.awaitClose(TIMEOUT), "siw closes after the reject");
            }
            assertEquals(0, siw.waitExit(TIMEOUT), siw::transcript);
        }
    }

    static Set<RtrType> both() {
        return EnumSet.of(RtrType.WRITE, RtrType.READ);
    }
}
