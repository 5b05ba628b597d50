package org.jwarp.soft;

import org.jwarp.soft.verbs.VerbsProbe;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;

import org.jwarp.soft.verbs.SoftMemoryRegion;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * RFC 5041 §8.3.1 (6) through the verbs: while the peer streams 64 KiB RDMA Writes into a region,
 * {@link SoftMemoryRegion#close()} deregisters it; from the moment close returns the region's bytes
 * never change again (a guard written over them at once, last byte first, stays intact).
 */
class SoftRevocationFenceTest {
    static final int SIZE = 64 * 1024;
    static final byte GUARD = (byte) 0xC3;
    static final int TRIALS = 25;

    @Test
    @DisplayName("RFC 5041 §8.3.1 (6): no byte of a concurrent Write lands after MemoryRegion.close returns")
    void closeFencesConcurrentWrites_5041_8_3_1() throws Exception {
        long guard = 0x0101_0101_0101_0101L * (GUARD & 0xFF);
        for (int trial = 1; trial <= TRIALS; trial++) {
            try (SoftFixture f = new SoftFixture();
                 SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
                SoftMemoryRegion src = f.region(f.pd, SIZE, Access.LOCAL_WRITE);
                for (int i = 0; i < SIZE; i++) {
                    VerbsProbe.raw(src).put(i, (byte) 0x5A);
                }
                SoftMemoryRegion dst = f.region(f.pd2, SIZE, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
                ByteBuffer mem = VerbsProbe.raw(dst);
                long addr = dst.address();
                int rkey = dst.rkey();
                var qp = p.initiator().queuePair();
                AtomicInteger done = new AtomicInteger();
                Thread writer = new Thread(() -> {
                    WorkCompletion[] wc = SoftFixture.wcs(16);
                    SendRequest wr = new SendRequest();
                    int outstanding = 0;
                    try {
                        while (true) {
                            while (outstanding < 8) {
                                qp.postSend(wr.write(1, src, 0, SIZE, addr, rkey));
                                outstanding++;
                            }
                            int n = f.cq.poll(wc, wc.length);
                            for (int i = 0; i < n; i++) {
                                outstanding--;
                                if (wc[i].status != WcStatus.SUCCESS) {
                                    return;
                                }
                                done.incrementAndGet();
                            }
                        }
                    } catch (Exception e) {
                        // the QP went to error: the writer is done
                    }
                }, "fence-writer");
                writer.start();
                while (done.get() < 4 && writer.isAlive()) {
                    Thread.onSpinWait();
                }
                dst.close();
                for (int i = SIZE - 8; i >= 0; i -= 8) {
                    mem.putLong(i, guard);
                }
                writer.join(20_000);
                assertTrue(!writer.isAlive(), "the writer stops once its Writes fail");
                Thread.sleep(20); // anything still in flight on the target's side has arrived by now
                for (int i = 0; i < SIZE; i++) {
                    if (mem.get(i) != GUARD) {
                        throw new AssertionError("trial " + trial + ": a Write byte landed at " + i
                                + " after MemoryRegion.close returned");
                    }
                }
            }
        }
    }

    @Test
    @DisplayName("RFC 5041 §8.3.1 (6): a Send for a receive whose region was closed after posting lands nowhere; LOC_PROT_ERR, the rest flushed")
    void closeFencesPostedReceive_5041_8_3_1() throws Exception {
        for (int size : new int[] {100, SIZE}) { // one small FPDU, and large ones placed by direct reads
            try (SoftFixture f = new SoftFixture();
                 SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
                SoftMemoryRegion src = f.region(f.pd, SIZE, Access.LOCAL_WRITE);
                for (int i = 0; i < SIZE; i++) {
                    VerbsProbe.raw(src).put(i, (byte) 0x5A);
                }
                SoftMemoryRegion dst = f.region(f.pd2, SIZE, Access.LOCAL_WRITE);
                ByteBuffer mem = VerbsProbe.raw(dst);
                p.responder().queuePair().postRecv(7, dst, 0, SIZE);
                p.responder().queuePair().postRecv(8, dst, 0, SIZE);
                dst.close();
                for (int i = 0; i < SIZE; i++) {
                    mem.put(i, GUARD);
                }
                p.initiator().queuePair().postSend(new SendRequest().send(1, src, 0, size));
                WorkCompletion rc = SoftFixture.one(f.cq2);
                assertEquals(7, rc.wrId);
                assertEquals(WcStatus.LOC_PROT_ERR, rc.status, size + " B: the receive's memory was revoked");
                WorkCompletion next = SoftFixture.one(f.cq2);
                assertEquals(8, next.wrId);
                assertEquals(WcStatus.WR_FLUSH_ERR, next.status);
                Thread.sleep(20);
                for (int i = 0; i < SIZE; i++) {
                    if (mem.get(i) != GUARD) {
                        throw new AssertionError(size + " B Send: a byte landed at " + i + " after MemoryRegion.close returned");
                    }
                }
            }
        }
    }

    @Test
    @DisplayName("RFC 5041 §8.3.1 (6): Sends arriving while their posted receive's region is closed: nothing lands after close returns; each receive SUCCESS, LOC_PROT_ERR or flushed")
    void closeFencesConcurrentSends_5041_8_3_1() throws Exception {
        int receives = 24;
        java.util.Random random = new java.util.Random(13);
        int revokedSeen = 0;
        for (int trial = 1; trial <= TRIALS; trial++) {
            try (SoftFixture f = new SoftFixture();
                 SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
                SoftMemoryRegion src = f.region(f.pd, SIZE, Access.LOCAL_WRITE);
                for (int i = 0; i < SIZE; i++) {
                    VerbsProbe.raw(src).put(i, (byte) 0x5A);
                }
                SoftMemoryRegion dst = f.region(f.pd2, SIZE, Access.LOCAL_WRITE);
                ByteBuffer mem = VerbsProbe.raw(dst);
                for (int r = 0; r < receives; r++) {
                    p.responder().queuePair().postRecv(r, dst, 0, SIZE);
                }
                var qp = p.initiator().queuePair();
                Thread sender = new Thread(() -> {
                    WorkCompletion[] wc = SoftFixture.wcs(16);
                    SendRequest wr = new SendRequest();
                    int posted = 0;
                    int outstanding = 0;
                    try {
                        while (posted < receives || outstanding > 0) {
                            while (posted < receives && outstanding < 4) {
                                qp.postSend(wr.send(posted++, src, 0, SIZE));
                                outstanding++;
                            }
                            int n = f.cq.poll(wc, wc.length);
                            for (int i = 0; i < n; i++) {
                                outstanding--;
                                if (wc[i].status != WcStatus.SUCCESS) {
                                    return;
                                }
                            }
                        }
                    } catch (Exception e) {
                        // the QP went to error: the sender is done
                    }
                }, "fence-sender");
                sender.start();
                // Close after a few receives completed, while the next Sends stream in.
                int before = 1 + random.nextInt(4);
                WorkCompletion[] wc = SoftFixture.wcs(receives);
                int[] status = new int[receives];
                java.util.Arrays.fill(status, -1);
                int got = 0;
                long deadline = System.nanoTime() + 20_000_000_000L;
                while (got < before) {
                    int n = f.cq2.poll(wc, receives);
                    for (int i = 0; i < n; i++) {
                        assertEquals(WcStatus.SUCCESS, wc[i].status, "before close");
                        status[(int) wc[i].wrId] = wc[i].status.ordinal();
                    }
                    got += n;
                    assertTrue(System.nanoTime() < deadline, "receives did not complete");
                }
                dst.close();
                for (int i = SIZE - 8; i >= 0; i -= 8) {
                    mem.putLong(i, 0x0101_0101_0101_0101L * (GUARD & 0xFF));
                }
                while (got < receives) {
                    int n = f.cq2.await(wc, receives, 20, java.util.concurrent.TimeUnit.SECONDS);
                    assertTrue(n > 0, "trial " + trial + ": only " + got + " of " + receives + " receives completed");
                    for (int i = 0; i < n; i++) {
                        WorkCompletion c = wc[i];
                        assertTrue(c.status == WcStatus.SUCCESS || c.status == WcStatus.LOC_PROT_ERR
                                || c.status == WcStatus.WR_FLUSH_ERR, "trial " + trial + ": receive " + c.wrId + " " + c.status);
                        if (c.status == WcStatus.SUCCESS) {
                            assertEquals(SIZE, c.byteLength);
                        }
                        if (c.status == WcStatus.LOC_PROT_ERR) {
                            revokedSeen++;
                        }
                        status[(int) c.wrId] = c.status.ordinal();
                    }
                    got += n;
                }
                // Receives complete in order: no SUCCESS after the first LOC_PROT_ERR or flush.
                boolean failedYet = false;
                for (int r = 0; r < receives; r++) {
                    boolean ok = status[r] == WcStatus.SUCCESS.ordinal();
                    assertTrue(ok || status[r] >= 0, "receive " + r + " never completed");
                    assertTrue(!(failedYet && ok), "trial " + trial + ": receive " + r + " succeeded after an earlier one failed");
                    failedYet |= !ok;
                }
                sender.join(20_000);
                assertTrue(!sender.isAlive(), "the sender stops");
                Thread.sleep(20); // anything still in flight on the target's side has arrived by now
                for (int i = 0; i < SIZE; i++) {
                    if (mem.get(i) != GUARD) {
                        throw new AssertionError("trial " + trial + ": a Send byte landed at " + i
                                + " after MemoryRegion.close returned");
                    }
                }
            }
        }
        assertTrue(revokedSeen > 0, "no trial met a Send for the closed region (the race was never exercised)");
        System.out.printf("concurrent Sends vs region close: %d of %d trials ended with LOC_PROT_ERR%n", revokedSeen, TRIALS);
    }
}
