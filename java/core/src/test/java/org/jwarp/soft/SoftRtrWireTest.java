package org.jwarp.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jwarp.ddp.DdpHeader;
import org.jwarp.mpa.EnhancedConnectionData;
import org.jwarp.mpa.Fpdu;
import org.jwarp.mpa.MpaFrame;
import org.jwarp.rdmap.ReadRequestHeader;
import org.jwarp.soft.verbs.SoftMemoryRegion;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.Connection;
import org.jwarp.ground.RtrType;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The initiator's RTR on the wire, RFC 6581 §9.2, byte for byte as Linux siw sends and expects it:
 * the first FPDU after the Reply, before any ULP message the application posted at once.
 * Write: control 0xC140, STag 1, TO 0. Read: control 0x4141, QN 1, MSN 1, sink STag 0, size 0,
 * source STag 1. Send: control 0x4143, QN 0, MSN 1, MO 0; the first ULP Send then has MSN 2.
 */
class SoftRtrWireTest {

    @ParameterizedTest(name = "RFC 6581 §9.2: the {0} RTR is the first FPDU, laid out as siw sends it")
    @EnumSource(RtrType.class)
    void rtrIsFirstFpduInSiwLayout_6581_9_2(RtrType rtr) throws Exception {
        try (SoftFixture f = new SoftFixture(); ServerSocket ss = new ServerSocket(0, 4, SoftFixture.LOOPBACK)) {
            CompletableFuture<byte[][]> wire = CompletableFuture.supplyAsync(() -> {
                try (EvilPeer p = EvilPeer.accept(ss)) {
                    p.readFrame();
                    p.send(MpaFrame.reply().crc(true).revision(2).enhancedData(new EnhancedConnectionData(true,
                            rtr == RtrType.SEND, rtr == RtrType.WRITE, rtr == RtrType.READ, 8, 8)).build().toBytes());
                    return new byte[][] {p.readFpdu(), p.readFpdu()};
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            Connection c = f.device.connectionManager().connect(new InetSocketAddress(SoftFixture.LOOPBACK,
                    ss.getLocalPort()), f.initiatorQp(), SoftFixture.p2p().rtrTypes(rtr).build(), Duration.ofSeconds(5));
            SoftMemoryRegion src = f.region(f.pd, 64, Access.LOCAL_WRITE);
            c.queuePair().postSend(new SendRequest().send(1, src, 0, 8));
            byte[][] fpdus = wire.get(5, TimeUnit.SECONDS);
            ByteBuffer first = ByteBuffer.wrap(fpdus[0]);
            ByteBuffer second = ByteBuffer.wrap(fpdus[1]);
            int seg = Fpdu.ULPDU_OFFSET;
            switch (rtr) {
                case WRITE -> {
                    assertEquals(DdpHeader.TAGGED_HEADER_LENGTH, first.getShort(0));
                    assertEquals((short) 0xC140, first.getShort(seg));
                    assertEquals(1, first.getInt(seg + DdpHeader.STAG_OFFSET), "sink STag 1 (Chelsio refuses 0)");
                    assertEquals(0L, first.getLong(seg + DdpHeader.TO_OFFSET));
                }
                case READ -> {
                    assertEquals(DdpHeader.UNTAGGED_HEADER_LENGTH + ReadRequestHeader.LENGTH, first.getShort(0));
                    assertEquals((short) 0x4141, first.getShort(seg));
                    assertEquals(1, first.getInt(seg + DdpHeader.QN_OFFSET));
                    assertEquals(1, first.getInt(seg + DdpHeader.MSN_OFFSET));
                    int rr = seg + DdpHeader.UNTAGGED_HEADER_LENGTH;
                    assertEquals(0, ReadRequestHeader.sinkStag(first, rr));
                    assertEquals(0, ReadRequestHeader.size(first, rr));
                    assertEquals(1, ReadRequestHeader.sourceStag(first, rr));
                }
                case SEND -> {
                    assertEquals(DdpHeader.UNTAGGED_HEADER_LENGTH, first.getShort(0));
                    assertEquals((short) 0x4143, first.getShort(seg));
                    assertEquals(0, first.getInt(seg + DdpHeader.QN_OFFSET));
                    assertEquals(1, first.getInt(seg + DdpHeader.MSN_OFFSET));
                    assertEquals(0, first.getInt(seg + DdpHeader.MO_OFFSET));
                }
            }
            // the ULP Send follows the RTR
            assertEquals(DdpHeader.UNTAGGED_HEADER_LENGTH + 8, second.getShort(0));
            assertEquals((short) 0x4143, second.getShort(seg));
            assertEquals(rtr == RtrType.SEND ? 2 : 1, second.getInt(seg + DdpHeader.MSN_OFFSET));
            c.close();
        }
    }

    @ParameterizedTest(name = "RFC 6581 §9.2: the soft responder sets every common RTR flag and accepts a {0} RTR")
    @EnumSource(RtrType.class)
    void responderSetsEveryCommonFlagAndAcceptsAnyOfThem_6581_9_2(RtrType sent) throws Exception {
        try (SoftFixture f = new SoftFixture()) {
            f.listen(2);
            CompletableFuture<Connection> acc = CompletableFuture.supplyAsync(() -> {
                try {
                    return f.listener.next(Duration.ofSeconds(5)).accept(f.responderQp(), SoftFixture.p2p()
                            .rtrTypes(RtrType.WRITE, RtrType.READ, RtrType.SEND).build());
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            try (RawInitiator raw = RawInitiator.connect(f.address(), true, true, true, 8, 8)) {
                Connection c = acc.get(5, TimeUnit.SECONDS);
                EnhancedConnectionData ed = raw.reply.enhancedData();
                assertTrue(ed.sendRtr() && ed.writeRtr() && ed.readRtr(), "all three common types set: " + ed);
                SoftMemoryRegion rb = f.region(f.pd2, 64, Access.LOCAL_WRITE);
                c.queuePair().postRecv(1, rb, 0, 64);
                switch (sent) {
                    case WRITE -> raw.writeRtr();
                    case READ -> raw.readRequest(0, 0, 0, 1, 0);
                    case SEND -> raw.send(new byte[0]);
                }
                raw.send(new byte[] {4, 5, 6}).flush();
                WorkCompletion wc = SoftFixture.one(f.cq2);
                assertEquals(WcStatus.SUCCESS, wc.status, "the " + sent + " RTR was accepted: " + wc);
                assertEquals(1, wc.wrId, "the ULP's buffer takes the ULP's Send, not the RTR");
                assertEquals(3, wc.byteLength);
                assertTrue(c.isOpen());
            }
        }
    }
}
