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
 * A measurement, not a test: 64 B RDMA Read and Send round trips on one connection within one JVM,
 * waited for by {@link CompletionQueue#spin}, with shared (default) or single-consumer CQs and QPs.
 * The Read client spins on its own; the Send case has a server thread that spins on its CQ, re-posts
 * its receive and answers each ping with a pong. Prints p50, min and p99 of the round trips after a
 * warm-up by operation count. Run in the guest, one JVM per mode and run:
 * {@code java -cp ... org.jwarp.verbs.SingleConsumerSpinMain single|shared [ops] [address]}.
 */
public final class SingleConsumerSpinMain {
    private static final int SIZE = 64;
    private static final long SPIN = 1 << 20;

    private SingleConsumerSpinMain() {
    }

    public static void main(String[] args) throws Exception {
        boolean single = args.length > 0 && args[0].equals("single");
        int ops = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
        InetAddress addr = InetAddress.getByName(args.length > 2 ? args[2] : "10.77.0.1");
        EnumSet<Access> all = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);
        try (RdmaProvider provider = Rdma.open("disni"); Device sdev = provider.open(addr); Device cdev = provider.open(addr)) {
            ProtectionDomain spd = sdev.allocateProtectionDomain();
            ProtectionDomain cpd = cdev.allocateProtectionDomain();
            CompletionQueue scq = sdev.createCompletionQueue(64, null, single);
            CompletionQueue ccq = cdev.createCompletionQueue(64, null, single);
            MemoryRegion smr = spd.register(ByteBuffer.allocateDirect(1 << 16), all);
            MemoryRegion cmr = cpd.register(ByteBuffer.allocateDirect(1 << 16), all);
            Connection cc;
            Connection sc;
            try (Listener l = sdev.connectionManager().listen(new InetSocketAddress(addr, 23456), 4)) {
                CompletableFuture<Connection> acc = CompletableFuture.supplyAsync(() -> {
                    try {
                        return l.next(Duration.ofSeconds(30)).accept(
                                QueuePairConfig.of(spd, scq, 16).withSingleConsumer(single).withBeforeConnect(
                                        qp -> qp.postRecv(0, smr, 0, SIZE)),
                                ConnectionParameters.builder().build());
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                cc = cdev.connectionManager().connect(l.localAddress(),
                        QueuePairConfig.of(cpd, ccq, 16).withSingleConsumer(single), ConnectionParameters.builder().build(),
                        Duration.ofSeconds(30));
                sc = acc.get(60, TimeUnit.SECONDS);
            }
            QueuePair cqp = cc.queuePair();
            WorkCompletion[] wcs = {new WorkCompletion()};
            SendRequest wr = new SendRequest();
            long[] rtt = new long[ops];
            // Read: the client alone
            for (int round = 0; round < 2; round++) {
                for (int i = 0; i < ops; i++) {
                    long t0 = System.nanoTime();
                    cqp.postSend(wr.read(i, cmr, 0, SIZE, smr.address() + 4096, smr.rkey()));
                    one(ccq, wcs);
                    rtt[i] = System.nanoTime() - t0;
                }
            }
            print(single, "read", rtt);
            // Send: a server thread answers each ping
            QueuePair sqp = sc.queuePair();
            cqp.postRecv(0, cmr, 8192, SIZE);
            int total = 2 * ops;
            Thread server = new Thread(() -> {
                WorkCompletion[] w = {new WorkCompletion()};
                SendRequest pong = new SendRequest();
                try {
                    for (int i = 0; i < total; ) {
                        one(scq, w);
                        if (w[0].opcode == WcOpcode.RECV) {
                            sqp.postRecv(i, smr, 0, SIZE);
                            sqp.postSend(pong.send(i, smr, 1024, SIZE));
                            i++;
                        }
                    }
                } catch (WorkRequestException e) {
                    throw new IllegalStateException(e);
                }
            }, "pong");
            server.start();
            for (int round = 0; round < 2; round++) {
                for (int i = 0; i < ops; i++) {
                    long t0 = System.nanoTime();
                    cqp.postSend(wr.send(i, cmr, 0, SIZE));
                    one(ccq, wcs); // the Send's completion and the pong, either way round
                    one(ccq, wcs);
                    cqp.postRecv(i, cmr, 8192, SIZE);
                    rtt[i] = System.nanoTime() - t0;
                }
            }
            server.join();
            print(single, "send", rtt);
            cc.close();
            sc.close();
            smr.close();
            cmr.close();
            ccq.close();
            scq.close();
            cpd.close();
            spd.close();
        }
    }

    private static void one(CompletionQueue cq, WorkCompletion[] wcs) {
        while (cq.spin(wcs, 1, SPIN, 0) == 0) {
            Thread.onSpinWait();
        }
        if (!wcs[0].isSuccess()) {
            throw new IllegalStateException("completion " + wcs[0]);
        }
    }

    private static void print(boolean single, String op, long[] rtt) {
        long[] s = rtt.clone();
        Arrays.sort(s);
        System.out.printf("%s %s 64B ops=%d p50=%.1fus min=%.1fus p99=%.1fus%n", single ? "single" : "shared", op, s.length,
                s[s.length / 2] / 1e3, s[0] / 1e3, s[(int) (s.length * 0.99)] / 1e3);
    }
}
