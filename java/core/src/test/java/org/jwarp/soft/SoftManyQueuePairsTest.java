package org.jwarp.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jwarp.soft.cm.SoftListener;
import org.jwarp.soft.cq.SoftCompletionQueue;
import org.jwarp.soft.verbs.SoftMemoryRegion;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * 1,000 connections (2,000 QPs, both ends in this JVM) open at once on loopback, all driven by the
 * provider's single reactor thread; reports heap and direct memory per QP.
 */
class SoftManyQueuePairsTest {
    static final int CONNECTIONS = 1000;

    static long maxFds() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.UnixOperatingSystemMXBean u) {
            return u.getMaxFileDescriptorCount();
        }
        return Long.MAX_VALUE;
    }

    static long direct() {
        for (BufferPoolMXBean b : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            if (b.getName().equals("direct")) {
                return b.getMemoryUsed();
            }
        }
        return -1;
    }

    static long heap() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    @Test
    @DisplayName("1,000 connections (2,000 QPs) open at once on one reactor thread, each usable; memory per QP reported")
    void thousandConnectionsOpenAtOnce() throws Exception {
        long need = 2L * CONNECTIONS + 200;
        // No silent skip: a JVM that cannot open 2,000 sockets fails here with what to change.
        assertTrue(maxFds() >= need, "ulimit -n " + maxFds() + " < " + need + ": raise it (`ulimit -n 4096`) "
                + "before running the tests; the guest runner sets 65536");
        SoftConfig cfg = SoftConfig.defaults().withBuffers(8192, 8192);
        try (SoftFixture f = new SoftFixture(cfg)) {
            SoftCompletionQueue cqA = f.device.createCompletionQueue(8 * CONNECTIONS);
            SoftCompletionQueue cqB = f.device.createCompletionQueue(8 * CONNECTIONS);
            SoftListener l = f.listen(64);
            ConnectionParameters params = SoftFixture.p2p().ird(2).ord(2).build();
            long heap0 = heap();
            long direct0 = direct();
            List<Connection> responders = new ArrayList<>();
            CompletableFuture<Void> acceptor = CompletableFuture.runAsync(() -> {
                try {
                    for (int i = 0; i < CONNECTIONS; i++) {
                        responders.add(l.next(Duration.ofSeconds(10))
                                .accept(new QueuePairConfig(f.pd2, cqB, cqB, 4, 4), params));
                    }
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            List<Connection> initiators = new ArrayList<>();
            InetSocketAddress a = l.localAddress();
            for (int i = 0; i < CONNECTIONS; i++) {
                initiators.add(f.device.connectionManager().connect(a, new QueuePairConfig(f.pd, cqA, cqA, 4, 4), params,
                        Duration.ofSeconds(10)));
            }
            acceptor.get(30, TimeUnit.SECONDS);
            assertEquals(CONNECTIONS, responders.size());
            long heap1 = heap();
            long direct1 = direct();
            int qps = 2 * CONNECTIONS;
            System.out.printf("soft provider, %d QPs open: heap %.1f KiB/QP, direct %.1f KiB/QP, reactor threads %d%n",
                    qps, (heap1 - heap0) / 1024.0 / qps, (direct1 - direct0) / 1024.0 / qps, cfg.reactors());
            for (Connection c : initiators) {
                assertTrue(c.isOpen());
            }
            // every 50th connection carries a Send each way
            SoftMemoryRegion ma = f.region(f.pd, 64, Access.LOCAL_WRITE);
            SoftMemoryRegion mb = f.region(f.pd2, 64, Access.LOCAL_WRITE);
            SendRequest wr = new SendRequest();
            int sampled = 0;
            for (int i = 0; i < CONNECTIONS; i += 50) {
                Connection ini = initiators.get(i);
                Connection res = responders.stream().filter(r -> r.info().remote().equals(ini.info().local()))
                        .findFirst().orElseThrow();
                res.queuePair().postRecv(i, mb, 0, 64);
                ini.queuePair().postSend(wr.send(i, ma, 0, 8));
                assertEquals(WcStatus.SUCCESS, SoftFixture.one(cqA).status);
                WorkCompletion rc = SoftFixture.one(cqB);
                assertEquals(WcStatus.SUCCESS, rc.status);
                assertEquals(i, rc.wrId);
                sampled++;
            }
            assertEquals(CONNECTIONS / 50, sampled);
            assertTrue((direct1 - direct0) / qps < 256 * 1024, "direct memory per QP stays bounded");
            for (Connection c : initiators) {
                c.close();
            }
            for (Connection c : responders) {
                c.close();
            }
        }
    }
}
