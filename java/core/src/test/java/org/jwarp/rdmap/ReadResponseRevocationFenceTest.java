package org.jwarp.rdmap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.concurrent.ThreadLocalRandom;
import org.jwarp.ground.TermCode;
import org.jwarp.memory.StagAccess;
import org.jwarp.memory.StagRegion;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * RFC 5041 §8.3.1 (6) for RDMA Read Responses: once the Read's sink region is deregistered, no byte
 * of a Read Response lands in it, even one whose segment was validated just before. A feeder thread
 * posts Reads into the sink and hands endpoint A the peer's response in a loop; this thread
 * deregisters the sink at a random moment, at once writes a guard pattern over it (last byte
 * first, against a forward copy still in flight) and, after the feeder stops, checks the guard.
 */
class ReadResponseRevocationFenceTest {
    static final int REGION = 8192;
    static final byte DATA = 0x5A;
    static final byte GUARD = (byte) 0xC3;
    static final long BUDGET_NANOS = 2_000_000_000L;
    /** Trials run even on a loaded machine; more while the time budget lasts. */
    static final int MIN_TRIALS = 20;
    static final int MAX_TRIALS = 4000;

    @Test
    @DisplayName("RFC 5041 §8.3.1 (6): no Read Response byte lands in the sink after its deregistration returns")
    void readResponseNeverLandsAfterDeregistration_5041_8_3_1() throws Exception {
        RdmapSettings s = RdmapPair.settings(REGION + 64, false, 4, 4);
        long guard = 0x0101_0101_0101_0101L * (GUARD & 0xFF);
        long deadline = System.nanoTime() + BUDGET_NANOS;
        int trials = 0;
        int terms = 0;
        while (trials < MIN_TRIALS || (trials < MAX_TRIALS && System.nanoTime() < deadline)) {
            trials++;
            RdmapPair p = new RdmapPair(s);
            ByteBuffer srcMem = ByteBuffer.allocateDirect(REGION);
            for (int i = 0; i < REGION; i++) {
                srcMem.put(i, DATA);
            }
            ByteBuffer sinkMem = ByteBuffer.allocateDirect(REGION);
            StagRegion src = p.stags.register(p.pdB, srcMem, 0, REGION, 0, StagAccess.REMOTE_READ);
            StagRegion sink = p.stags.register(p.pdA, sinkMem, 0, REGION, 0, StagAccess.LOCAL_WRITE);
            // The peer's answer to one Read of the whole sink, recorded once and replayed per Read.
            p.a.postRead(1, sink.stag(), 0, REGION, src.stag(), 0, false);
            p.move(p.a, p.b, p.aToB, true);
            ByteBuffer response = ByteBuffer.allocateDirect(2 * REGION);
            p.b.transmit(response);
            response.flip();
            p.a.receive(response.duplicate());
            assertEquals(0, p.a.readsOutstanding());
            ByteBuffer scratch = ByteBuffer.allocateDirect(4096);
            java.util.concurrent.atomic.AtomicInteger placed = new java.util.concurrent.atomic.AtomicInteger();
            Thread feeder = new Thread(() -> {
                while (p.a.state() == RdmapEndpoint.State.RTS) {
                    try {
                        p.a.postRead(2, sink.stag(), 0, REGION, src.stag(), 0, false);
                    } catch (IllegalArgumentException revoked) {
                        return; // the sink is gone before the Read was posted
                    }
                    scratch.clear();
                    p.a.transmit(scratch); // the Read Request, not needed here
                    p.a.receive(response.duplicate());
                    placed.incrementAndGet();
                }
            }, "fence-read-feeder");
            feeder.start();
            while (placed.get() == 0 && feeder.isAlive()) {
                Thread.onSpinWait();
            }
            int n = ThreadLocalRandom.current().nextInt(4000);
            for (int i = 0; i < n; i++) {
                Thread.onSpinWait();
            }
            assertTrue(p.stags.deregister(sink.stag()));
            for (int i = REGION - 8; i >= 0; i -= 8) {
                sinkMem.putLong(i, guard);
            }
            feeder.join(10_000);
            assertFalse(feeder.isAlive(), "the feeder stops once the sink is deregistered");
            for (int i = 0; i < REGION; i++) {
                if (sinkMem.get(i) != GUARD) {
                    throw new AssertionError("trial " + trials + ": a Read Response byte landed at " + i
                            + " after the sink was deregistered");
                }
            }
            if (!p.evA.localErrors.isEmpty()) {
                assertEquals(TermCode.DDP_TAGGED_INVALID_STAG, p.evA.localErrors.get(0),
                        "a Read Response into the revoked sink is the §7.1 invalid-STag error");
                terms++;
            }
        }
        assertTrue(terms > 0, "no Read Response met the revoked sink in " + trials + " trials");
    }
}
