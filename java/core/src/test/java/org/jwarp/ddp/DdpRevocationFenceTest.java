package org.jwarp.ddp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.concurrent.ThreadLocalRandom;
import org.jwarp.ddp.DdpTestSupport.Recorder;
import org.jwarp.ddp.DdpTestSupport.Segment;
import org.jwarp.ground.TermCode;
import org.jwarp.memory.StagAccess;
import org.jwarp.memory.StagDomain;
import org.jwarp.memory.StagRegion;
import org.jwarp.memory.StagTable;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * RFC 5041 §8.3.1 (6), the revocation fence: once deregistration or invalidation returns, no byte
 * of a segment from the peer lands in the region, even one validated just before. A feeder thread
 * places RDMA Writes over the whole region in a loop while this thread revokes the STag at a random
 * moment and at once writes a guard pattern into the region, last byte first (against the forward
 * copy of a segment still in flight); after the feeder stops the guard must be intact.
 */
class DdpRevocationFenceTest {
    static final int REGION = 8192;
    static final byte DATA = 0x5A;
    static final byte GUARD = (byte) 0xC3;
    static final long BASE = 0x7000_0000L;
    static final long BUDGET_NANOS = 2_000_000_000L;
    /** Trials run even on a loaded machine; more while the time budget lasts. */
    static final int MIN_TRIALS = 20;
    static final int MAX_TRIALS = 4000;

    /** Writes the guard over {@code [0, length)} from the end down, 8 bytes at a time. */
    static void guardBackwards(ByteBuffer b, int length) {
        long g = 0x0101_0101_0101_0101L * (GUARD & 0xFF);
        for (int i = length - 8; i >= 0; i -= 8) {
            b.putLong(i, g);
        }
    }

    /** Index of the first byte that is not the guard, or -1. */
    static int firstNonGuard(ByteBuffer b, int length) {
        for (int i = 0; i < length; i++) {
            if (b.get(i) != GUARD) {
                return i;
            }
        }
        return -1;
    }

    /** Spins a random while, so the revocation falls anywhere in the feeder's loop. */
    static void jitter() {
        int n = ThreadLocalRandom.current().nextInt(4000);
        for (int i = 0; i < n; i++) {
            Thread.onSpinWait();
        }
    }

    static final class CountingUlp extends Recorder {
        volatile int placed;

        @Override
        public void onTaggedMessage(int rsvdUlp, int stag, int length) {
            placed++;
        }
    }

    @Test
    @DisplayName("RFC 5041 §8.3.1 (6): no RDMA Write byte lands in a region after its deregistration returns")
    void writeNeverLandsAfterDeregistration_5041_8_3_1() throws Exception {
        runTrials(true);
    }

    @Test
    @DisplayName("RFC 5041 §8.3.1 (6): no RDMA Write byte lands in a region after its invalidation returns")
    void writeNeverLandsAfterInvalidation_5041_8_3_1() throws Exception {
        runTrials(false);
    }

    private void runTrials(boolean deregister) throws Exception {
        ByteBuffer mem = ByteBuffer.allocateDirect(REGION);
        byte[] payload = new byte[REGION];
        java.util.Arrays.fill(payload, DATA);
        StagDomain pd = new StagDomain();
        StagTable stags = new StagTable(16);
        long deadline = System.nanoTime() + BUDGET_NANOS;
        int trials = 0;
        while (trials < MIN_TRIALS || (trials < MAX_TRIALS && System.nanoTime() < deadline)) {
            trials++;
            StagRegion mr = stags.register(pd, mem, 0, REGION, BASE, StagAccess.REMOTE_WRITE | StagAccess.LOCAL_WRITE);
            Segment seg = DdpTestSupport.tagged(payload, REGION + 64, 0, mr.stag(), BASE).get(0);
            CountingUlp ulp = new CountingUlp();
            DdpReceiver rx = new DdpReceiver(pd, stags, new int[] {1}, ulp);
            Thread feeder = new Thread(() -> {
                while (!rx.failed()) {
                    rx.receive(seg.bytes(), 0, seg.length());
                }
            }, "fence-feeder");
            feeder.start();
            while (ulp.placed == 0 && feeder.isAlive()) {
                Thread.onSpinWait();
            }
            jitter();
            if (deregister) {
                assertTrue(stags.deregister(mr.stag()));
            } else {
                assertTrue(stags.invalidate(mr.stag(), pd));
            }
            guardBackwards(mem, REGION);
            feeder.join(10_000);
            assertTrue(!feeder.isAlive(), "feeder stops once the STag is invalid");
            assertEquals(java.util.List.of(TermCode.DDP_TAGGED_INVALID_STAG), ulp.errors,
                    "the placement after revocation is the §7.1 invalid-STag error");
            int bad = firstNonGuard(mem, REGION);
            assertEquals(-1, bad, "trial " + trials + ": a byte of a Write landed at " + bad
                    + " after the STag was revoked");
            if (!deregister) {
                stags.deregister(mr.stag());
            }
        }
    }
}
