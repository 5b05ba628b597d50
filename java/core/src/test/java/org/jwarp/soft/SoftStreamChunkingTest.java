package org.jwarp.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jwarp.ddp.DdpHeader;
import org.jwarp.mpa.FpduEncoder;
import org.jwarp.mpa.MpaFrame;
import org.jwarp.mpa.MpaFrameLimits;
import org.jwarp.rdmap.RdmapOpcode;
import org.jwarp.soft.verbs.SoftMemoryRegion;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The byte stream may be cut anywhere (RFC 5044 §4: TCP preserves no boundaries): the MPA
 * Request, the RTR and later FPDUs arrive one byte per TCP segment; CRC off and unenhanced
 * (Rev 1) peers interoperate (RFC 5044 §7.1.1, RFC 6581 §10).
 */
class SoftStreamChunkingTest {

    private static CompletableFuture<Connection> acceptOne(SoftFixture f, boolean crc) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return f.listener.next(Duration.ofSeconds(5)).accept(f.responderQp(),
                        SoftFixture.p2p().crc(crc).rtrTypes(org.jwarp.ground.RtrType.WRITE,
                                org.jwarp.ground.RtrType.READ, org.jwarp.ground.RtrType.SEND).build());
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
    }

    private static void dribble(EvilPeer p, byte[] bytes) throws Exception {
        for (byte b : bytes) {
            p.send(new byte[] {b});
            Thread.sleep(0, 200_000);
        }
    }

    private static byte[] sendFpdu(boolean crc, int msn, byte[] payload) {
        FpduEncoder enc = new FpduEncoder(crc, false);
        ByteBuffer b = ByteBuffer.allocate(4096);
        int u = enc.ulpduIndex(b);
        new DdpHeader().wrap(b, u).putUntagged(true, RdmapOpcode.control(RdmapOpcode.SEND), 0, RdmapOpcode.QN_SEND, msn, 0);
        b.put(u + DdpHeader.UNTAGGED_HEADER_LENGTH, payload);
        enc.finish(b, DdpHeader.UNTAGGED_HEADER_LENGTH + payload.length);
        return java.util.Arrays.copyOf(b.array(), b.position());
    }

    @Test
    @DisplayName("RFC 5044 §4: a request, an RTR and a Send arriving one byte at a time are reassembled")
    void oneBytePerSegment_5044_4() throws Exception {
        try (SoftFixture f = new SoftFixture()) {
            f.listen(2);
            CompletableFuture<Connection> acc = acceptOne(f, true);
            try (EvilPeer p = EvilPeer.connect(f.address())) {
                dribble(p, SoftHandshakeFaultTest.request(true, false, new byte[] {1, 2, 3}));
                MpaFrame rep = MpaFrame.decode(p.readFrame(), MpaFrameLimits.RFC);
                assertTrue(rep.crc());
                Connection c = acc.get(5, TimeUnit.SECONDS);
                SoftMemoryRegion rb = f.region(f.pd2, 256, Access.LOCAL_WRITE);
                c.queuePair().postRecv(7, rb, 0, 256);
                FpduEncoder enc = new FpduEncoder(true, false);
                ByteBuffer b = ByteBuffer.allocate(256);
                int u = enc.ulpduIndex(b);
                new DdpHeader().wrap(b, u).putTagged(true, RdmapOpcode.control(RdmapOpcode.WRITE), 1, 0);
                enc.finish(b, DdpHeader.TAGGED_HEADER_LENGTH);
                dribble(p, java.util.Arrays.copyOf(b.array(), b.position()));
                byte[] msg = "sixteen bytes!!!".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
                dribble(p, sendFpdu(true, 1, msg));
                WorkCompletion wc = SoftFixture.one(f.cq2);
                assertEquals(WcStatus.SUCCESS, wc.status, wc.toString());
                assertEquals(16, wc.byteLength);
                byte[] got = new byte[16];
                rb.buffer().get(0, got);
                assertEquals(new String(msg, java.nio.charset.StandardCharsets.US_ASCII),
                        new String(got, java.nio.charset.StandardCharsets.US_ASCII));
            }
        }
    }

    @Test
    @DisplayName("RFC 5044 §7.1.1: with C=0 on both sides FPDUs carry no CRC and data still flows")
    void crcOffBothSides_5044_7_1_1() throws Exception {
        try (SoftFixture f = new SoftFixture();
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().crc(false).build(), SoftFixture.p2p().crc(false).build())) {
            assertFalse(p.initiator().info().crc());
            assertFalse(p.responder().info().crc());
            SoftOpMatrixTest.End a = new SoftOpMatrixTest.End(f, p.initiator(), f.pd, f.cq);
            SoftOpMatrixTest.End b = new SoftOpMatrixTest.End(f, p.responder(), f.pd2, f.cq2);
            SoftOpMatrixTest.transfer(a, b, org.jwarp.verbs.SendOpcode.SEND, 3);
            SoftOpMatrixTest.transfer(b, a, org.jwarp.verbs.SendOpcode.RDMA_READ, 4);
        }
    }

    @Test
    @DisplayName("RFC 5044 §7.1.1: CRC is on when either side sets C")
    void crcOnWhenEitherAsks_5044_7_1_1() throws Exception {
        try (SoftFixture f = new SoftFixture();
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().crc(false).build(), SoftFixture.p2p().crc(true).build())) {
            assertTrue(p.initiator().info().crc());
            assertTrue(p.responder().info().crc());
            SoftOpMatrixTest.End a = new SoftOpMatrixTest.End(f, p.initiator(), f.pd, f.cq);
            SoftOpMatrixTest.End b = new SoftOpMatrixTest.End(f, p.responder(), f.pd2, f.cq2);
            SoftOpMatrixTest.transfer(a, b, org.jwarp.verbs.SendOpcode.RDMA_WRITE, 5);
        }
    }

    @Test
    @DisplayName("RFC 6581 §10: an unenhanced Rev 1 initiator gets a Rev 1 reply; no IRD/ORD exchanged; it sends first")
    void rev1InitiatorInteroperates_6581_10() throws Exception {
        try (SoftFixture f = new SoftFixture()) {
            f.listen(2);
            CompletableFuture<Connection> acc = acceptOne(f, false);
            try (EvilPeer p = EvilPeer.connect(f.address())) {
                p.send(MpaFrame.request().crc(false).revision(1).ulpPrivateData(new byte[] {4, 2}).build().toBytes());
                MpaFrame rep = MpaFrame.decode(p.readFrame(), MpaFrameLimits.RFC);
                assertEquals(1, rep.revision());
                assertFalse(rep.enhanced());
                Connection c = acc.get(5, TimeUnit.SECONDS);
                assertEquals(-1, c.info().peerIrd());
                assertEquals(-1, c.info().peerOrd());
                assertFalse(c.info().peerToPeer());
                org.junit.jupiter.api.Assertions.assertArrayEquals(new byte[] {4, 2}, c.info().peerPrivateData());
                SoftMemoryRegion rb = f.region(f.pd2, 64, Access.LOCAL_WRITE);
                c.queuePair().postRecv(1, rb, 0, 64);
                p.send(sendFpdu(false, 1, new byte[] {9, 9, 9, 9}));
                WorkCompletion wc = SoftFixture.one(f.cq2);
                assertEquals(WcStatus.SUCCESS, wc.status);
                assertEquals(4, wc.byteLength);
            }
        }
    }
}
