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

    /**
     * An established stream segments to the MULPDU of its own path: for each local interface
     * address, a connection over it carries FPDUs no larger than that interface's MSS rounded to 8
     * (on a 1400-MTU interface 1344 bytes, not a fixed Ethernet 1448).
     */
    @Test
    void establishedStreamUsesThePathMss_5044_8_1() throws Exception {
        SoftConfig cfg = SoftConfig.defaults().withTimeouts(java.time.Duration.ofSeconds(5),
                java.time.Duration.ofSeconds(5), java.time.Duration.ofSeconds(5));
        for (InetAddress a : localIpv4()) {
            int mtu = NetworkInterface.getByInetAddress(a).getMTU();
            int expectFpdu = Math.min(cfg.maxFpdu(), FpduSizing.forMtu(mtu, false));
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
