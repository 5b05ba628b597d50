package org.jwarp.verbs;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A measurement, not a test: 64 B RDMA Read round trips waited for by {@link CompletionQueue#spin}
 * on the DiSNI provider, over two connections in one JVM, one with shared (default) CQs and QPs and
 * one with single-consumer ones. Both are warmed with the same number of Reads, then measured in
 * alternating rounds (shared, single, shared, ...), so both see the same JIT and the same host load;
 * each round prints its p50 and minimum. Run in the guest:
 * {@code java -cp ... org.jwarp.verbs.SingleConsumerSpinMain [rounds] [reads per round] [warm-up] [address]}.
 */
public final class SingleConsumerSpinMain {
    private static final int SIZE = 64;
    private static final long SPIN = 1 << 20;

    private SingleConsumerSpinMain() {
    }

    /** One client with its connection to a server on the same device. */
    private record Client(CompletionQueue cq, QueuePair qp, MemoryRegion mr, long raddr, int rkey) {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        int ops = args.length > 1 ? Integer.parseInt(args[1]) : 5_000;
        int warm = args.length > 2 ? Integer.parseInt(args[2]) : 20_000;
        InetAddress addr = InetAddress.getByName(args.length > 3 ? args[3] : "10.77.0.1");
        try (RdmaProvider provider = Rdma.open("disni"); Device sdev = provider.open(addr); Device cdev = provider.open(addr)) {
            Client shared = connect(sdev, cdev, addr, 23456, false);
            Client single = connect(sdev, cdev, addr, 23457, true);
            WorkCompletion[] wcs = {new WorkCompletion()};
            SendRequest wr = new SendRequest();
            long[] rtt = new long[Math.max(ops, warm)];
            reads(shared, wr, wcs, rtt, warm);
            reads(single, wr, wcs, rtt, warm);
            for (int r = 1; r <= rounds; r++) {
                for (Client c : new Client[] {shared, single}) {
                    reads(c, wr, wcs, rtt, ops);
                    long[] s = Arrays.copyOf(rtt, ops);
                    Arrays.sort(s);
                    System.out.printf("round %d %s read 64B reads=%d p50=%.1fus min=%.1fus p90=%.1fus%n", r,
                            c == single ? "single" : "shared", ops, s[ops / 2] / 1e3, s[0] / 1e3, s[ops * 9 / 10] / 1e3);
                }
            }
        }
    }

    private static Client connect(Device sdev, Device cdev, InetAddress addr, int port, boolean single) throws Exception {
        EnumSet<Access> all = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);
        ProtectionDomain spd = sdev.allocateProtectionDomain();
        ProtectionDomain cpd = cdev.allocateProtectionDomain();
        CompletionQueue scq = sdev.createCompletionQueue(64, null, single);
        CompletionQueue ccq = cdev.createCompletionQueue(64, null, single);
        MemoryRegion smr = spd.register(ByteBuffer.allocateDirect(1 << 16), all);
        MemoryRegion cmr = cpd.register(ByteBuffer.allocateDirect(1 << 16), all);
        try (Listener l = sdev.connectionManager().listen(new InetSocketAddress(addr, port), 4)) {
            CompletableFuture<Connection> acc = CompletableFuture.supplyAsync(() -> {
                try {
                    return l.next(Duration.ofSeconds(30)).accept(QueuePairConfig.of(spd, scq, 16).withSingleConsumer(single),
                            ConnectionParameters.builder().build());
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            Connection cc = cdev.connectionManager().connect(l.localAddress(),
                    QueuePairConfig.of(cpd, ccq, 16).withSingleConsumer(single), ConnectionParameters.builder().build(),
                    Duration.ofSeconds(30));
            acc.get(60, TimeUnit.SECONDS);
            if (cc.queuePair().singleConsumer() != single || ccq.singleConsumer() != single) {
                throw new IllegalStateException("single-consumer mode not taken: " + single);
            }
            return new Client(ccq, cc.queuePair(), cmr, smr.address() + 4096, smr.rkey());
        }
    }

    /** {@code n} Reads, one at a time, each waited for by spin; their round trips in {@code rtt}. */
    private static void reads(Client c, SendRequest wr, WorkCompletion[] wcs, long[] rtt, int n) throws WorkRequestException {
        for (int i = 0; i < n; i++) {
            long t0 = System.nanoTime();
            c.qp.postSend(wr.read(i, c.mr, 0, SIZE, c.raddr, c.rkey));
            while (c.cq.spin(wcs, 1, SPIN, 0) == 0) {
                Thread.onSpinWait();
            }
            rtt[i] = System.nanoTime() - t0;
            if (!wcs[0].isSuccess()) {
                throw new IllegalStateException("completion " + wcs[0]);
            }
        }
    }
}
