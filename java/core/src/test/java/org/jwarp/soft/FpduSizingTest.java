package org.jwarp.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import org.jwarp.mpa.Fpdu;
import org.jwarp.soft.cm.SoftListener;
import org.jwarp.soft.cq.SoftCompletionQueue;
import org.jwarp.soft.tx.FpduSizing;
import org.jwarp.soft.verbs.SoftProtectionDomain;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.QueuePairConfig;
import org.junit.jupiter.api.Test;

/** RFC 5044 §8.1: the FPDU (MULPDU plus MPA overhead) follows the path's MSS, as siw sizes it. */
class FpduSizingTest {

    @Test
    void fpduIsTheMssRoundedDownToEight_5044_8_1() {
        assertEquals(1448, FpduSizing.forMtu(1500, false), "Ethernet MTU, IPv4, TCP timestamps");
        assertEquals(8944, FpduSizing.forMtu(9000, false), "jumbo MTU 9000: MSS 8948 rounded down to 8");
        assertEquals(1344, FpduSizing.forMtu(1400, false), "MTU 1400: MSS 1348 rounded down to 8");
        assertEquals(1424, FpduSizing.forMtu(1500, true), "IPv6 header is 40 bytes: MSS 1428 rounded down to 8");
    }

    @Test
    void unknownInterfaceFallsBackToEthernet_5044_8_1() throws Exception {
        InetAddress nowhere = InetAddress.getByName("198.51.100.77"); // TEST-NET-2, on no interface here
        assertEquals(FpduSizing.ETHERNET_FPDU, FpduSizing.forLocalAddress(nowhere, 65536));
        assertEquals(FpduSizing.ETHERNET_FPDU, FpduSizing.forLocalAddress(null, 65536));
        assertEquals(1024, FpduSizing.forLocalAddress(nowhere, 1024), "the configured cap still applies");
    }

    /** Every IPv4 address of every interface that is up, loopback included (so never empty). */
    private static List<InetAddress> localIpv4() throws Exception {
        List<InetAddress> out = new ArrayList<>();
        for (NetworkInterface nif : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            if (!nif.isUp()) {
                continue;
            }
            for (InetAddress a : Collections.list(nif.getInetAddresses())) {
                if (a instanceof Inet4Address) {
                    out.add(a);
                }
            }
        }
        assertTrue(out.contains(InetAddress.getLoopbackAddress()), "loopback is up: " + out);
        return out;
    }

    @Test
    void interfaceMtuGivesTheFpdu_5044_8_1() throws Exception {
        for (InetAddress a : localIpv4()) {
            int mtu = NetworkInterface.getByInetAddress(a).getMTU();
            assertEquals(Math.min(65536, FpduSizing.forMtu(mtu, false)), FpduSizing.forLocalAddress(a, 65536),
                    "address " + a + " MTU " + mtu);
        }
    }

    /** The FPDU of the loopback device's path (65,480 bytes with Linux's MTU of 65536). */
    private static int loopbackFpdu() throws Exception {
        return FpduSizing.forMtu(NetworkInterface.getByInetAddress(InetAddress.getByName("127.0.0.1")).getMTU(), false);
    }

    /**
     * A peer at one of this host's own addresses is reached over the loopback device whatever
     * interface holds the address, so the FPDU is loopback's (as siw's are there), while a peer
     * elsewhere gets the local interface's MSS.
     */
    @Test
    void peerAtAnOwnAddressTakesLoopbacksMss_5044_8_1() throws Exception {
        InetAddress elsewhere = InetAddress.getByName("198.51.100.77"); // TEST-NET-2, on no interface here
        int lo = loopbackFpdu();
        for (InetAddress a : localIpv4()) {
            assertEquals(Math.min(65536, lo), FpduSizing.forPath(a, a, 65536), "to " + a + " from itself");
            assertEquals(FpduSizing.forLocalAddress(a, 65536), FpduSizing.forPath(a, elsewhere, 65536),
                    "from " + a + " to a peer elsewhere");
        }
        assertEquals(1024, FpduSizing.forPath(elsewhere, InetAddress.getByName("127.0.0.1"), 1024),
                "the configured cap still applies");
        assertEquals(FpduSizing.ETHERNET_FPDU, FpduSizing.forPath(null, null, 65536));
    }

    /**
     * An established stream segments to the MULPDU of its own path: for each local interface
     * address, a connection from it to a listener on it runs over the loopback device, so it carries
     * loopback's FPDUs (not the 1,344 bytes of the 1400-MTU interface that holds the address).
     */
    @Test
    void establishedStreamUsesThePathMss_5044_8_1() throws Exception {
        SoftConfig cfg = SoftConfig.defaults().withTimeouts(java.time.Duration.ofSeconds(5),
                java.time.Duration.ofSeconds(5), java.time.Duration.ofSeconds(5));
        for (InetAddress a : localIpv4()) {
            int mtu = NetworkInterface.getByInetAddress(a).getMTU();
            int expectFpdu = Math.min(cfg.maxFpdu(), loopbackFpdu());
            try (SoftProvider provider = new SoftProvider(cfg)) {
                SoftDevice dev = provider.open(a);
                SoftProtectionDomain pd = dev.allocateProtectionDomain();
                SoftCompletionQueue cq = dev.createCompletionQueue(16);
                SoftListener l = (SoftListener) dev.connectionManager().listen(new InetSocketAddress(a, 0), 4);
                var acc = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                    try {
                        return l.next(java.time.Duration.ofSeconds(30)).accept(QueuePairConfig.of(pd, cq, 4),
                                SoftFixture.clientServer().build());
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                });
                Connection c = dev.connectionManager().connect(l.localAddress(), QueuePairConfig.of(pd, cq, 4),
                        SoftFixture.clientServer().build(), java.time.Duration.ofSeconds(30));
                Connection r = acc.get(30, java.util.concurrent.TimeUnit.SECONDS);
                for (Connection x : new Connection[] {c, r}) {
                    SoftStream st = ((SoftConnection) x).stream();
                    assertEquals(expectFpdu - Fpdu.OVERHEAD, st.data().mulpdu(), "over " + a + " (MTU " + mtu + ")");
                }
                c.close();
                r.close();
            }
        }
    }
}
