package org.jwarp.bench;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jwarp.soft.SoftConfig;
import org.jwarp.soft.SoftProvider;
import org.jwarp.verbs.CompletionQueue;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.ProtectionDomain;
import org.jwarp.verbs.QueuePairConfig;

/**
 * Memory per queue pair of the embedded provider: opens {@code N} loopback connections (2N QPs,
 * both ends here; RFC 6581 §9.2 P2P setup each), all on one reactor thread, and prints the heap
 * and direct-buffer growth per QP and the setup rate. Run:
 * {@code java -cp benchmarks/target/benchmarks.jar org.jwarp.bench.SoftQpMemory [N] [txBuffer] [maxFpdu]}.
 */
public final class SoftQpMemory {
    private SoftQpMemory() {
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

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        int tx = args.length > 1 ? Integer.parseInt(args[1]) : 8192;
        int fpdu = args.length > 2 ? Integer.parseInt(args[2]) : Math.min(tx, 8192);
        SoftConfig cfg = SoftConfig.defaults().withBuffers(fpdu, tx);
        try (SoftProvider p = new SoftProvider(cfg)) {
            Device d = p.open(InetAddress.getLoopbackAddress());
            ProtectionDomain pd = d.allocateProtectionDomain();
            CompletionQueue cq = d.createCompletionQueue(16 * n + 16);
            Listener l = d.connectionManager().listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
            ConnectionParameters params = ConnectionParameters.builder().ird(2).ord(2).build();
            long h0 = heap();
            long d0 = direct();
            List<Connection> all = new ArrayList<>();
            long t0 = System.nanoTime();
            CompletableFuture<List<Connection>> acc = CompletableFuture.supplyAsync(() -> {
                List<Connection> r = new ArrayList<>();
                try {
                    for (int i = 0; i < n; i++) {
                        r.add(l.next(Duration.ofSeconds(10)).accept(QueuePairConfig.of(pd, cq, 4), params));
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                return r;
            });
            for (int i = 0; i < n; i++) {
                all.add(d.connectionManager().connect(l.localAddress(), QueuePairConfig.of(pd, cq, 4), params,
                        Duration.ofSeconds(10)));
            }
            all.addAll(acc.get(60, TimeUnit.SECONDS));
            double secs = (System.nanoTime() - t0) / 1e9;
            long h1 = heap();
            long d1 = direct();
            int qps = 2 * n;
            System.out.printf(Locale.ROOT, "{\"connections\":%d,\"qps\":%d,\"setupPerSecond\":%.0f,"
                            + "\"heapKiBPerQp\":%.1f,\"directKiBPerQp\":%.1f,\"txBuffer\":%d,\"maxFpdu\":%d,\"reactors\":%d}%n",
                    n, qps, n / secs, (h1 - h0) / 1024.0 / qps, (d1 - d0) / 1024.0 / qps, tx, fpdu, cfg.reactors());
            for (Connection c : all) {
                c.close();
            }
        }
    }
}
