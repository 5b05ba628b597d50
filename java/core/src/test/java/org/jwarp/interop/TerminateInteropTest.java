package org.jwarp.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import org.jwarp.negotiation.NegotiationStatus;
import org.jwarp.rdmap.RdmapEndpoint;
import org.jwarp.rdmap.RdmapOpcode;
import org.jwarp.ground.TermCode;
import org.jwarp.rdmap.TerminateMessage;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Interop: a Terminate from each side (RFC 5040 §4.8, §7; RFC 5041 §7): siw's TERM for our RDMA
 * Write to an STag it does not know, and our TERM, which must kill siw's QP (flushed work requests,
 * DISCONNECTED at the rdma_cm peer).
 */
@Tag("guest")
@Tag("device")
class TerminateInteropTest {
    static final Duration TIMEOUT = Duration.ofSeconds(60);

    @BeforeAll
    static void guest() {
        Guest.require();
    }

    static boolean contains(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    @Test
    @DisplayName("RDMA Write to an invalid STag: siw sends a TERM naming the invalid-STag error "
            + "(RFC 5040 §4.8, RFC 5041 §7.2)")
    void writeToInvalidStag_siwTerminates_5040_4_8() throws Exception {
        invalidStagCase(Guest.port());
    }

    /**
     * Runs the invalid-STag case on {@code port} (also used by the capture test) and checks siw's
     * TERM both as the engine decoded it and byte by byte.
     */
    static void invalidStagCase(int port) throws Exception {
        try (SiwPeer siw = idleSiw(port)) {
            try (WirePeer java = connect(port)) {
                BasicExchange x = exchanged(java);
                int badStag = x.peerRkey ^ 0x5a5a5a00;
                System.out.printf("interop: RDMA Write of 64 bytes to STag 0x%08x (siw's is 0x%08x)%n", badStag,
                        x.peerRkey);
                java.endpoint.postWrite(77, x.buf, 0, 64, badStag, x.peerAddr, true);
                java.pumpUntil("siw's TERM", () -> !java.peerTerms.isEmpty(), TIMEOUT);
                TerminateMessage t = java.peerTerms.get(0);
                System.out.println("interop: siw TERM " + t + " m=" + t.m() + " d=" + t.d() + " r=" + t.r()
                        + " ddpHeader=" + HexFormat.of().formatHex(t.ddpHeader()) + " rdmapHeader="
                        + HexFormat.of().formatHex(t.rdmapHeader()) + "; last bytes on the wire "
                        + java.lastReceivedHex(64));
                TermCode c = t.code();
                boolean ddpTagged = c.equals(TermCode.DDP_TAGGED_INVALID_STAG);
                boolean rdmapProt = c.equals(TermCode.RDMAP_INVALID_STAG);
                assertTrue(ddpTagged || rdmapProt, "TERM code: invalid STag at DDP (1/1/0) or RDMAP (0/1/0), got " + c);
                // siw 6.1 sends this TERM without the offending headers (Hdrct M=D=R=0); when a
                // header is included it must be ours.
                if (t.d()) {
                    byte[] stag = ByteBuffer.allocate(4).putInt(badStag).array();
                    assertTrue(contains(t.ddpHeader(), stag), "echoed DDP header carries our sink STag");
                }
                byte[] term = termUlpdu(java);
                String hex = HexFormat.of().formatHex(term);
                int ctrl = ByteBuffer.wrap(term, 18, 4).getInt();
                System.out.printf("interop: siw TERM ULPDU %s; control word 0x%08x: layer %d etype %d code %d, "
                        + "RFC 5040 Hdrct bits (15..13) %s, bits 10..8 %s%n", hex, ctrl, ctrl >>> 28, (ctrl >>> 24) & 15,
                        (ctrl >>> 16) & 0xFF, Integer.toBinaryString((ctrl >>> 13) & 7), Integer.toBinaryString((ctrl >>> 8) & 7));
                assertEquals(0x4147, ((term[0] & 0xFF) << 8) | (term[1] & 0xFF), "TERM DDP/RDMAP control (RFC 5040 §4.8)");
                assertEquals(2, ByteBuffer.wrap(term, 6, 4).getInt(), "TERM on QN 2 (RFC 5040 §4.8)");
                assertEquals(1, ByteBuffer.wrap(term, 10, 4).getInt(), "TERM MSN 1");
                assertTrue(term.length > 22, "siw appends the offending segment's header after the control word");
                byte[] tail = Arrays.copyOfRange(term, 22, term.length);
                byte[] stagBytes = ByteBuffer.allocate(4).putInt(badStag).array();
                assertTrue(contains(tail, stagBytes), "the appended DDP header carries our sink STag: " + hex);
                assertEquals(RdmapEndpoint.State.ERROR, java.endpoint.state(), "our stream is dead after a peer TERM");
                assertTrue(java.localErrors.isEmpty(), "no TERM sent back for a received TERM: " + java.localErrors);
                assertTrue(java.awaitClose(TIMEOUT), "siw closes the stream after its TERM");
            }
            assertEquals(0, siw.waitExit(TIMEOUT), siw::transcript);
            String end = siw.awaitLine("idle_end", TIMEOUT);
            assertFalse(end.contains("disconnected=0 wc_errors=0"), "siw QP died: " + end);
        }
    }

    @Test
    @DisplayName("Send longer than siw's posted receive: siw's TERM decodes as DDP layer 1, untagged etype 2 "
            + "(siw swaps the layer and etype nibbles) (RFC 5040 §4.8, RFC 5041 §7.2)")
    void oversizedSend_siwTerminatesUntagged_5041_7_2() throws Exception {
        int port = Guest.port();
        try (SiwPeer siw = idleSiw(port)) {
            try (WirePeer java = connect(port)) {
                BasicExchange x = exchanged(java);
                // siw_peer posts 32-byte receives: a 64-byte Send does not fit the next one.
                java.endpoint.postSend(78, RdmapOpcode.SEND, x.buf, 0, 64, 0, true);
                java.pumpUntil("siw's TERM", () -> !java.peerTerms.isEmpty(), TIMEOUT);
                TerminateMessage t = java.peerTerms.get(0);
                byte[] term = termUlpdu(java);
                int ctrl = ByteBuffer.wrap(term, 18, 4).getInt();
                System.out.printf("interop: siw TERM for an oversized Send: %s; control word 0x%08x (layer nibble %d, "
                        + "etype nibble %d, code %d)%n", t, ctrl, ctrl >>> 28, (ctrl >>> 24) & 15, (ctrl >>> 16) & 0xFF);
                // RFC 5040 §4.8 puts the layer in bits 31..28; kernel 6.1 siw swaps the nibbles
                // (0x21..), which TerminateCodec reads back from its Hdrct placement.
                int nibbles = ctrl >>> 24;
                assertTrue(nibbles == 0x12 || nibbles == 0x21, String.format("layer 1 and etype 2 in either order: 0x%02x",
                        nibbles));
                assertTrue(t.code().equals(TermCode.DDP_UNTAGGED_MSN_NO_BUFFER)
                        || t.code().equals(TermCode.DDP_UNTAGGED_MESSAGE_TOO_LONG),
                        "untagged buffer error: no buffer (1/2/2) or message too long (1/2/5), got " + t.code());
                assertEquals(RdmapEndpoint.State.ERROR, java.endpoint.state(), "our stream is dead after a peer TERM");
                assertTrue(java.awaitClose(TIMEOUT), "siw closes the stream after its TERM");
            }
            assertEquals(0, siw.waitExit(TIMEOUT), siw::transcript);
        }
    }

    @Test
    @DisplayName("our TERM to siw (initiator side): siw's QP goes to error, receives flush, rdma_cm DISCONNECTED "
            + "(RFC 5040 §7.1)")
    void javaTerminates_siwResponderDies_5040_7() throws Exception {
        int port = Guest.port();
        try (SiwPeer siw = idleSiw(port)) {
            try (WirePeer java = connect(port)) {
                BasicExchange x = exchanged(java);
                terminateAndExpectDeath(java, siw);
            }
        }
    }

    @Test
    @DisplayName("our TERM to siw (responder side): siw's initiator QP goes to error and disconnects (RFC 5040 §7.1)")
    void javaTerminates_siwInitiatorDies_5040_7() throws Exception {
        int port = Guest.port();
        try (ServerSocketChannel server = SiwInitiatorJavaResponderTest.listen(port);
                SiwPeer siw = SiwInitiatorJavaResponderTest.client(port, "idle")) {
            try (WirePeer java = WirePeer.accept(server, SiwInitiatorJavaResponderTest.config().build(), TIMEOUT)) {
                assertEquals(NegotiationStatus.ESTABLISHED, java.outcome.status(), java.outcome::reason);
                BasicExchange x = new BasicExchange(java, 8192, TIMEOUT);
                x.exchangeInfo();
                terminateAndExpectDeath(java, siw);
            }
        }
    }

    private static void terminateAndExpectDeath(WirePeer java, SiwPeer siw) throws Exception {
        java.endpoint.terminate(TermCode.RDMAP_CATASTROPHIC_STREAM, "interop test: abort the stream");
        java.pumpUntil("our TERM on the wire", () -> java.endpoint.state() == RdmapEndpoint.State.ERROR
                && !java.endpoint.hasPendingOutput() && java.txDrained(), TIMEOUT);
        String end = siw.awaitLine("idle_end", TIMEOUT);
        System.out.println("interop: siw after our TERM: " + end);
        assertTrue(siw.printed("status_str=Work Request Flushed Error") || siw.printed("RDMA_CM_EVENT_DISCONNECTED"),
                "siw flushed its receives or reported DISCONNECTED:\n" + siw.transcript());
        assertFalse(end.contains("disconnected=0 wc_errors=0"), "siw QP died: " + end);
        assertTrue(java.awaitClose(TIMEOUT), "siw closes the TCP stream after our TERM");
        assertEquals(0, siw.waitExit(TIMEOUT), siw::transcript);
    }

    /** siw_peer as responder running its "idle" script, listening on {@code port}. */
    static SiwPeer idleSiw(int port) throws Exception {
        SiwPeer siw = SiwPeer.start("server", "-a", Guest.siwIp(), "-p", "" + port, "-s", "idle", "-t", "50");
        siw.awaitLine("listening", TIMEOUT);
        return siw;
    }

    /** Our wire engine as initiator to siw on {@code port}; the MPA exchange must have succeeded. */
    static WirePeer connect(int port) throws Exception {
        WirePeer java = WirePeer.connect(Guest.siwAddress(port), JavaInitiatorSiwResponderTest.config().build(), TIMEOUT);
        assertEquals(NegotiationStatus.ESTABLISHED, java.outcome.status(), java.outcome::reason);
        return java;
    }

    /** The INFO exchange with siw's idle script: afterwards its buffer's STag and address are known. */
    static BasicExchange exchanged(WirePeer java) throws Exception {
        BasicExchange x = new BasicExchange(java, 8192, TIMEOUT);
        x.exchangeInfo();
        return x;
    }

    /** The last Terminate ULPDU (RDMAP opcode 7) siw sent, as raw bytes. */
    static byte[] termUlpdu(WirePeer java) {
        byte[] term = null;
        for (byte[] u : java.receivedUlpdus()) {
            if (u.length >= 22 && (u[1] & 0x0F) == 7) {
                term = u;
            }
        }
        assertTrue(term != null, "a Terminate FPDU arrived: " + java.lastReceivedHex(64));
        return term;
    }
}
