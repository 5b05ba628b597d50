package org.jwarp.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jwarp.mpa.EnhancedConnectionData;
import org.jwarp.mpa.MpaFrame;
import org.jwarp.ground.TermCode;
import org.jwarp.soft.cm.SetupTerm;
import org.jwarp.soft.cq.SoftCompletionQueue;
import org.jwarp.soft.verbs.SoftMemoryRegion;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionRequest;
import org.jwarp.verbs.ConnectionTerminatedException;
import org.jwarp.verbs.RdmaException;
import org.jwarp.ground.RtrType;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.jwarp.verbs.WorkRequestException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Every TERM the data path can be made to send, RFC 5041 §7.2 (DDP), RFC 5040 §7.4 (RDMAP),
 * RFC 5044 §8 / RFC 6581 §8 (MPA), between two soft endpoints or against a raw initiator; and
 * how each side reports it: the sender of the TERM and its receiver both end with a
 * {@link ConnectionTerminatedException} naming the code, posted WRs complete in error.
 */
class SoftTermPathTest {

    /** Waits for the flush of a receive posted on {@code c}: proves the stream died. */
    private static WorkCompletion awaitDeath(Connection c, SoftCompletionQueue cq, SoftMemoryRegion mr)
            throws Exception {
        boolean posted = true;
        try {
            c.queuePair().postRecv(999, mr, 0, 16);
        } catch (WorkRequestException e) {
            posted = false; // already in ERR
        }
        for (int i = 0; i < 100 && posted; i++) {
            WorkCompletion wc = SoftFixture.one(cq);
            if (wc.wrId == 999) {
                assertEquals(WcStatus.WR_FLUSH_ERR, wc.status);
                return wc;
            }
            if (!c.isOpen()) {
                break;
            }
        }
        for (int i = 0; i < 200 && c.isOpen(); i++) {
            Thread.sleep(10);
        }
        return null;
    }

    private static void assertTerm(Connection c, TermCode code, boolean fromPeer) {
        assertFalse(c.isOpen());
        RdmaException f = c.failure();
        assertNotNull(f, "failure recorded");
        ConnectionTerminatedException t = assertInstanceOf(ConnectionTerminatedException.class, f, f.toString());
        assertEquals(code, t.term(), t.getMessage());
        assertEquals(fromPeer, t.sentByPeer(), t.getMessage());
    }

    private void writeFails(int rkeyDelta, long toDelta, int len, boolean remoteWrite, TermCode expected)
            throws Exception {
        try (SoftFixture f = new SoftFixture();
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
            SoftMemoryRegion src = f.region(f.pd, 4096, Access.LOCAL_WRITE);
            SoftMemoryRegion target = remoteWrite ? f.region(f.pd2, 1024, Access.LOCAL_WRITE, Access.REMOTE_WRITE)
                    : f.region(f.pd2, 1024, Access.LOCAL_WRITE, Access.REMOTE_READ);
            SoftMemoryRegion rbuf = f.region(f.pd2, 64, Access.LOCAL_WRITE);
            p.initiator().queuePair().postSend(new SendRequest().write(1, src, 0, len, target.address() + toDelta,
                    target.rkey() ^ rkeyDelta));
            awaitDeath(p.responder(), f.cq2, rbuf);
            SoftMemoryRegion ibuf = f.region(f.pd, 64, Access.LOCAL_WRITE);
            awaitDeath(p.initiator(), f.cq, ibuf);
            assertTerm(p.responder(), expected, false);
            assertTerm(p.initiator(), expected, true);
            byte[] untouched = new byte[1024];
            target.buffer().get(0, untouched);
            assertEquals(0, java.util.Arrays.stream(new int[] {0}).sum() + countNonZero(untouched),
                    "nothing placed (RFC 5041 §7.1)");
        }
    }

    @Test
    @DisplayName("RFC 5041 §8.2/§8.3.1: a region bound to one connection takes its Writes; a Write from another "
            + "connection of the same PD gets TERM 1/1/2 and places nothing")
    void regionBoundToOneStream_5041_8_2() throws Exception {
        try (SoftFixture f = new SoftFixture();
             SoftFixture.Pair p1 = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build());
             SoftFixture.Pair p2 = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
            SoftMemoryRegion src = f.region(f.pd, 4096, Access.LOCAL_WRITE);
            src.buffer().put(0, new byte[] {7, 7, 7, 7});
            SoftMemoryRegion target = f.region(f.pd2, 1024, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
            target.bindTo(p1.responder().queuePair());
            p1.initiator().queuePair().postSend(new SendRequest().write(1, src, 0, 4, target.address(), target.rkey()));
            assertEquals(WcStatus.SUCCESS, SoftFixture.one(f.cq).status, "the bound connection writes");
            for (int i = 0; i < 500 && target.buffer().get(3) != 7; i++) {
                Thread.sleep(5); // the Write completes when sent; placement follows
            }
            assertEquals(7, target.buffer().get(3), "placed through the bound connection");
            p2.initiator().queuePair().postSend(new SendRequest().write(2, src, 0, 100, target.address() + 100,
                    target.rkey()));
            awaitDeath(p2.responder(), f.cq2, f.region(f.pd2, 64, Access.LOCAL_WRITE));
            awaitDeath(p2.initiator(), f.cq, f.region(f.pd, 64, Access.LOCAL_WRITE));
            assertTerm(p2.responder(), TermCode.DDP_TAGGED_STAG_NOT_ASSOCIATED, false);
            assertTerm(p2.initiator(), TermCode.DDP_TAGGED_STAG_NOT_ASSOCIATED, true);
            assertEquals(0, target.buffer().get(100), "nothing placed by the other connection");
            assertTrue(p1.initiator().isOpen() && p1.responder().isOpen());
            assertThrows(IllegalArgumentException.class, () -> target.bindTo(p1.initiator().queuePair()),
                    "a QP of another protection domain");
        }
    }

    private static int countNonZero(byte[] b) {
        int n = 0;
        for (byte x : b) {
            n += x != 0 ? 1 : 0;
        }
        return n;
    }

    @Test
    @DisplayName("RFC 5041 §7.2: an RDMA Write to an invalid STag gets TERM 1/1/0")
    void writeToInvalidStag_5041_7_2() throws Exception {
        writeFails(0x5A, 0, 100, true, TermCode.DDP_TAGGED_INVALID_STAG);
    }

    @Test
    @DisplayName("RFC 5041 §7.2: an RDMA Write past the region's bound gets TERM 1/1/1")
    void writeOutOfBounds_5041_7_2() throws Exception {
        writeFails(0, 1000, 100, true, TermCode.DDP_TAGGED_BASE_BOUNDS);
    }

    @Test
    @DisplayName("RFC 5041 §7.2: an RDMA Write below the region's base gets TERM 1/1/1")
    void writeBelowBase_5041_7_2() throws Exception {
        writeFails(0, -8, 16, true, TermCode.DDP_TAGGED_BASE_BOUNDS);
    }

    @Test
    @DisplayName("RFC 5040 §7.4: an RDMA Write to a region without REMOTE_WRITE gets TERM 0/1/2")
    void writeWithoutRight_5040_7_4() throws Exception {
        writeFails(0, 0, 100, false, TermCode.RDMAP_ACCESS_VIOLATION);
    }

    @Test
    @DisplayName("RFC 5041 §7.2: a Send with no receive posted gets TERM 1/2/2")
    void sendWithoutReceive_5041_7_2() throws Exception {
        try (SoftFixture f = new SoftFixture();
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
            SoftMemoryRegion src = f.region(f.pd, 256, Access.LOCAL_WRITE);
            p.initiator().queuePair().postSend(new SendRequest().send(1, src, 0, 100));
            assertEquals(WcStatus.SUCCESS, SoftFixture.one(f.cq).status, "a Send completes once transmitted");
            awaitDeath(p.initiator(), f.cq, src);
            for (int i = 0; i < 200 && p.responder().isOpen(); i++) {
                Thread.sleep(10);
            }
            assertTerm(p.responder(), TermCode.DDP_UNTAGGED_MSN_NO_BUFFER, false);
            assertTerm(p.initiator(), TermCode.DDP_UNTAGGED_MSN_NO_BUFFER, true);
        }
    }

    @Test
    @DisplayName("RFC 5041 §7.2: a Send longer than the posted buffer gets TERM 1/2/5; the receive completes LOC_LEN_ERR")
    void sendTooLong_5041_7_2() throws Exception {
        try (SoftFixture f = new SoftFixture();
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
            SoftMemoryRegion src = f.region(f.pd, 256, Access.LOCAL_WRITE);
            SoftMemoryRegion dst = f.region(f.pd2, 256, Access.LOCAL_WRITE);
            p.responder().queuePair().postRecv(5, dst, 0, 50);
            p.initiator().queuePair().postSend(new SendRequest().send(1, src, 0, 100));
            WorkCompletion rc = SoftFixture.one(f.cq2);
            assertEquals(5, rc.wrId);
            assertEquals(WcStatus.LOC_LEN_ERR, rc.status, "the receive too short for its message (as siw reports it)");
            awaitDeath(p.initiator(), f.cq, src);
            assertTerm(p.responder(), TermCode.DDP_UNTAGGED_MESSAGE_TOO_LONG, false);
            assertTerm(p.initiator(), TermCode.DDP_UNTAGGED_MESSAGE_TOO_LONG, true);
        }
    }

    @Test
    @DisplayName("RFC 5040 §7.4: an RDMA Read of an invalid source STag gets TERM 0/1/0 and the Read completes REM_ACCESS_ERR")
    void readInvalidSource_5040_7_4() throws Exception {
        try (SoftFixture f = new SoftFixture();
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
            SoftMemoryRegion sink = f.region(f.pd, 256, Access.LOCAL_WRITE);
            SoftMemoryRegion srcR = f.region(f.pd2, 256, Access.LOCAL_WRITE, Access.REMOTE_READ);
            p.initiator().queuePair().postSend(new SendRequest().read(7, sink, 0, 100, srcR.address(), srcR.rkey() ^ 0x5A));
            WorkCompletion wc = SoftFixture.one(f.cq);
            assertEquals(7, wc.wrId);
            assertEquals(WcOpcode.RDMA_READ, wc.opcode);
            assertEquals(WcStatus.REM_ACCESS_ERR, wc.status);
            assertTerm(p.initiator(), TermCode.RDMAP_INVALID_STAG, true);
            for (int i = 0; i < 200 && p.responder().isOpen(); i++) {
                Thread.sleep(10);
            }
            assertTerm(p.responder(), TermCode.RDMAP_INVALID_STAG, false);
        }
    }

    @Test
    @DisplayName("RFC 5040 §7.4: an RDMA Read beyond the source bound gets TERM 0/1/1")
    void readOutOfBounds_5040_7_4() throws Exception {
        try (SoftFixture f = new SoftFixture();
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
            SoftMemoryRegion sink = f.region(f.pd, 4096, Access.LOCAL_WRITE);
            SoftMemoryRegion srcR = f.region(f.pd2, 256, Access.LOCAL_WRITE, Access.REMOTE_READ);
            p.initiator().queuePair().postSend(new SendRequest().read(7, sink, 0, 257, srcR.address(), srcR.rkey()));
            assertEquals(WcStatus.REM_ACCESS_ERR, SoftFixture.one(f.cq).status);
            assertTerm(p.initiator(), TermCode.RDMAP_BASE_BOUNDS, true);
        }
    }

    @Test
    @DisplayName("RFC 6581 §9.1, RFC 5040 §5.5: a Read beyond the ORD waits in the send queue, a later Write behind it")
    void readBeyondOrdWaitsInSendQueue_6581_9_1() throws Exception {
        try (SoftFixture f = new SoftFixture(); ServerSocket ss = new ServerSocket(0, 4, SoftFixture.LOOPBACK)) {
            // a responder that grants IRD 2 and then never answers, so the Reads stay outstanding;
            // it counts what reaches the wire until the initiator closes
            java.util.concurrent.CountDownLatch twoReads = new java.util.concurrent.CountDownLatch(2);
            CompletableFuture<int[]> peer = CompletableFuture.supplyAsync(() -> {
                int[] seen = new int[2]; // Read Requests, FPDUs carrying a tagged payload (the Write)
                try (EvilPeer p = EvilPeer.accept(ss)) {
                    p.readFrame();
                    p.send(MpaFrame.reply().crc(true).revision(2)
                            .enhancedData(new EnhancedConnectionData(true, false, true, false, 2, 2)).build().toBytes());
                    while (true) {
                        byte[] fpdu = p.readFpdu();
                        boolean tagged = (fpdu[2] & 0x80) != 0;
                        int opcode = fpdu[3] & 0x0F;
                        int ulpdu = ((fpdu[0] & 0xFF) << 8) | (fpdu[1] & 0xFF);
                        if (!tagged && opcode == org.jwarp.rdmap.RdmapOpcode.READ_REQUEST) {
                            seen[0]++;
                            twoReads.countDown();
                        } else if (tagged && ulpdu > org.jwarp.ddp.DdpHeader.TAGGED_HEADER_LENGTH) {
                            seen[1]++;
                        }
                    }
                } catch (java.io.IOException e) {
                    return seen; // the initiator closed
                }
            });
            Connection c = f.device.connectionManager().connect(new InetSocketAddress(SoftFixture.LOOPBACK,
                    ss.getLocalPort()), f.initiatorQp(), SoftFixture.p2p().ord(8).build(), Duration.ofSeconds(5));
            assertEquals(2, c.info().ord(), "ORD lowered to the responder's IRD");
            SoftMemoryRegion sink = f.region(f.pd, 4096, Access.LOCAL_WRITE);
            SendRequest wr = new SendRequest();
            c.queuePair().postSend(wr.read(1, sink, 0, 16, 0x1000, 0x4242));
            c.queuePair().postSend(wr.read(2, sink, 0, 16, 0x1000, 0x4242));
            c.queuePair().postSend(wr.read(3, sink, 0, 16, 0x1000, 0x4242)); // accepted: waits for a Read slot
            c.queuePair().postSend(wr.write(4, sink, 0, 16, 0x1000, 0x4242)); // waits behind Read 3
            assertTrue(twoReads.await(5, TimeUnit.SECONDS), "the first two Read Requests reach the wire");
            c.close();
            int[] seen = peer.get(10, TimeUnit.SECONDS);
            assertEquals(2, seen[0], "Read Requests on the wire: the ORD's 2, Read 3 held in the send queue");
            assertEquals(0, seen[1], "the Write posted after Read 3 never passed it");
            WorkCompletion[] a = SoftFixture.wcs(4);
            int n = 0;
            while (n < 4) {
                int k = f.cq.await(a, 4, 5, TimeUnit.SECONDS);
                assertTrue(k > 0, "all four WRs complete (flushed) after the close");
                for (int i = 0; i < k; i++) {
                    assertEquals(n + i + 1, a[i].wrId, "in posting order");
                    assertEquals(WcStatus.WR_FLUSH_ERR, a[i].status, a[i].toString());
                }
                n += k;
            }
        }
    }

    /** A case run against a soft responder {@code c} whose peer is the raw initiator {@code raw}. */
    interface RawCase {
        void run(SoftFixture f, RawInitiator raw, Connection c) throws Exception;
    }

    /**
     * The raw-initiator prelude: a fixture on {@code cfg} listens, its responder accepts with
     * {@code ird}, and a {@link RawInitiator} offering the Write RTR (RFC 6581 §9.2) with IRD and
     * ORD {@code rawIrdOrd} connects; {@code body} runs on the accepted connection.
     */
    private static void withRawInitiator(SoftConfig cfg, int ird, int rawIrdOrd, RawCase body) throws Exception {
        try (SoftFixture f = new SoftFixture(cfg)) {
            f.listen(2);
            CompletableFuture<Connection> acc = acceptOne(f, ird);
            try (RawInitiator raw = RawInitiator.connect(f.address(), false, true, false, rawIrdOrd, rawIrdOrd)) {
                body.run(f, raw, acc.get(5, TimeUnit.SECONDS));
            }
        }
    }

    /** A soft responder accepting with {@code ird} and RTR types; returns the accepted connection future. */
    private static CompletableFuture<Connection> acceptOne(SoftFixture f, int ird) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                ConnectionRequest r = f.listener.next(Duration.ofSeconds(5));
                return r.accept(f.responderQp(), SoftFixture.p2p().ird(ird)
                        .rtrTypes(RtrType.WRITE, RtrType.READ, RtrType.SEND).build());
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
    }

    @Test
    @DisplayName("RFC 6581 §9.1: the IRD the soft responder advertises is the IRD it serves: a peer using all of it gets no TERM")
    void advertisedIrdIsServedInFull_6581_9_1() throws Exception {
        // The ULP asks for more than the device can serve; the peer asks for IRD 1000 as well.
        withRawInitiator(SoftFixture.defaultConfig(), 1000, 1000, (f, raw, c) -> {
            int ird = raw.reply.enhancedData().ird();
            assertTrue(ird <= SoftProvider.MAX_IRD_ORD, "advertised IRD " + ird + " above the device's "
                    + SoftProvider.MAX_IRD_ORD);
            assertTrue(raw.reply.enhancedData().ord() <= SoftProvider.MAX_IRD_ORD);
            assertEquals(c.info().ird(), ird);
            SoftMemoryRegion src = f.region(f.pd2, 16 * ird, Access.LOCAL_WRITE, Access.REMOTE_READ);
            raw.writeRtr();
            for (int i = 0; i < ird; i++) {
                raw.readRequest(0x5500, 16L * i, 16, src.rkey(), src.address() + 16L * i);
            }
            raw.flush();
            for (int n = 0; n < ird; n++) {
                java.nio.ByteBuffer fpdu = java.nio.ByteBuffer.wrap(raw.peer.readFpdu());
                assertEquals(null, SetupTerm.sniff(fpdu, 0), "TERM after " + n + " of " + ird + " Reads");
                assertEquals((short) 0xC142, fpdu.getShort(org.jwarp.mpa.Fpdu.ULPDU_OFFSET), "Read Response " + n);
            }
            assertTrue(c.isOpen());
        });
    }

    @Test
    @DisplayName("RFC 6581 §9.1: the soft initiator's Request never advertises an IRD or ORD above the device's limit")
    void initiatorAdvertisesOnlyDeviceIrdOrd_6581_9_1() throws Exception {
        try (SoftFixture f = new SoftFixture();
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().ird(1000).ord(1000).build(),
                     SoftFixture.p2p().ird(1000).ord(1000).build())) {
            assertTrue(p.responder().info().peerIrd() <= SoftProvider.MAX_IRD_ORD, "Request IRD "
                    + p.responder().info().peerIrd());
            assertTrue(p.responder().info().peerOrd() <= SoftProvider.MAX_IRD_ORD);
            assertTrue(p.initiator().info().peerIrd() <= SoftProvider.MAX_IRD_ORD, "Reply IRD");
            assertTrue(p.initiator().info().ird() <= SoftProvider.MAX_IRD_ORD);
        }
    }

    @Test
    @DisplayName("RFC 5040 §6.4 / RFC 6581 §9.1: a Read Request beyond the responder's IRD gets TERM 0/2/7")
    void readRequestBeyondIrd_5040_6_4() throws Exception {
        withRawInitiator(SoftFixture.defaultConfig(), 1, 8, (f, raw, c) -> {
            assertEquals(1, c.info().ird());
            SoftMemoryRegion src = f.region(f.pd2, 1 << 20, Access.LOCAL_WRITE, Access.REMOTE_READ);
            raw.writeRtr()
                    .readRequest(0x5500, 0, 1 << 20, src.rkey(), src.address())
                    .readRequest(0x5500, 0, 16, src.rkey(), src.address())
                    .flush();
            TermCode t = null;
            for (int i = 0; i < 200 && t == null; i++) {
                byte[] fpdu = raw.peer.readFpdu();
                t = SetupTerm.sniff(java.nio.ByteBuffer.wrap(fpdu), 0);
            }
            assertEquals(TermCode.RDMAP_CATASTROPHIC_STREAM, t);
            for (int i = 0; i < 200 && c.isOpen(); i++) {
                Thread.sleep(10);
            }
            assertTerm(c, TermCode.RDMAP_CATASTROPHIC_STREAM, false);
        });
    }

    @Test
    @DisplayName("RFC 6581 §9.2: a first FPDU that is not the negotiated RTR gets TERM code 7")
    void rtrMismatch_6581_9_2() throws Exception {
        withRawInitiator(SoftFixture.defaultConfig(), 4, 8, (f, raw, c) -> {
            assertEquals(RtrType.WRITE, c.info().rtr());
            SoftMemoryRegion rb = f.region(f.pd2, 64, Access.LOCAL_WRITE);
            c.queuePair().postRecv(1, rb, 0, 64);
            raw.send(new byte[0]).flush();
            assertEquals(TermCode.MPA_NO_MATCHING_RTR, raw.peer.readTerm());
            assertEquals(WcStatus.WR_FLUSH_ERR, SoftFixture.one(f.cq2).status);
            assertTerm(c, TermCode.MPA_NO_MATCHING_RTR, false);
        });
    }

    @Test
    @DisplayName("RFC 6581 §9.2: a non-zero-length Write where the Write RTR is due gets TERM code 7")
    void rtrWithPayloadMismatch_6581_9_2() throws Exception {
        withRawInitiator(SoftFixture.defaultConfig(), 4, 8, (f, raw, c) -> {
            SoftMemoryRegion t = f.region(f.pd2, 64, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
            raw.write(t.rkey(), t.address(), new byte[8]).flush();
            assertEquals(TermCode.MPA_NO_MATCHING_RTR, raw.peer.readTerm());
        });
    }

    @Test
    @DisplayName("RFC 6581 §9.2: the responder sends nothing before the RTR; its Send goes out right after it")
    void responderFencedUntilRtr_6581_9_2() throws Exception {
        withRawInitiator(SoftFixture.defaultConfig(), 4, 8, (f, raw, c) -> {
            SoftMemoryRegion src = f.region(f.pd2, 64, Access.LOCAL_WRITE);
            c.queuePair().postSend(new SendRequest().send(1, src, 0, 32));
            raw.peer.socket.setSoTimeout(300);
            assertThrows(java.net.SocketTimeoutException.class, () -> raw.peer.read(1),
                    "no FPDU before the RTR");
            raw.peer.socket.setSoTimeout(5000);
            raw.writeRtr().flush();
            byte[] fpdu = raw.peer.readFpdu();
            assertEquals(org.jwarp.mpa.Fpdu.fpduLength(18 + 32), fpdu.length, "the queued 32-byte Send");
            assertEquals(RdmapOpcodeView.SEND, fpdu[3] & 0x0F);
            assertEquals(WcStatus.SUCCESS, SoftFixture.one(f.cq2).status);
        });
    }

    @Test
    @DisplayName("RFC 6581 §9.2: a responder that never gets its RTR gives up after the responder timeout")
    void missingRtrTimesOut_6581_9_2() throws Exception {
        SoftConfig cfg = SoftConfig.defaults().withTimeouts(Duration.ofSeconds(5), Duration.ofMillis(300),
                Duration.ofSeconds(5));
        withRawInitiator(cfg, 4, 8, (f, raw, c) -> {
            SoftMemoryRegion rb = f.region(f.pd2, 64, Access.LOCAL_WRITE);
            c.queuePair().postRecv(1, rb, 0, 64);
            assertEquals(WcStatus.WR_FLUSH_ERR, SoftFixture.one(f.cq2).status);
            assertInstanceOf(org.jwarp.verbs.RdmaTimeoutException.class, c.failure());
            assertEquals(TermCode.MPA_LOCAL_CATASTROPHIC, raw.peer.readTerm(), "RFC 6581 §9.3: TERM 2/0/5 first");
            assertTrue(raw.peer.closedByPeer());
        });
    }

    @Test
    @DisplayName("RFC 5044 §4.4 / §8: an FPDU with a bad CRC gets TERM 2/0/2")
    void badCrc_5044_8() throws Exception {
        withRawInitiator(SoftFixture.defaultConfig(), 4, 8, (f, raw, c) -> {
            assertTrue(c.info().crc());
            SoftMemoryRegion rb = f.region(f.pd2, 64, Access.LOCAL_WRITE);
            c.queuePair().postRecv(1, rb, 0, 64);
            raw.writeRtr().send(new byte[12]).corruptLastByte().flush();
            assertEquals(TermCode.MPA_CRC_ERROR, raw.peer.readTerm());
            assertEquals(WcStatus.WR_FLUSH_ERR, SoftFixture.one(f.cq2).status);
            assertTerm(c, TermCode.MPA_CRC_ERROR, false);
        });
    }

    @Test
    @DisplayName("Interop rule 4: a CRC-0 TERM from the initiator in place of the RTR is accepted and reported")
    void setupTermInsteadOfRtr() throws Exception {
        withRawInitiator(SoftFixture.defaultConfig(), 4, 8, (f, raw, c) -> {
            SoftMemoryRegion rb = f.region(f.pd2, 64, Access.LOCAL_WRITE);
            c.queuePair().postRecv(1, rb, 0, 64);
            java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(64);
            SetupTerm.encodeSetupTerm(b, TermCode.MPA_NO_MATCHING_RTR);
            raw.peer.send(java.util.Arrays.copyOf(b.array(), b.position()));
            assertEquals(WcStatus.WR_FLUSH_ERR, SoftFixture.one(f.cq2).status);
            assertTerm(c, TermCode.MPA_NO_MATCHING_RTR, true);
        });
    }

    /** RDMAP opcode numbers as read from raw FPDU bytes. */
    static final class RdmapOpcodeView {
        static final int SEND = org.jwarp.rdmap.RdmapOpcode.SEND;
    }
}
