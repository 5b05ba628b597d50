package org.jwarp.soft;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jwarp.mpa.EnhancedConnectionData;
import org.jwarp.mpa.MpaFrame;
import org.jwarp.mpa.MpaFrameLimits;
import org.jwarp.mpa.MpaRequestReplyFlyweight;
import org.jwarp.ground.TermCode;
import org.jwarp.soft.cm.SetupTerm;
import org.jwarp.soft.cm.SoftListener;
import org.jwarp.verbs.ConnectionRejectedException;
import org.jwarp.verbs.ConnectionRequest;
import org.jwarp.verbs.ConnectionTerminatedException;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaTimeoutException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Connection setup against misbehaving raw-socket peers: timeouts on every step, the backlog
 * limit, strict framing and the TERMs of RFC 5044 §8 / RFC 6581 §8.
 */
class SoftHandshakeFaultTest {
    private static final Duration SHORT = Duration.ofMillis(300);

    private static SoftConfig shortTimeouts() {
        return SoftConfig.defaults().withTimeouts(SHORT, SHORT, SHORT);
    }

    static byte[] request(boolean p2p, boolean marker, byte[] pd) {
        return MpaFrame.request().crc(true).marker(marker).revision(2)
                .enhancedData(new EnhancedConnectionData(p2p, false, p2p, p2p, 8, 8)).ulpPrivateData(pd).build().toBytes();
    }

    static byte[] reply(boolean p2p, byte[] pd) {
        return MpaFrame.reply().crc(true).revision(2)
                .enhancedData(new EnhancedConnectionData(p2p, false, p2p, false, 8, 8)).ulpPrivateData(pd).build().toBytes();
    }

    private static void awaitPending(SoftListener l, int n) throws InterruptedException {
        for (int i = 0; i < 500 && l.counters().pending() != n; i++) {
            Thread.sleep(10);
        }
        assertEquals(n, l.counters().pending(), "pending connections on the listener");
    }

    @Test
    @DisplayName("RFC 5044 §7.1.2: a responder that never replies times the initiator out")
    void silentResponderTimesOutInitiator_5044_7_1_2() throws Exception {
        try (SoftFixture f = new SoftFixture(shortTimeouts());
             ServerSocket ss = new ServerSocket(0, 4, SoftFixture.LOOPBACK)) {
            CompletableFuture<byte[]> got = CompletableFuture.supplyAsync(() -> {
                try (EvilPeer p = EvilPeer.accept(ss)) {
                    byte[] req = p.readFrame();
                    p.closedByPeer(); // hold the connection until the initiator gives up
                    return req;
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            assertThrows(RdmaTimeoutException.class, () -> f.device.connectionManager().connect(
                    new InetSocketAddress(SoftFixture.LOOPBACK, ss.getLocalPort()), f.initiatorQp(),
                    SoftFixture.p2p().build(), Duration.ofSeconds(5)));
            byte[] req = got.get(10, TimeUnit.SECONDS);
            MpaFrame fr = MpaFrame.decode(req, MpaFrameLimits.RFC);
            assertTrue(fr.isRequest() && fr.enhanced() && fr.crc() && !fr.marker(), "siw interop: Rev 2, S, C, no M");
            assertTrue(fr.enhancedData().peerToPeer() && fr.enhancedData().writeRtr() && fr.enhancedData().readRtr(),
                    "interop rule 1: A with both C and D offered");
        }
    }

    @Test
    @DisplayName("RFC 5044 §7.1.2: a silent initiator is dropped after the responder timeout and frees its backlog slot")
    void silentInitiatorCannotHoldListener_5044_7_1_2() throws Exception {
        // only the responder's timer drops the silent peer; the legitimate connection afterwards gets
        // generous initiator and decision timeouts (300 ms for its whole setup failed once at load 13)
        try (SoftFixture f = new SoftFixture(SoftConfig.defaults().withTimeouts(Duration.ofSeconds(5), SHORT,
                Duration.ofSeconds(5)))) {
            SoftListener l = f.listen(1);
            try (EvilPeer silent = EvilPeer.connect(l.localAddress())) {
                awaitPending(l, 1);
                assertTrue(silent.closedByPeer(), "listener closes the silent connection");
                awaitPending(l, 0);
            }
            try (SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
                assertTrue(p.initiator().isOpen());
            }
        }
    }

    @Test
    @DisplayName("RFC 6581 §9.3: a setup timeout once TCP is up sends TERM layer 2 / type 0 / code 5 (CRC 0) before the close, on both sides")
    void setupTimeoutSendsTermCode5_6581_9_3() throws Exception {
        try (SoftFixture f = new SoftFixture(shortTimeouts())) {
            // responder: the initiator never sends its MPA Request
            try (EvilPeer silent = EvilPeer.connect(f.listen(2).localAddress())) {
                byte[] fpdu = silent.readFpdu();
                assertEquals(TermCode.MPA_LOCAL_CATASTROPHIC, SetupTerm.sniff(ByteBuffer.wrap(fpdu), 0));
                assertArrayEquals(new byte[4], java.util.Arrays.copyOfRange(fpdu, fpdu.length - 4, fpdu.length),
                        "setup TERMs carry CRC 0");
                assertTrue(silent.closedByPeer(), "then the connection closes");
            }
            // initiator: the responder never sends its MPA Reply
            try (ServerSocket ss = new ServerSocket(0, 4, SoftFixture.LOOPBACK)) {
                CompletableFuture<TermCode> got = CompletableFuture.supplyAsync(() -> {
                    try (EvilPeer p = EvilPeer.accept(ss)) {
                        p.readFrame();
                        TermCode t = p.readTerm();
                        assertTrue(p.closedByPeer(), "then the connection closes");
                        return t;
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                });
                RdmaTimeoutException e = assertThrows(RdmaTimeoutException.class, () -> f.device.connectionManager()
                        .connect(new InetSocketAddress(SoftFixture.LOOPBACK, ss.getLocalPort()), f.initiatorQp(),
                                SoftFixture.p2p().build(), Duration.ofSeconds(5)));
                assertEquals(TermCode.MPA_LOCAL_CATASTROPHIC, got.get(10, TimeUnit.SECONDS), e.getMessage());
            }
        }
    }

    @Test
    @DisplayName("Listener backlog: when every pending connection has sent its Request, newcomers are refused at once")
    void backlogFullRefuses() throws Exception {
        SoftConfig cfg = SoftConfig.defaults().withTimeouts(Duration.ofSeconds(5), Duration.ofSeconds(5),
                Duration.ofSeconds(5));
        try (SoftFixture f = new SoftFixture(cfg)) {
            SoftListener l = f.listen(1);
            try (EvilPeer first = EvilPeer.connect(l.localAddress())) {
                first.send(request(false, false, new byte[0])); // waits for the ULP: not evictable
                for (int i = 0; i < 500 && l.counters().ready() != 1; i++) {
                    Thread.sleep(10);
                }
                awaitPending(l, 1);
                assertTrue(refused(l.localAddress()), "second connection refused");
                assertEquals(1, l.counters().refused());
                RdmaException e = assertThrows(RdmaException.class, () -> f.device.connectionManager().connect(
                        l.localAddress(), f.initiatorQp(), SoftFixture.p2p().build(), Duration.ofSeconds(5)));
                assertFalse(e instanceof RdmaTimeoutException, "refused, not timed out: " + e);
                assertEquals(1, l.counters().pending());
            }
        }
    }

    private static boolean refused(InetSocketAddress a) throws java.io.IOException {
        try (EvilPeer p = EvilPeer.connect(a)) {
            return p.closedByPeer();
        } catch (java.net.SocketException e) {
            return true; // reset while setting up the streams
        }
    }

    @Test
    @DisplayName("RFC 5044 §7.1.1 / §8: a bad MPA key gets TERM layer 2 code 4 with CRC 0, then close")
    void badKeyGetsTerm4_5044_8() throws Exception {
        try (SoftFixture f = new SoftFixture(); EvilPeer p = EvilPeer.connect(f.listen(2).localAddress())) {
            byte[] bad = request(true, false, new byte[0]);
            bad[3] ^= 0x20;
            p.send(bad);
            byte[] fpdu = p.readFpdu();
            TermCode t = SetupTerm.sniff(ByteBuffer.wrap(fpdu), 0);
            assertEquals(TermCode.MPA_INVALID_REQ_REP, t);
            assertArrayEquals(new byte[4], java.util.Arrays.copyOfRange(fpdu, fpdu.length - 4, fpdu.length),
                    "setup TERMs carry CRC 0");
            assertTrue(p.closedByPeer());
        }
    }

    @Test
    @DisplayName("RFC 5044 §7.1.2: bytes after the MPA Request (before the Reply) get TERM code 4")
    void bytesAfterRequestGetTerm4_5044_7_1_2() throws Exception {
        try (SoftFixture f = new SoftFixture(); EvilPeer p = EvilPeer.connect(f.listen(2).localAddress())) {
            byte[] req = request(true, false, new byte[0]);
            byte[] plus = java.util.Arrays.copyOf(req, req.length + 8);
            p.send(plus);
            assertEquals(TermCode.MPA_INVALID_REQ_REP, p.readTerm());
            assertTrue(p.closedByPeer());
        }
    }

    @Test
    @DisplayName("RFC 5044 §7.1.1: PD_Length above 512 gets TERM code 4")
    void oversizedPrivateDataGetsTerm4_5044_7_1_1() throws Exception {
        try (SoftFixture f = new SoftFixture(); EvilPeer p = EvilPeer.connect(f.listen(2).localAddress())) {
            byte[] req = request(true, false, new byte[0]);
            req[MpaRequestReplyFlyweight.PD_LENGTH_OFFSET] = 0x02;
            req[MpaRequestReplyFlyweight.PD_LENGTH_OFFSET + 1] = 0x01; // 513
            p.send(req);
            assertEquals(TermCode.MPA_INVALID_REQ_REP, p.readTerm());
        }
    }

    @Test
    @DisplayName("RFC 5044 §7.1.1: a request asking for markers is rejected (R=1, M=0)")
    void markersRequestRejected_5044_7_1_1() throws Exception {
        try (SoftFixture f = new SoftFixture(); EvilPeer p = EvilPeer.connect(f.listen(2).localAddress())) {
            p.send(request(true, true, new byte[0]));
            MpaFrame rep = MpaFrame.decode(p.readFrame(), MpaFrameLimits.RFC);
            assertTrue(rep.isReply() && rep.reject() && !rep.marker());
            assertTrue(p.closedByPeer());
        }
    }

    @Test
    @DisplayName("An undecided request is rejected when the decision timeout passes")
    void undecidedRequestRejected() throws Exception {
        try (SoftFixture f = new SoftFixture(SoftConfig.defaults().withTimeouts(Duration.ofSeconds(5),
                Duration.ofSeconds(5), SHORT))) {
            SoftListener l = f.listen(2);
            CompletableFuture<ConnectionRequest> seen = CompletableFuture.supplyAsync(() -> {
                try {
                    return l.next(Duration.ofSeconds(5));
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            assertThrows(ConnectionRejectedException.class, () -> f.device.connectionManager().connect(
                    l.localAddress(), f.initiatorQp(), SoftFixture.p2p().build(), Duration.ofSeconds(5)));
            ConnectionRequest r = seen.get(5, TimeUnit.SECONDS);
            assertThrows(RdmaException.class, () -> r.accept(f.responderQp(), SoftFixture.p2p().build()));
        }
    }

    @Test
    @DisplayName("Closing a listener rejects its pending requests")
    void listenerCloseRejectsPending() throws Exception {
        try (SoftFixture f = new SoftFixture()) {
            SoftListener l = f.listen(2);
            CompletableFuture<Void> closer = CompletableFuture.runAsync(() -> {
                try {
                    l.next(Duration.ofSeconds(5));
                    l.close();
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            assertThrows(ConnectionRejectedException.class, () -> f.device.connectionManager().connect(
                    l.localAddress(), f.initiatorQp(), SoftFixture.p2p().build(), Duration.ofSeconds(5)));
            closer.get(5, TimeUnit.SECONDS);
        }
    }

    @Test
    @DisplayName("RFC 5044 §7.1.2: bytes after the MPA Reply make the initiator send TERM code 4")
    void bytesAfterReplyGetTerm4_5044_7_1_2() throws Exception {
        try (SoftFixture f = new SoftFixture(); ServerSocket ss = new ServerSocket(0, 4, SoftFixture.LOOPBACK)) {
            CompletableFuture<TermCode> term = CompletableFuture.supplyAsync(() -> {
                try (EvilPeer p = EvilPeer.accept(ss)) {
                    p.readFrame();
                    byte[] rep = reply(true, new byte[0]);
                    p.send(java.util.Arrays.copyOf(rep, rep.length + 4));
                    return p.readTerm();
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            ConnectionTerminatedException e = assertThrows(ConnectionTerminatedException.class,
                    () -> f.device.connectionManager().connect(new InetSocketAddress(SoftFixture.LOOPBACK, ss.getLocalPort()),
                            f.initiatorQp(), SoftFixture.p2p().build(), Duration.ofSeconds(5)));
            assertEquals(TermCode.MPA_INVALID_REQ_REP, e.term());
            assertFalse(e.sentByPeer());
            assertEquals(TermCode.MPA_INVALID_REQ_REP, term.get(5, TimeUnit.SECONDS));
        }
    }

    @Test
    @DisplayName("RFC 6581 §9.2 / §8: a reply without a requested RTR type gets TERM code 7")
    void noMatchingRtrGetsTerm7_6581_8() throws Exception {
        try (SoftFixture f = new SoftFixture(); ServerSocket ss = new ServerSocket(0, 4, SoftFixture.LOOPBACK)) {
            CompletableFuture<TermCode> term = CompletableFuture.supplyAsync(() -> {
                try (EvilPeer p = EvilPeer.accept(ss)) {
                    p.readFrame();
                    p.send(MpaFrame.reply().crc(true).revision(2)
                            .enhancedData(new EnhancedConnectionData(true, true, false, false, 8, 8)).build().toBytes());
                    return p.readTerm();
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            ConnectionTerminatedException e = assertThrows(ConnectionTerminatedException.class,
                    () -> f.device.connectionManager().connect(new InetSocketAddress(SoftFixture.LOOPBACK, ss.getLocalPort()),
                            f.initiatorQp(), SoftFixture.p2p().rtrTypes(org.jwarp.ground.RtrType.WRITE).build(),
                            Duration.ofSeconds(5)));
            assertEquals(TermCode.MPA_NO_MATCHING_RTR, e.term());
            assertEquals(TermCode.MPA_NO_MATCHING_RTR, term.get(5, TimeUnit.SECONDS));
        }
    }

    @Test
    @DisplayName("RFC 6581 §9.1 / §8: a responder ORD above the initiator's IRD limit gets TERM code 6")
    void insufficientIrdGetsTerm6_6581_9_1() throws Exception {
        try (SoftFixture f = new SoftFixture(); ServerSocket ss = new ServerSocket(0, 4, SoftFixture.LOOPBACK)) {
            CompletableFuture<TermCode> term = CompletableFuture.supplyAsync(() -> {
                try (EvilPeer p = EvilPeer.accept(ss)) {
                    p.readFrame();
                    p.send(MpaFrame.reply().crc(true).revision(2)
                            .enhancedData(new EnhancedConnectionData(true, false, true, false, 8, 1000)).build().toBytes());
                    return p.readTerm();
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            ConnectionTerminatedException e = assertThrows(ConnectionTerminatedException.class,
                    () -> f.device.connectionManager().connect(new InetSocketAddress(SoftFixture.LOOPBACK, ss.getLocalPort()),
                            f.initiatorQp(), SoftFixture.p2p().ird(4).build(), Duration.ofSeconds(5)));
            assertEquals(TermCode.MPA_INSUFFICIENT_IRD, e.term());
            assertEquals(TermCode.MPA_INSUFFICIENT_IRD, term.get(5, TimeUnit.SECONDS));
        }
    }

    @Test
    @DisplayName("RFC 5040 §4.8: a TERM instead of a Reply is reported as sent by the peer")
    void termInsteadOfReplyReported() throws Exception {
        try (SoftFixture f = new SoftFixture(); ServerSocket ss = new ServerSocket(0, 4, SoftFixture.LOOPBACK)) {
            CompletableFuture<Void> peer = CompletableFuture.runAsync(() -> {
                try (EvilPeer p = EvilPeer.accept(ss)) {
                    p.readFrame();
                    ByteBuffer b = ByteBuffer.allocate(64);
                    SetupTerm.encodeSetupTerm(b, TermCode.MPA_LOCAL_CATASTROPHIC);
                    p.send(java.util.Arrays.copyOf(b.array(), b.position()));
                    p.closedByPeer();
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            ConnectionTerminatedException e = assertThrows(ConnectionTerminatedException.class,
                    () -> f.device.connectionManager().connect(new InetSocketAddress(SoftFixture.LOOPBACK, ss.getLocalPort()),
                            f.initiatorQp(), SoftFixture.p2p().build(), Duration.ofSeconds(5)));
            assertTrue(e.sentByPeer());
            assertEquals(TermCode.MPA_LOCAL_CATASTROPHIC, e.term());
            peer.get(5, TimeUnit.SECONDS);
        }
    }

    @Test
    @DisplayName("RFC 6581 §10: a responder that closes the Rev 2 attempt gets an unenhanced Rev 1 retry")
    void closedRev2AttemptRetriesRev1_6581_10() throws Exception {
        try (SoftFixture f = new SoftFixture(); ServerSocket ss = new ServerSocket(0, 4, SoftFixture.LOOPBACK)) {
            CompletableFuture<MpaFrame> second = CompletableFuture.supplyAsync(() -> {
                try {
                    try (EvilPeer p = EvilPeer.accept(ss)) {
                        p.readFrame();
                    }
                    try (EvilPeer p = EvilPeer.accept(ss)) {
                        MpaFrame r = MpaFrame.decode(p.readFrame(), MpaFrameLimits.RFC);
                        p.send(MpaFrame.reply().crc(true).revision(1).ulpPrivateData(new byte[] {9}).build().toBytes());
                        p.closedByPeer();
                        return r;
                    }
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            org.jwarp.verbs.Connection c = f.device.connectionManager().connect(
                    new InetSocketAddress(SoftFixture.LOOPBACK, ss.getLocalPort()), f.initiatorQp(),
                    SoftFixture.clientServer().build(), Duration.ofSeconds(5));
            try {
                assertEquals(1, c.info().mpaRevision());
                assertEquals(-1, c.info().peerIrd(), "no enhanced data: peer IRD unknown");
                assertArrayEquals(new byte[] {9}, c.info().peerPrivateData());
            } finally {
                c.close();
            }
            MpaFrame r = second.get(5, TimeUnit.SECONDS);
            assertEquals(1, r.revision());
            assertFalse(r.enhanced());
        }
    }

    @Test
    @DisplayName("Connecting to a closed port fails fast with an RdmaException")
    void connectRefused() throws Exception {
        int port;
        try (ServerSocket ss = new ServerSocket(0, 1, SoftFixture.LOOPBACK)) {
            port = ss.getLocalPort();
        }
        try (SoftFixture f = new SoftFixture()) {
            RdmaException e = assertThrows(RdmaException.class, () -> f.device.connectionManager().connect(
                    new InetSocketAddress(SoftFixture.LOOPBACK, port), f.initiatorQp(), SoftFixture.p2p().build(),
                    Duration.ofSeconds(5)));
            assertFalse(e instanceof RdmaTimeoutException, e.toString());
            assertInstanceOf(RdmaException.class, e);
        }
    }
}
