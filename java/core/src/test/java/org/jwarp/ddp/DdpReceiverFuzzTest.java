package org.jwarp.ddp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.ByteBuffer;
import org.jwarp.ground.TermCode;
import org.jwarp.memory.StagAccess;
import org.jwarp.memory.StagDomain;
import org.jwarp.memory.StagRegion;
import org.jwarp.memory.StagTable;

/**
 * Coverage-guided fuzzing of the DDP header checks and placement, RFC 5041 §4 (headers), §5
 * (tagged and untagged placement), §7.1 (errors): no exception escapes
 * {@link DdpReceiver#receive}, nothing is written outside a registered region or posted buffer
 * (guard bytes around them stay intact), at most one error is reported, and after it nothing is
 * placed or delivered. Segments are fuzzer bytes, optionally with the version, STag or queue made
 * valid so the fuzzer reaches placement.
 * Corpus: {@code src/test/resources/org/jwarp/ddp/DdpReceiverFuzzTestInputs/}.
 */
class DdpReceiverFuzzTest {
    private static final int GUARD = 64;
    private static final byte CANARY = 0x5A;
    private static final int REGION = 4096;
    private static final int SLOT = 256;
    private static final int SLOTS = 4;
    /** Reused by every input (refilled with the canary): no direct allocation per execution. */
    private static final ByteBuffer TAGGED = ByteBuffer.allocateDirect(REGION + 2 * GUARD);
    private static final ByteBuffer UNTAGGED = ByteBuffer.allocateDirect(SLOTS * (SLOT + GUARD) + GUARD);

    private static final class Ulp implements DdpReceiveHandler {
        boolean errored;
        int delivered;

        @Override
        public TermCode checkTagged(int rsvdUlp, int stag, long to, int payloadLength) {
            return null;
        }

        @Override
        public int taggedAccess(int rsvdUlp) {
            return StagAccess.REMOTE_WRITE;
        }

        @Override
        public TermCode checkUntagged(int qn, int rsvdUlp, int msn, int payloadLength) {
            return null;
        }

        @Override
        public void onTaggedMessage(int rsvdUlp, int stag, int length) {
            assertTrue(!errored, "tagged message delivered after the error");
            assertTrue(length >= 0, "negative message length " + length);
            delivered++;
        }

        @Override
        public void onUntaggedMessage(int qn, int msn, int rsvdUlp, int rsvdUlp32, long cookie, ByteBuffer buffer,
                int offset, int length) {
            assertTrue(!errored, "untagged message delivered after the error");
            assertTrue(offset >= GUARD && length >= 0 && length <= SLOT, "message [" + offset + ", +" + length + ")");
            delivered++;
        }

        @Override
        public void onError(TermCode code, ByteBuffer segment, int index, int length) {
            assertTrue(!errored, "two errors reported");
            assertTrue(code != null && code.isDefined(), String.valueOf(code));
            errored = true;
        }
    }

    @FuzzTest(maxDuration = "30s")
    void ddpReceiver_5041_7_1(FuzzedDataProvider data) {
        StagDomain pd = new StagDomain();
        StagTable table = new StagTable(8);
        ByteBuffer tagged = TAGGED;
        fill(tagged, 0, tagged.capacity());
        StagRegion mr = table.register(pd, tagged, GUARD, REGION, data.consumeBoolean() ? 0 : 1L << 40,
                StagAccess.REMOTE_WRITE | StagAccess.REMOTE_READ);
        Ulp ulp = new Ulp();
        DdpReceiver rx = new DdpReceiver(pd, table, new int[] {SLOTS, SLOTS, SLOTS}, ulp, data.consumeInt(1, 4));
        ByteBuffer untagged = UNTAGGED;
        fill(untagged, 0, untagged.capacity());
        for (int q = 0; q < 3; q++) {
            for (int i = 0; i < SLOTS; i++) {
                // every queue shares the slots' memory: placement bugs still hit a guard
                rx.postUntagged(q, untagged, GUARD + i * (SLOT + GUARD), SLOT, q * 100L + i);
            }
        }
        int segments = data.consumeInt(0, 12);
        ByteBuffer seg = ByteBuffer.allocate(2048);
        for (int s = 0; s < segments && data.remainingBytes() > 0; s++) {
            int fix = data.consumeInt(0, 7);
            byte[] bytes = data.consumeBytes(data.consumeInt(0, 600));
            int index = data.consumeInt(0, 16);
            seg.clear();
            seg.put(index, bytes);
            if (bytes.length > 0 && (fix & 1) != 0) {
                seg.put(index, (byte) ((bytes[0] & ~DdpHeader.DV_MASK & ~DdpHeader.RSVD_MASK) | DdpHeader.DDP_VERSION));
            }
            boolean isTagged = bytes.length > 0 && (seg.get(index) & DdpHeader.T_FLAG) != 0;
            if ((fix & 2) != 0 && isTagged && bytes.length >= DdpHeader.TAGGED_HEADER_LENGTH) {
                seg.putInt(index + DdpHeader.STAG_OFFSET, mr.stag());
            }
            if ((fix & 4) != 0 && !isTagged && bytes.length >= DdpHeader.UNTAGGED_HEADER_LENGTH) {
                seg.putInt(index + DdpHeader.QN_OFFSET, seg.getInt(index + DdpHeader.QN_OFFSET) & 3);
            }
            boolean wasFailed = rx.failed();
            long placed = rx.segmentCount();
            rx.receive(seg, index, bytes.length);
            if (wasFailed) {
                assertEquals(placed, rx.segmentCount(), "a segment was placed after the error");
            }
        }
        assertGuards(tagged, GUARD, REGION);
        for (int i = 0; i < SLOTS; i++) {
            int off = GUARD + i * (SLOT + GUARD);
            for (int g = off - GUARD; g < off; g++) {
                assertEquals(CANARY, untagged.get(g), "guard byte " + g + " before untagged slot " + i + " written");
            }
        }
        for (int g = untagged.capacity() - GUARD; g < untagged.capacity(); g++) {
            assertEquals(CANARY, untagged.get(g), "guard byte " + g + " after the last untagged slot written");
        }
    }

    private static void fill(ByteBuffer b, int from, int to) {
        for (int i = from; i < to; i++) {
            b.put(i, CANARY);
        }
    }

    private static void assertGuards(ByteBuffer b, int start, int length) {
        for (int i = 0; i < start; i++) {
            assertEquals(CANARY, b.get(i), "guard byte " + i + " before the tagged region written");
        }
        for (int i = start + length; i < b.capacity(); i++) {
            assertEquals(CANARY, b.get(i), "guard byte " + i + " after the tagged region written");
        }
    }
}
