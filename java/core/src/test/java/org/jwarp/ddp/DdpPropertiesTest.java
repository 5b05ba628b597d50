package org.jwarp.ddp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Label;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.statistics.Statistics;
import org.jwarp.ddp.DdpTestSupport.Recorder;
import org.jwarp.ddp.DdpTestSupport.Segment;
import org.jwarp.memory.StagAccess;
import org.jwarp.memory.StagRegion;
import org.jwarp.memory.StagDomain;
import org.jwarp.memory.StagTable;
import org.jwarp.ground.TermCode;

/**
 * RFC 5041 §5.2–§5.4 and §7.1 as properties: random messages, MULPDUs and reorderings reassemble
 * exactly, and no write ever lands outside a registered, associated, valid range (guard bytes).
 */
class DdpPropertiesTest {
    static final int GUARD = 32;

    /** Receiver fixture: one registered region, one foreign-PD region, posted untagged buffers. */
    static final class Fixture {
        final StagDomain pd = new StagDomain();
        final StagTable stags = new StagTable(8);
        final ByteBuffer regionMem;
        final StagRegion mr;
        final StagRegion foreign;
        final ByteBuffer rqMem;
        final int rqSize;
        final Recorder ulp;
        final DdpReceiver rx;
        final long base;

        Fixture(int regionSize, int rqSize, int rqCount, long base) {
            this(regionSize, rqSize, rqCount, base, DdpReceiver.DEFAULT_OUT_OF_ORDER_RANGES, new Recorder());
        }

        Fixture(int regionSize, int rqSize, int rqCount, long base, int outOfOrderRanges, Recorder ulp) {
            this.base = base;
            this.ulp = ulp;
            this.rqSize = rqSize;
            regionMem = DdpTestSupport.guarded(regionSize, GUARD);
            mr = stags.register(pd, regionMem, GUARD, regionSize, base, StagAccess.REMOTE_WRITE);
            foreign = stags.register(new StagDomain(), regionMem, GUARD, regionSize, base, StagAccess.ALL);
            rqMem = DdpTestSupport.guarded(rqSize * rqCount, GUARD);
            rx = new DdpReceiver(pd, stags, new int[] {rqCount}, ulp, outOfOrderRanges);
            for (int i = 0; i < rqCount; i++) {
                rx.postUntagged(0, rqMem, GUARD + i * rqSize, rqSize, i);
            }
        }
    }

    static byte[] random(Random r, int n) {
        byte[] b = new byte[n];
        r.nextBytes(b);
        return b;
    }

    static void assertGuards(ByteBuffer b) {
        for (int i = 0; i < GUARD; i++) {
            assertEquals((byte) 0xEE, b.get(i), "leading guard byte " + i);
            assertEquals((byte) 0xEE, b.get(b.capacity() - 1 - i), "trailing guard byte " + i);
        }
    }

    @Property(tries = 150)
    @Label("RFC 5041 §5.2-§5.4: any reordering of segments reassembles every message exactly, delivered in MSN order once")
    void reassemblyEqualsSource_5041_5_2(@ForAll @IntRange(min = 1, max = 5) int messages,
            @ForAll @IntRange(min = 19, max = 1600) int mulpdu, @ForAll long seed) {
        Random r = new Random(seed);
        int rqSize = 3000;
        int regionSize = 8000;
        // Arbitrary reordering leaves up to one hole per two segments: give every buffer that many ranges.
        Fixture f = new Fixture(regionSize, rqSize, messages, 0x7000_0000_0000L + r.nextInt(1000), rqSize / 2 + 1,
                new Recorder());
        List<byte[]> sent = new ArrayList<>();
        List<Segment> all = new ArrayList<>();
        for (int m = 0; m < messages; m++) {
            byte[] msg = random(r, r.nextInt(rqSize + 1));
            sent.add(msg);
            all.addAll(DdpTestSupport.untagged(msg, mulpdu, 0x43, m, 0, m + 1));
        }
        byte[] tmsg = random(r, r.nextInt(regionSize / 2));
        long toOff = r.nextInt(regionSize - tmsg.length + 1);
        List<Segment> tsegs = DdpTestSupport.tagged(tmsg, mulpdu, 0x40, f.mr.stag(), f.base + toOff);
        // Tagged segments reorder among themselves; the L segment (message end) stays last in stream order.
        List<Segment> tbody = new ArrayList<>(tsegs.subList(0, tsegs.size() - 1));
        Collections.shuffle(all, r);
        Collections.shuffle(tbody, r);
        all.addAll(r.nextInt(all.size() + 1), tbody);
        all.add(tsegs.get(tsegs.size() - 1));
        for (Segment s : all) {
            DdpTestSupport.feed(f.rx, s);
        }
        assertTrue(f.ulp.errors.isEmpty(), () -> "errors " + f.ulp.errors);
        assertEquals(messages, f.ulp.untagged.size());
        for (int m = 0; m < messages; m++) {
            long[] d = f.ulp.untagged.get(m);
            assertEquals(m + 1, d[1], "MSN order");
            assertEquals(m, d[4], "buffer order");
            assertEquals(sent.get(m).length, d[5]);
            assertEquals(m, d[3], "RsvdULP(32) of this message");
            byte[] got = new byte[sent.get(m).length];
            f.rqMem.get(GUARD + m * rqSize, got);
            assertArrayEquals(sent.get(m), got);
        }
        byte[] got = new byte[tmsg.length];
        f.regionMem.get(GUARD + (int) toOff, got);
        assertArrayEquals(tmsg, got);
        assertEquals(1, f.ulp.taggedMsgs.size());
        assertEquals(tmsg.length, f.ulp.taggedMsgs.get(0)[2]);
        assertGuards(f.regionMem);
        assertGuards(f.rqMem);
    }

    /** How the segments of the duplicates property reach the receiver. */
    enum Order {
        /** Each message's segments in MO order, duplicates mixed in before its last new byte. */
        IN_ORDER_WITH_DUPLICATES,
        /** Everything shuffled: duplicates may also arrive after their message was delivered. */
        SHUFFLED,
        /** Every message back to front, duplicates interleaved. */
        REVERSED
    }

    @Property(tries = 300)
    @Label("RFC 5041 §5.3/§5.4: random segmentations with duplicates and reorderings deliver each message exactly "
            + "once, in MSN order, never before every byte of it was placed")
    void duplicatesNeverCompleteAMessageEarly_5041_5_4(@ForAll @IntRange(min = 1, max = 4) int messages,
            @ForAll @IntRange(min = 19, max = 300) int mulpdu, @ForAll @IntRange(min = 1, max = 6) int ranges,
            @ForAll Order order, @ForAll long seed) {
        Random r = new Random(seed);
        int rqSize = 1200;
        int maxPayload = DdpSegmenter.maxPayload(false, mulpdu);
        List<byte[]> sent = new ArrayList<>();
        List<List<Segment>> perMessage = new ArrayList<>();
        List<Integer> msgOf = new ArrayList<>();
        List<Segment> firsts = new ArrayList<>();
        for (int m = 0; m < messages; m++) {
            byte[] msg = random(r, r.nextInt(rqSize + 1));
            sent.add(msg);
            // A random segmentation (segment sizes vary, each at most the MULPDU's payload) ...
            List<Segment> segs = new ArrayList<>();
            int off = 0;
            do {
                int n = Math.min(msg.length - off, 1 + r.nextInt(maxPayload));
                boolean last = off + n == msg.length;
                segs.add(DdpTestSupport.untaggedSegment(msg, off, n, last, 0x43, m, 0, m + 1));
                off += n;
            } while (off < msg.length);
            firsts.add(segs.get(0));
            // ... plus duplicates: exact copies of segments (the L segment too) and overlapping
            // re-sends of arbitrary byte ranges with the right bytes.
            int dups = 1 + r.nextInt(4);
            for (int d = 0; d < dups; d++) {
                if (msg.length == 0 || r.nextBoolean()) {
                    segs.add(segs.get(r.nextInt(segs.size())).copy());
                } else {
                    int a = r.nextInt(msg.length);
                    int n = 1 + r.nextInt(Math.min(maxPayload, msg.length - a));
                    segs.add(DdpTestSupport.untaggedSegment(msg, a, n, false, 0x43, m, 0, m + 1));
                }
            }
            perMessage.add(segs);
        }
        List<Segment> stream = new ArrayList<>();
        for (int m = 0; m < messages; m++) {
            List<Segment> segs = new ArrayList<>(perMessage.get(m));
            if (order == Order.SHUFFLED) {
                for (Segment s : segs) {
                    stream.add(s);
                    msgOf.add(m);
                }
                continue;
            }
            segs.sort((x, y) -> Long.compare(x.offset(), y.offset()));
            if (order == Order.REVERSED) {
                Collections.reverse(segs);
            } else {
                // MO 0 last: every duplicate arrives while the message still has a hole.
                segs.remove(firsts.get(m));
                segs.add(firsts.get(m));
            }
            for (Segment s : segs) {
                stream.add(s);
                msgOf.add(m);
            }
        }
        if (order == Order.SHUFFLED) {
            long sh = r.nextLong();
            Collections.shuffle(stream, new Random(sh));
            Collections.shuffle(msgOf, new Random(sh));
        }

        // Reference model: a bit per byte, the §5.3/§5.4 rules, and the receiver's range bound.
        BitSet[] covered = new BitSet[messages];
        boolean[] lastSeen = new boolean[messages];
        boolean[] delivered = new boolean[messages];
        for (int m = 0; m < messages; m++) {
            covered[m] = new BitSet();
        }
        List<Integer> expectedDeliveries = new ArrayList<>();
        List<TermCode> expectedErrors = new ArrayList<>();
        List<Integer> actualDeliveries = new ArrayList<>();
        BitSet[] modelAtDelivery = covered;
        Recorder checking = new Recorder() {
            @Override
            public void onUntaggedMessage(int qn, int msn, int rsvdUlp, int rsvdUlp32, long cookie, ByteBuffer buffer,
                    int offset, int length) {
                int m = msn - 1;
                byte[] want = sent.get(m);
                assertEquals(want.length, length, "delivered length of MSN " + msn);
                assertEquals(want.length, modelAtDelivery[m].cardinality(),
                        "MSN " + msn + " delivered before every byte was placed (RFC 5041 §5.4)");
                byte[] got = new byte[length];
                buffer.get(offset, got);
                assertArrayEquals(want, got, "content of MSN " + msn + " at delivery");
                actualDeliveries.add(msn);
                super.onUntaggedMessage(qn, msn, rsvdUlp, rsvdUlp32, cookie, buffer, offset, length);
            }
        };
        Fixture f = new Fixture(64, rqSize, messages, 0, ranges, checking);
        int next = 0;
        boolean failed = false;
        for (int i = 0; i < stream.size(); i++) {
            Segment s = stream.get(i);
            int m = msgOf.get(i);
            if (!failed) {
                if (delivered[m]) {
                    expectedErrors.add(TermCode.DDP_UNTAGGED_MSN_RANGE); // §5.4: at most once
                    failed = true;
                } else if (s.payload() > 0 && runsBeyondPrefix(covered[m], (int) s.offset(),
                        (int) s.offset() + s.payload()) > ranges) {
                    expectedErrors.add(TermCode.DDP_LOCAL_CATASTROPHIC);
                    failed = true;
                } else {
                    covered[m].set((int) s.offset(), (int) s.offset() + s.payload());
                    lastSeen[m] |= s.last();
                    while (next < messages && lastSeen[next] && covered[next].cardinality() == sent.get(next).length) {
                        delivered[next] = true;
                        expectedDeliveries.add(next + 1);
                        next++;
                    }
                }
            }
            DdpTestSupport.feed(f.rx, s);
            assertEquals(expectedDeliveries, actualDeliveries, () -> "deliveries after segment " + s);
            assertEquals(expectedErrors, f.ulp.errors, () -> "errors after segment " + s);
        }
        if (expectedErrors.isEmpty()) {
            assertEquals(messages, actualDeliveries.size(), "every message delivered once");
        }
        assertGuards(f.rqMem);
        Statistics.label("outcome").collect(expectedErrors.isEmpty() ? "all delivered" : String.valueOf(expectedErrors.get(0)));
    }

    /** Runs of placed bytes not starting at MO 0 once {@code [a, b)} is added: the ranges the receiver needs. */
    static int runsBeyondPrefix(BitSet placed, int a, int b) {
        BitSet t = (BitSet) placed.clone();
        t.set(a, b);
        int runs = 0;
        int i = t.nextSetBit(0);
        while (i >= 0) {
            if (i > 0) {
                runs++;
            }
            int e = t.nextClearBit(i);
            i = t.nextSetBit(e);
        }
        return runs;
    }

    enum Corruption {
        VERSION, STAG_UNKNOWN, STAG_FOREIGN, TO_BELOW, TO_BEYOND, TO_WRAP, QN, MSN_PAST, MSN_FAR, MO_BEYOND, TOO_LONG
    }

    @Property(tries = 400)
    @Label("RFC 5041 §7.1/§7.2: a corrupted segment yields its §7.2 error, places nothing, and stops the stream")
    void corruptedSegmentRightError_5041_7_2(@ForAll Corruption kind, @ForAll @IntRange(min = 40, max = 600) int mulpdu,
            @ForAll long seed) {
        Random r = new Random(seed);
        int size = 2000;
        Fixture f = new Fixture(size, size, 2, 0x10_0000);
        boolean tagged = switch (kind) {
            case VERSION -> r.nextBoolean();
            case STAG_UNKNOWN, STAG_FOREIGN, TO_BELOW, TO_BEYOND, TO_WRAP -> true;
            default -> false;
        };
        byte[] msg = random(r, 1 + r.nextInt(size));
        List<Segment> segs = tagged
                ? DdpTestSupport.tagged(msg, mulpdu, 0x40, f.mr.stag(), f.base + r.nextInt(size - msg.length + 1))
                : DdpTestSupport.untagged(msg, mulpdu, 0x43, 0, 0, 1);
        int bad = r.nextInt(segs.size());
        Segment s = segs.get(bad);
        ByteBuffer b = s.bytes();
        TermCode expected;
        switch (kind) {
            case VERSION -> {
                b.put(0, (byte) ((b.get(0) & ~DdpHeader.DV_MASK) | (r.nextBoolean() ? 0 : 2 + r.nextInt(2))));
                expected = tagged ? TermCode.DDP_TAGGED_INVALID_VERSION : TermCode.DDP_UNTAGGED_INVALID_VERSION;
            }
            case STAG_UNKNOWN -> {
                int stag;
                do {
                    stag = r.nextInt();
                } while (stag == f.mr.stag() || stag == f.foreign.stag());
                b.putInt(DdpHeader.STAG_OFFSET, stag);
                expected = TermCode.DDP_TAGGED_INVALID_STAG;
            }
            case STAG_FOREIGN -> {
                b.putInt(DdpHeader.STAG_OFFSET, f.foreign.stag());
                expected = TermCode.DDP_TAGGED_STAG_NOT_ASSOCIATED;
            }
            case TO_BELOW -> {
                b.putLong(DdpHeader.TO_OFFSET, f.base - 1 - r.nextInt(1 << 20));
                expected = TermCode.DDP_TAGGED_BASE_BOUNDS;
            }
            case TO_BEYOND -> {
                b.putLong(DdpHeader.TO_OFFSET, f.base + size - s.payload() + 1 + r.nextInt(1 << 20));
                expected = TermCode.DDP_TAGGED_BASE_BOUNDS;
            }
            case TO_WRAP -> {
                b.putLong(DdpHeader.TO_OFFSET, -1 - r.nextInt(Math.max(1, s.payload() - 1)));
                expected = TermCode.DDP_TAGGED_TO_WRAP;
            }
            case QN -> {
                b.putInt(DdpHeader.QN_OFFSET, 1 + r.nextInt(Integer.MAX_VALUE));
                expected = TermCode.DDP_UNTAGGED_INVALID_QN;
            }
            case MSN_PAST -> {
                b.putInt(DdpHeader.MSN_OFFSET, -r.nextInt(1000));
                expected = TermCode.DDP_UNTAGGED_MSN_RANGE;
            }
            case MSN_FAR -> {
                b.putInt(DdpHeader.MSN_OFFSET, 4 + r.nextInt(1 << 30));
                expected = TermCode.DDP_UNTAGGED_MSN_RANGE;
            }
            case MO_BEYOND -> {
                b.putInt(DdpHeader.MO_OFFSET, size + 1 + r.nextInt(1 << 30));
                expected = TermCode.DDP_UNTAGGED_INVALID_MO;
            }
            default -> {
                // MO inside the buffer, MO + length past its end (needs two payload bytes).
                int p = s.payload();
                b.putInt(DdpHeader.MO_OFFSET, p < 2 ? size : size - p + 1 + r.nextInt(p - 1));
                expected = p < 2 ? TermCode.DDP_UNTAGGED_INVALID_MO : TermCode.DDP_UNTAGGED_MESSAGE_TOO_LONG;
            }
        }
        for (int i = 0; i < bad; i++) {
            DdpTestSupport.feed(f.rx, segs.get(i));
        }
        byte[] region = DdpTestSupport.snapshot(f.regionMem);
        byte[] rq = DdpTestSupport.snapshot(f.rqMem);
        DdpTestSupport.feed(f.rx, s);
        assertEquals(List.of(expected), f.ulp.errors, kind::name);
        for (int i = bad + 1; i < segs.size(); i++) {
            DdpTestSupport.feed(f.rx, segs.get(i));
        }
        assertEquals(1, f.ulp.errors.size());
        assertArrayEquals(region, DdpTestSupport.snapshot(f.regionMem), "no byte placed at or after the error");
        assertArrayEquals(rq, DdpTestSupport.snapshot(f.rqMem), "no byte placed at or after the error");
        assertTrue(f.ulp.untagged.isEmpty());
        assertGuards(f.regionMem);
        assertGuards(f.rqMem);
    }

    @Property(tries = 500)
    @Label("DDP receiver fuzz: random segments never throw and never write outside registered ranges")
    void fuzzNeverThrowsNorStrays(@ForAll byte[] noise, @ForAll boolean tagged, @ForAll long seed) {
        Random r = new Random(seed);
        Fixture f = new Fixture(512, 512, 2, 0);
        ByteBuffer seg = ByteBuffer.allocateDirect(Math.max(1, noise.length + 18));
        seg.put(0, noise);
        // Bias towards plausible headers: keep the fuzz bytes but often fix T/DV, STag or QN.
        if (noise.length > 0 && r.nextBoolean()) {
            seg.put(0, (byte) ((tagged ? 0x80 : 0) | (r.nextBoolean() ? 0x40 : 0) | 1));
            if (tagged && r.nextBoolean()) {
                seg.putInt(DdpHeader.STAG_OFFSET, f.mr.stag());
            }
            if (!tagged && r.nextBoolean()) {
                seg.putInt(DdpHeader.QN_OFFSET, 0);
                seg.putInt(DdpHeader.MSN_OFFSET, 1 + r.nextInt(2));
            }
        }
        int len = r.nextInt(seg.capacity() + 1);
        f.rx.receive(seg, 0, len);
        assertTrue(f.ulp.errors.size() <= 1);
        assertGuards(f.regionMem);
        assertGuards(f.rqMem);
    }
}
