package org.jwarp.bench;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jwarp.soft.SoftConfig;
import org.jwarp.soft.SoftProvider;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.CompletionQueue;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.ProtectionDomain;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.QueuePair;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;

/**
 * Memory per queue pair of the embedded provider: opens {@code N} loopback connections (2N QPs,
 * both ends here; RFC 6581 §9.2 P2P setup each), all on one reactor thread, and prints the heap
 * and direct-buffer growth per QP and the setup rate. Run:
 * {@code java -cp benchmarks/target/benchmarks.jar org.jwarp.bench.SoftQpMemory [N] [txBuffer] [maxFpdu] [traffic] [irdOrd] [sge]}.
 * {@code txBuffer} 0 keeps the provider defaults; with {@code traffic} = 1 every QP, at both ends
 * of every connection, then does one 64 KiB Send and one 64 KiB RDMA Write (RFC 5040 §4) to its
 * peer before the second measurement. Per QP means the growth of the whole process (both ends,
 * the provider's pooled free buffers included) divided by the 2N QPs, each of which sent: issue
 * 13's target (at most 64 KiB per QP at 1,000 QPs) is {@code SoftQpMemory 500 0 0 1}. {@code irdOrd} is the
 * IRD and ORD both ends ask for (RFC 6581 §9.1; default 2); {@code default} keeps
 * {@link ConnectionParameters}' defaults; {@code sge} the scatter/gather entries per WR of every QP
 * (default 1).
 * Application buffers are two shared 64 KiB regions, so what grows is the provider's own state.
 * With {@code -Djwarp.bench.holdSeconds=S} the probe waits S seconds after the measurement, the
 * connections still open (for {@code jcmd <pid> GC.class_histogram}).
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

    private static final int MSG = 64 * 1024;

    /**
     * On every connection, from each end to the other: a 64 KiB Send (into a receive the peer
     * posted) and a 64 KiB RDMA Write, so every QP has sent both.
     */
    private static void exchange(CompletionQueue cq, List<Connection> ini, List<Connection> acc, MemoryRegion src,
                                 MemoryRegion dst) throws Exception {
        SendRequest wr = new SendRequest();
        WorkCompletion[] out = new WorkCompletion[4];
        for (int i = 0; i < out.length; i++) {
            out[i] = new WorkCompletion();
        }
        for (int i = 0; i < ini.size(); i++) {
            QueuePair a = ini.get(i).queuePair();
            QueuePair b = acc.get(i).queuePair();
            for (int dir = 0; dir < 2; dir++) {
                QueuePair from = dir == 0 ? a : b;
                QueuePair to = dir == 0 ? b : a;
                to.postRecv(i, dst, 0, MSG);
                from.postSend(wr.send(i, src, 0, MSG));
                reap(cq, out, 2);
                from.postSend(wr.write(i, src, 0, MSG, dst.address(), dst.rkey()));
                reap(cq, out, 1);
            }
        }
    }

    private static void reap(CompletionQueue cq, WorkCompletion[] out, int want) throws Exception {
        int got = 0;
        while (got < want) {
            int k = cq.await(out, want - got, 10, TimeUnit.SECONDS);
            if (k == 0) {
                throw new IllegalStateException("no completion within 10 s");
            }
            for (int j = 0; j < k; j++) {
                if (out[j].status != WcStatus.SUCCESS) {
                    throw new IllegalStateException("failed: " + out[j]);
                }
            }
            got += k;
        }
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        int tx = args.length > 1 ? Integer.parseInt(args[1]) : 0;
        int fpdu = args.length > 2 ? Integer.parseInt(args[2]) : Math.min(tx, 8192);
        boolean traffic = args.length > 3 && Integer.parseInt(args[3]) != 0;
        String depth = args.length > 4 ? args[4] : "2";
        int sge = args.length > 5 ? Integer.parseInt(args[5]) : 1;
        SoftConfig cfg = tx == 0 ? SoftConfig.defaults() : SoftConfig.defaults().withBuffers(fpdu, tx);
        tx = cfg.txBufferSize();
        fpdu = cfg.maxFpdu();
        try (SoftProvider p = new SoftProvider(cfg)) {
            Device d = p.open(InetAddress.getLoopbackAddress());
            ProtectionDomain pd = d.allocateProtectionDomain();
            MemoryRegion src = pd.register(ByteBuffer.allocateDirect(MSG), EnumSet.of(Access.LOCAL_WRITE));
            MemoryRegion dst = pd.register(ByteBuffer.allocateDirect(MSG),
                    EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
            CompletionQueue cq = d.createCompletionQueue(16 * n + 16);
            Listener l = d.connectionManager().listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
            ConnectionParameters params = depth.equals("default") ? ConnectionParameters.builder().build()
                    : ConnectionParameters.builder().ird(Integer.parseInt(depth)).ord(Integer.parseInt(depth)).build();
            long h0 = heap();
            long d0 = direct();
            List<Connection> all = new ArrayList<>();
            long t0 = System.nanoTime();
            CompletableFuture<List<Connection>> acc = CompletableFuture.supplyAsync(() -> {
                List<Connection> r = new ArrayList<>();
                try {
                    for (int i = 0; i < n; i++) {
                        r.add(l.next(Duration.ofSeconds(10)).accept(QueuePairConfig.of(pd, cq, 4).withSge(sge, sge), params));
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                return r;
            });
            for (int i = 0; i < n; i++) {
                all.add(d.connectionManager().connect(l.localAddress(), QueuePairConfig.of(pd, cq, 4).withSge(sge, sge), params,
                        Duration.ofSeconds(10)));
            }
            List<Connection> accepted = acc.get(60, TimeUnit.SECONDS);
            double secs = (System.nanoTime() - t0) / 1e9;
            if (traffic) {
                exchange(cq, all, accepted, src, dst);
            }
            all.addAll(accepted);
            long h1 = heap();
            long d1 = direct();
            int qps = 2 * n;
            int ird = all.get(0).info().ird();
            System.out.printf(Locale.ROOT, "{\"connections\":%d,\"traffic\":%b,\"qps\":%d,\"perQp\":\"both ends counted\",\"setupPerSecond\":%.0f,"
                            + "\"heapKiBPerQp\":%.1f,\"directKiBPerQp\":%.1f,\"txBuffer\":%d,\"maxFpdu\":%d,\"reactors\":%d,\"ird\":%d,\"sge\":%d}%n",
                    n, traffic, qps, n / secs, (h1 - h0) / 1024.0 / qps, (d1 - d0) / 1024.0 / qps, tx, fpdu, cfg.reactors(), ird, sge);
            long hold = Long.getLong("jwarp.bench.holdSeconds", 0L);
            if (hold > 0) {
                System.out.println("holding " + hold + " s, pid " + ProcessHandle.current().pid());
                Thread.sleep(hold * 1000);
            }
            for (Connection c : all) {
                c.close();
            }
        }
    }
}
