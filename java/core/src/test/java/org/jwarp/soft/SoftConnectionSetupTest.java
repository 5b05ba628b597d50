package org.jwarp.soft;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jwarp.soft.cq.SoftCompletionQueue;
import org.jwarp.soft.verbs.SoftProtectionDomain;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionInfo;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.ConnectionRejectedException;
import org.jwarp.verbs.ConnectionRequest;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaTimeoutException;
import org.jwarp.ground.RtrType;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** MPA v2 setup over loopback between two soft endpoints (RFC 5044 §7.1.2, RFC 6581 §9). */
class SoftConnectionSetupTest {

    @Test
    @DisplayName("RFC 6581 §9.1: both sides see the peer's IRD/ORD and private data; ORD <= peer IRD")
    void peerValuesVisibleOnBothSides_6581_9_1() throws Exception {
        try (SoftFixture f = new SoftFixture()) {
            byte[] ipd = "hello".getBytes(StandardCharsets.US_ASCII);
            byte[] rpd = "welcome".getBytes(StandardCharsets.US_ASCII);
            try (SoftFixture.Pair p = f.connect(SoftFixture.p2p().ird(4).ord(8).privateData(ipd).build(),
                    SoftFixture.p2p().ird(2).ord(3).privateData(rpd).build())) {
                ConnectionInfo i = p.initiator().info();
                ConnectionInfo r = p.responder().info();
                assertEquals(4, r.peerIrd());
                assertEquals(8, r.peerOrd());
                assertEquals(2, i.peerIrd());
                assertEquals(3, i.peerOrd());
                assertArrayEquals(rpd, i.peerPrivateData());
                assertArrayEquals(ipd, r.peerPrivateData());
                assertTrue(i.ord() <= r.ird(), "initiator ORD " + i.ord() + " <= responder IRD " + r.ird());
                assertTrue(r.ord() <= i.ird(), "responder ORD " + r.ord() + " <= initiator IRD " + i.ird());
                assertEquals(2, i.ord());
                assertEquals(2, i.mpaRevision());
                assertTrue(i.peerToPeer() && r.peerToPeer());
                assertEquals(RtrType.WRITE, i.rtr());
                assertEquals(RtrType.WRITE, r.rtr());
                assertTrue(i.crc() && r.crc(), "CRC offered by default and on when negotiated");
                assertTrue(p.initiator().isOpen() && p.responder().isOpen());
            }
        }
    }

    @Test
    @DisplayName("RFC 6581 §9.1: default parameters on both sides settle IRD = ORD = 128 (Linux siw's depth) each way")
    void defaultParametersSettleSiwDepth_6581_9_1() throws Exception {
        try (SoftFixture f = new SoftFixture();
             SoftFixture.Pair p = f.connect(ConnectionParameters.builder().build(), ConnectionParameters.builder().build())) {
            ConnectionInfo i = p.initiator().info();
            ConnectionInfo r = p.responder().info();
            assertEquals(ConnectionParameters.DEFAULT_IRD_ORD, SoftProvider.MAX_IRD_ORD, "the default is the device's depth");
            for (ConnectionInfo side : new ConnectionInfo[] {i, r}) {
                assertEquals(128, side.ird(), side.toString());
                assertEquals(128, side.ord(), side.toString());
                assertEquals(128, side.peerIrd(), side.toString());
                assertEquals(128, side.peerOrd(), side.toString());
            }
        }
    }

    @Test
    @DisplayName("RFC 5044 §7.1.2: client-server mode has no RTR")
    void clientServerHasNoRtr_5044_7_1_2() throws Exception {
        try (SoftFixture f = new SoftFixture();
             SoftFixture.Pair p = f.connect(SoftFixture.clientServer().build(), SoftFixture.clientServer().build())) {
            assertFalse(p.initiator().info().peerToPeer());
            assertNull(p.initiator().info().rtr());
            assertNull(p.responder().info().rtr());
        }
    }

    @Test
    @DisplayName("RFC 5044 §7.1.5: a reject carries the responder's private data to the initiator")
    void rejectCarriesPrivateData_5044_7_1_5() throws Exception {
        try (SoftFixture f = new SoftFixture()) {
            f.listen(4);
            byte[] why = "go away".getBytes(StandardCharsets.US_ASCII);
            CompletableFuture<byte[]> seen = CompletableFuture.supplyAsync(() -> {
                try {
                    ConnectionRequest r = f.listener.next(Duration.ofSeconds(5));
                    byte[] pd = r.privateData();
                    r.reject(why);
                    return pd;
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            ConnectionRejectedException e = assertThrows(ConnectionRejectedException.class,
                    () -> f.device.connectionManager().connect(f.address(), f.initiatorQp(),
                            SoftFixture.p2p().ird(4).ord(8).privateData(new byte[] {1, 2, 3}).build(),
                            Duration.ofSeconds(5)));
            assertArrayEquals(why, e.privateData());
            // RFC 6581 §9.1: the Reject's IRD and ORD reach the initiator's ULP (listener limits 128/128).
            assertEquals(8, e.peerIrd(), "responder IRD = min(initiator ORD 8, 128)");
            assertEquals(4, e.requiredOrd(), "responder ORD = min(128, initiator IRD 4)");
            assertArrayEquals(new byte[] {1, 2, 3}, seen.get(5, TimeUnit.SECONDS));
        }
    }

    @Test
    @DisplayName("RFC 6581 §9.2: the responder sees the offered RTR types and the initiator uses the chosen one")
    void offeredRtrTypesVisible_6581_9_2() throws Exception {
        for (RtrType t : RtrType.values()) {
            try (SoftFixture f = new SoftFixture()) {
                CompletableFuture<java.util.Set<RtrType>> offered = new CompletableFuture<>();
                try (SoftFixture.Pair p = f.connect(SoftFixture.p2p().rtrTypes(t).build(), req -> {
                    offered.complete(req.offeredRtrTypes());
                    return SoftFixture.p2p().rtrTypes(RtrType.SEND, RtrType.WRITE, RtrType.READ).build();
                })) {
                    assertEquals(java.util.Set.of(t), offered.get());
                    assertEquals(t, p.initiator().info().rtr());
                    assertEquals(t, p.responder().info().rtr());
                }
            }
        }
    }

    @Test
    @DisplayName("RFC 5044 §7.1: a device opened on an address initiates its stream from it (rping -I ADDR)")
    void initiatorLeavesFromItsDeviceAddress_5044_7_1() throws Exception {
        InetAddress src = InetAddress.getByName("127.0.0.2"); // loopback, but not the listener's address
        try (SoftFixture f = new SoftFixture(); SoftDevice d = f.provider.open(src)) {
            f.listen(4);
            SoftProtectionDomain pd = d.allocateProtectionDomain();
            SoftCompletionQueue cq = d.createCompletionQueue(16);
            CompletableFuture<Connection> cf = d.connectionManager().connectAsync(f.address(),
                    QueuePairConfig.of(pd, cq, 8), SoftFixture.p2p().build(), Duration.ofSeconds(5));
            ConnectionRequest req = f.listener.next(Duration.ofSeconds(5));
            assertEquals(src, req.remote().getAddress(), "the responder sees the initiator's device address");
            try (Connection sc = req.accept(f.responderQp(), SoftFixture.p2p().build());
                 Connection cc = cf.get(5, TimeUnit.SECONDS)) {
                assertEquals(src, cc.info().local().getAddress());
                assertEquals(src, sc.info().remote().getAddress());
            }
        }
    }

    @Test
    @DisplayName("RFC 5044 §7.1: a device opened on an address this host does not have cannot initiate: typed error")
    void foreignDeviceAddressRefusedAtConnect_5044_7_1() throws Exception {
        InetAddress foreign = InetAddress.getByName("192.0.2.1"); // TEST-NET-1 (RFC 5737): never local
        try (SoftFixture f = new SoftFixture(); SoftDevice d = f.provider.open(foreign)) {
            f.listen(4);
            SoftProtectionDomain pd = d.allocateProtectionDomain();
            SoftCompletionQueue cq = d.createCompletionQueue(16);
            long t0 = System.nanoTime();
            RdmaException e = assertThrows(RdmaException.class, () -> d.connectionManager().connect(f.address(),
                    QueuePairConfig.of(pd, cq, 8), SoftFixture.p2p().build(), Duration.ofSeconds(5)));
            assertFalse(e instanceof RdmaTimeoutException, e.toString());
            assertTrue(e.getMessage().contains("192.0.2.1"), e.getMessage());
            assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(4), "failed at once, not by the timeout");
        }
    }
}
