package org.jwarp.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jwarp.soft.verbs.SoftMemoryRegion;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.RecvRequest;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The data path's allocation per operation, measured with the JVM's per-thread allocation
 * counters on the reactor thread and the posting thread during Send / RDMA Write / RDMA Read
 * (RFC 5040 §5) traffic: locks are monitors and CQ waits are monitor waits, so even contention
 * and parking allocate nothing on the Java heap. The bound is below one object per operation.
 */
class SoftAllocationTest {
    private static final int OPS = 20_000;
    /** Below one object (16 B) per operation on either thread. */
    private static final double BYTES_PER_OP_BOUND = 8.0;

    private static long allocated(long tid) {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getThreadAllocatedBytes(tid);
    }

    /** The QP context both QPs of {@link #dataPathAllocationPerOp} carry (ibverbs' qp_context). */
    private static final Object QP_CONTEXT = new Object();

    private static SoftFixture withQpContext(SoftFixture f) {
        f.qpTweak = c -> c.withContext(QP_CONTEXT);
        return f;
    }

    @Test
    @DisplayName("Hot path: posting, transmitting, placing and reaping allocate (almost) nothing per operation, "
            + "each completion carrying its QP's context")
    void dataPathAllocationPerOp() throws Exception {
        try (SoftFixture f = withQpContext(new SoftFixture());
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
            Thread reactor = f.provider.reactorThreads().get(0);
            SoftMemoryRegion src = f.region(f.pd, 4096, Access.LOCAL_WRITE);
            SoftMemoryRegion dst = f.region(f.pd2, 4096, Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);
            SendRequest wr = new SendRequest();
            WorkCompletion[] a = SoftFixture.wcs(4);
            WorkCompletion[] b = SoftFixture.wcs(4);
            Runnable round = () -> {
                try {
                    for (int i = 0; i < OPS; i++) {
                        p.responder().queuePair().postRecv(i, dst, 0, 4096);
                        p.initiator().queuePair().postSend(wr.send(i, src, 0, 256));
                        p.initiator().queuePair().postSend(wr.write(i, src, 0, 256, dst.address() + 1024, dst.rkey()));
                        p.initiator().queuePair().postSend(wr.read(i, src, 2048, 256, dst.address(), dst.rkey()));
                        int got = 0;
                        while (got < 3) {
                            int n = f.cq.await(a, 4, 5, TimeUnit.SECONDS);
                            if (n == 0 || a[0].status != WcStatus.SUCCESS || a[n - 1].qpContext != QP_CONTEXT) {
                                throw new AssertionError("completion missing, failed or without its QP context: " + a[0]);
                            }
                            got += n;
                        }
                        if (f.cq2.await(b, 4, 5, TimeUnit.SECONDS) != 1 || b[0].qpContext != QP_CONTEXT) {
                            throw new AssertionError("receive missing or without its QP context: " + b[0]);
                        }
                    }
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            };
            round.run(); // warm up: JIT, lazily grown structures
            long r0 = allocated(reactor.getId());
            long m0 = allocated(Thread.currentThread().getId());
            round.run();
            long r1 = allocated(reactor.getId());
            long m1 = allocated(Thread.currentThread().getId());
            double reactorPerOp = (r1 - r0) / (3.0 * OPS);
            double appPerOp = (m1 - m0) / (3.0 * OPS);
            System.out.printf("soft data path allocation: reactor %.2f B/op, posting thread %.2f B/op%n", reactorPerOp,
                    appPerOp);
            assertTrue(reactorPerOp < BYTES_PER_OP_BOUND, "reactor allocates " + reactorPerOp + " B/op");
            assertTrue(appPerOp < BYTES_PER_OP_BOUND, "posting thread allocates " + appPerOp + " B/op");
            assertEquals(0, f.cq.overruns());
        }
    }

    @Test
    @DisplayName("RFC 5041 §7.1: 256 KiB Writes and Sends whose payload is read straight into the region allocate (almost) nothing per operation")
    void directReadAllocationPerOp_5041_7_1() throws Exception {
        final int size = 256 * 1024;
        final int ops = 400;
        try (SoftFixture f = new SoftFixture();
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
            Thread reactor = f.provider.reactorThreads().get(0);
            SoftMemoryRegion src = f.region(f.pd, size, Access.LOCAL_WRITE);
            SoftMemoryRegion dst = f.region(f.pd2, size, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
            SoftMemoryRegion rq = f.region(f.pd2, size, Access.LOCAL_WRITE);
            StreamReceive rcv = ((SoftConnection) p.responder()).stream().receiver;
            SendRequest wr = new SendRequest();
            WorkCompletion[] a = SoftFixture.wcs(4);
            WorkCompletion[] b = SoftFixture.wcs(4);
            Runnable round = () -> {
                try {
                    for (int i = 0; i < ops; i++) {
                        p.responder().queuePair().postRecv(i, rq, 0, size);
                        p.initiator().queuePair().postSend(wr.write(i, src, 0, size, dst.address(), dst.rkey()));
                        p.initiator().queuePair().postSend(wr.send(i, src, 0, size));
                        int got = 0;
                        while (got < 2) {
                            int n = f.cq.await(a, 4, 5, TimeUnit.SECONDS);
                            if (n == 0 || a[0].status != WcStatus.SUCCESS) {
                                throw new AssertionError("completion missing or failed: " + a[0]);
                            }
                            got += n;
                        }
                        if (f.cq2.await(b, 4, 5, TimeUnit.SECONDS) != 1 || b[0].status != WcStatus.SUCCESS) {
                            throw new AssertionError("receive missing or failed: " + b[0]);
                        }
                    }
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            };
            round.run();
            long d0 = rcv.directReads;
            long r0 = allocated(reactor.getId());
            long m0 = allocated(Thread.currentThread().getId());
            round.run();
            long r1 = allocated(reactor.getId());
            long m1 = allocated(Thread.currentThread().getId());
            long reads = rcv.directReads - d0;
            double reactorPerOp = (r1 - r0) / (2.0 * ops);
            double appPerOp = (m1 - m0) / (2.0 * ops);
            System.out.printf("direct-read data path allocation: reactor %.2f B/op, posting thread %.2f B/op, %d reads into regions%n",
                    reactorPerOp, appPerOp, reads);
            assertTrue(reads >= ops, "only " + reads + " reads went straight into registered memory");
            assertTrue(reactorPerOp < BYTES_PER_OP_BOUND, "reactor allocates " + reactorPerOp + " B/op");
            assertTrue(appPerOp < BYTES_PER_OP_BOUND, "posting thread allocates " + appPerOp + " B/op");
        }
    }

    @Test
    @DisplayName("Chains of gathered Sends, inline Writes and scattered receives allocate (almost) nothing per WR (RFC 5041 §5.3)")
    void chainsAndScatterGatherAllocationPerWr() throws Exception {
        try (SoftFixture f = new SoftFixture()) {
            f.qpTweak = c -> c.withSge(3, 3).withInline(64);
            try (SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
                Thread reactor = f.provider.reactorThreads().get(0);
                SoftMemoryRegion src = f.region(f.pd, 4096, Access.LOCAL_WRITE);
                SoftMemoryRegion src2 = f.region(f.pd, 4096, Access.LOCAL_WRITE);
                SoftMemoryRegion dst = f.region(f.pd2, 8192, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
                SoftMemoryRegion dst2 = f.region(f.pd2, 4096, Access.LOCAL_WRITE);
                int chain = 4;
                SendRequest[] sends = new SendRequest[chain];
                RecvRequest[] recvs = new RecvRequest[chain];
                for (int k = chain - 1; k >= 0; k--) {
                    sends[k] = new SendRequest();
                    sends[k].next = k + 1 < chain ? sends[k + 1] : null;
                    recvs[k] = new RecvRequest();
                    recvs[k].next = k + 1 < chain ? recvs[k + 1] : null;
                }
                SendRequest inline = new SendRequest();
                WorkCompletion[] a = SoftFixture.wcs(8);
                WorkCompletion[] b = SoftFixture.wcs(8);
                int rounds = OPS / chain;
                Runnable round = () -> {
                    try {
                        for (int i = 0; i < rounds; i++) {
                            for (int k = 0; k < chain; k++) {
                                recvs[k].wrId = i;
                                recvs[k].sgl.clear().add(dst, 512L * k, 100).add(dst2, 512L * k, 100).add(dst, 4096, 200);
                                SendRequest s = sends[k];
                                s.wrId = i;
                                s.opcode = org.jwarp.verbs.SendOpcode.SEND;
                                s.sgl.clear().add(src, 0, 64).add(src2, 100, 64).add(src, 1000, 128);
                            }
                            p.responder().queuePair().postRecv(recvs[0]);
                            p.initiator().queuePair().postSend(sends[0]);
                            inline.write(i, src, 0, 64, dst.address() + 6000, dst.rkey());
                            inline.inline = true;
                            p.initiator().queuePair().postSend(inline);
                            int got = 0;
                            while (got < chain + 1) {
                                int n = f.cq.await(a, 8, 5, TimeUnit.SECONDS);
                                if (n == 0 || a[0].status != WcStatus.SUCCESS) {
                                    throw new AssertionError("completion missing or failed: " + a[0]);
                                }
                                got += n;
                            }
                            got = 0;
                            while (got < chain) {
                                int n = f.cq2.await(b, 8, 5, TimeUnit.SECONDS);
                                if (n == 0 || b[0].status != WcStatus.SUCCESS || b[0].byteLength != 256) {
                                    throw new AssertionError("receive missing or failed: " + b[0]);
                                }
                                got += n;
                            }
                        }
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                };
                round.run();
                long r0 = allocated(reactor.getId());
                long m0 = allocated(Thread.currentThread().getId());
                round.run();
                long r1 = allocated(reactor.getId());
                long m1 = allocated(Thread.currentThread().getId());
                double wrs = rounds * (2.0 * chain + 1);
                double reactorPerWr = (r1 - r0) / wrs;
                double appPerWr = (m1 - m0) / wrs;
                System.out.printf("soft SGL/chain allocation: reactor %.2f B/WR, posting thread %.2f B/WR%n", reactorPerWr,
                        appPerWr);
                assertTrue(reactorPerWr < BYTES_PER_OP_BOUND, "reactor allocates " + reactorPerWr + " B/WR");
                assertTrue(appPerWr < BYTES_PER_OP_BOUND, "posting thread allocates " + appPerWr + " B/WR");
            }
        }
    }
}
