package org.jwarp.ddp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.jwarp.ddp.DdpTestSupport.feed;
import static org.jwarp.ddp.DdpTestSupport.snapshot;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.jwarp.ddp.DdpTestSupport.Recorder;
import org.jwarp.ddp.DdpTestSupport.Segment;
import org.jwarp.memory.StagAccess;
import org.jwarp.memory.StagRegion;
import org.jwarp.memory.StagDomain;
import org.jwarp.memory.StagTable;
import org.jwarp.ground.TermCode;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class DdpReceiverTest {
    static final int GUARD = 64;
    static final int SIZE = 256;
    static final long BASE = 0x1000;

    StagDomain pd;
    StagTable stags;
    ByteBuffer regionMem;
    StagRegion mr;
    ByteBuffer rqMem;
    Recorder ulp;
    DdpReceiver rx;

    @BeforeEach
    void setUp() {
        pd = new StagDomain();
        stags = new StagTable(16);
        regionMem = DdpTestSupport.guarded(SIZE, GUARD);
        mr = stags.register(pd, regionMem, GUARD, SIZE, BASE, StagAccess.REMOTE_WRITE | StagAccess.REMOTE_READ);
        rqMem = DdpTestSupport.guarded(4 * SIZE, GUARD);
        ulp = new Recorder();
        rx = new DdpReceiver(pd, stags, new int[] {4, 2, 1}, ulp);
    }

    static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + seed);
        }
        return b;
    }

    void postRq(int count) {
        for (int i = 0; i < count; i++) {
            rx.postUntagged(0, rqMem, GUARD + i * SIZE, SIZE, 100 + i);
        }
    }

    void assertRejected(TermCode code, Segment seg) {
        byte[] regionBefore = snapshot(regionMem);
        byte[] rqBefore = snapshot(rqMem);
        feed(rx, seg);
        assertEquals(List.of(code), ulp.errors);
        assertArrayEquals(regionBefore, snapshot(regionMem), "nothing placed into the region");
        assertArrayEquals(rqBefore, snapshot(rqMem), "nothing placed into untagged buffers");
        assertTrue(rx.failed());
    }

    @Test
    @DisplayName("RFC 5041 §5.3: scatter lists only where the queue allows them; single-piece queues take one piece per buffer")
    void perQueuePieceLimits_5041_5_3() {
        DdpReceiver r = new DdpReceiver(pd, stags, new int[] {4, 2, 1}, ulp, DdpReceiver.DEFAULT_OUT_OF_ORDER_RANGES,
                new int[] {3, 1, 1});
        ByteBuffer b = ByteBuffer.allocate(64);
        ByteBuffer[] bufs = {b, b, b};
        int[] offs = {0, 16, 32};
        int[] lens = {16, 16, 16};
        r.postUntagged(0, bufs, offs, lens, 3, 1); // the Send queue: three pieces
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> r.postUntagged(1, bufs, offs, lens, 2, 2));
        assertTrue(e.getMessage().contains("1..1"), e.getMessage());
        r.postUntagged(1, b, 0, 28, 3); // a Read Request slot: one piece
        assertEquals(1, r.postedCount(0));
        assertEquals(1, r.postedCount(1));
        assertThrows(IllegalArgumentException.class, () -> new DdpReceiver(pd, stags, new int[] {4, 2, 1}, ulp,
                DdpReceiver.DEFAULT_OUT_OF_ORDER_RANGES, new int[] {3, 1}));
    }

    @Test
    @DisplayName("RFC 5041 §5.1/§5.2: a tagged message is placed at TO - base of the STag's buffer")
    void taggedPlacement_5041_5_2() {
        byte[] msg = bytes(200, 1);
        for (Segment s : DdpTestSupport.tagged(msg, 64, 0x40, mr.stag(), BASE + 16)) {
            feed(rx, s);
        }
        byte[] got = new byte[200];
        regionMem.get(GUARD + 16, got);
        assertArrayEquals(msg, got);
        assertEquals(1, ulp.taggedMsgs.size());
        assertEquals(200, ulp.taggedMsgs.get(0)[2], "ULP message length delivered");
        assertEquals(0x40, ulp.taggedMsgs.get(0)[0], "RsvdULP of the last segment delivered");
        assertTrue(ulp.errors.isEmpty());
    }

    @Test
    @DisplayName("RFC 5041 §7.1/§7.2: unknown STag is 1/0 and nothing is placed")
    void invalidStag_5041_7_1() {
        assertRejected(TermCode.DDP_TAGGED_INVALID_STAG,
                DdpTestSupport.tagged(bytes(10, 0), 100, 0, mr.stag() + 1, BASE).get(0));
    }

    @Test
    @DisplayName("RFC 5041 §8.2/§7.2: an STag of another protection domain is 1/2")
    void stagNotAssociated_5041_8_2() {
        StagRegion other = stags.register(new StagDomain(), regionMem, GUARD, SIZE, BASE, StagAccess.ALL);
        assertRejected(TermCode.DDP_TAGGED_STAG_NOT_ASSOCIATED,
                DdpTestSupport.tagged(bytes(10, 0), 100, 0, other.stag(), BASE).get(0));
    }

    @Test
    @DisplayName("RFC 5041 §8.2/§8.3.1: an STag bound to another DDP stream of the same PD is 1/2, its own stream places")
    void stagBoundToAnotherStreamIsNotAssociated_5041_8_2() {
        Object mine = new Object();
        mr.bindStream(mine);
        rx.streamKey(mine);
        feed(rx, DdpTestSupport.tagged(bytes(10, 1), 100, 0, mr.stag(), BASE).get(0));
        assertTrue(ulp.errors.isEmpty(), "the bound stream places: " + ulp.errors);
        DdpReceiver other = new DdpReceiver(pd, stags, new int[] {4, 2, 1}, ulp);
        other.streamKey(new Object());
        byte[] before = snapshot(regionMem);
        other.receive(DdpTestSupport.tagged(bytes(10, 2), 100, 0, mr.stag(), BASE).get(0).bytes(), 0,
                DdpHeader.TAGGED_HEADER_LENGTH + 10);
        assertEquals(List.of(TermCode.DDP_TAGGED_STAG_NOT_ASSOCIATED), ulp.errors);
        assertArrayEquals(before, snapshot(regionMem), "nothing placed by the other stream");
        mr.bindStream(null);
        DdpReceiver third = new DdpReceiver(pd, stags, new int[] {4, 2, 1}, ulp);
        third.receive(DdpTestSupport.tagged(bytes(10, 3), 100, 0, mr.stag(), BASE).get(0).bytes(), 0,
                DdpHeader.TAGGED_HEADER_LENGTH + 10);
        assertEquals(1, ulp.errors.size(), "unbound again: any stream of the PD places");
    }

    @Test
    @DisplayName("RFC 5041 §7.1/§7.2: TO below base is a base/bounds violation 1/1")
    void toBelowBase_5041_7_1() {
        assertRejected(TermCode.DDP_TAGGED_BASE_BOUNDS,
                DdpTestSupport.tagged(bytes(10, 0), 100, 0, mr.stag(), BASE - 1).get(0));
    }

    @Test
    @DisplayName("RFC 5041 §7.1/§7.2: TO + length past the end is a base/bounds violation 1/1")
    void toPlusLengthBeyondBound_5041_7_1() {
        assertRejected(TermCode.DDP_TAGGED_BASE_BOUNDS,
                DdpTestSupport.tagged(bytes(10, 0), 100, 0, mr.stag(), BASE + SIZE - 9).get(0));
    }

    @Test
    @DisplayName("RFC 5041 §7.1/§7.2: a 64-bit TO + length that wraps is 1/3")
    void toWrap_5041_7_1() {
        StagRegion top = stags.register(pd, regionMem, GUARD, SIZE, -SIZE, StagAccess.REMOTE_WRITE);
        assertRejected(TermCode.DDP_TAGGED_TO_WRAP,
                DdpTestSupport.tagged(bytes(32, 0), 100, 0, top.stag(), -16).get(0));
    }

    @Test
    @DisplayName("RFC 5041 §7.1: the last byte of a region is writable, one past is not")
    void exactBounds_5041_7_1() {
        feed(rx, DdpTestSupport.tagged(bytes(10, 3), 100, 0, mr.stag(), BASE + SIZE - 10).get(0));
        assertTrue(ulp.errors.isEmpty());
        assertEquals((byte) 0xEE, regionMem.get(GUARD + SIZE), "guard after the region untouched");
    }

    @Test
    @DisplayName("RFC 5040 §4.8: a missing access right is RDMAP 0/1/2")
    void accessRightsViolation_5040_4_8() {
        ulp.requiredAccess = StagAccess.LOCAL_WRITE;
        assertRejected(TermCode.RDMAP_ACCESS_VIOLATION,
                DdpTestSupport.tagged(bytes(10, 0), 100, 0, mr.stag(), BASE).get(0));
    }

    @Test
    @DisplayName("RFC 5041 §8.3: an invalidated STag is rejected at once (1/0)")
    void revocationIsImmediate_5041_8_3() {
        feed(rx, DdpTestSupport.tagged(bytes(10, 0), 100, 0, mr.stag(), BASE).get(0));
        assertTrue(ulp.errors.isEmpty());
        assertTrue(stags.invalidate(mr.stag(), pd));
        assertRejected(TermCode.DDP_TAGGED_INVALID_STAG,
                DdpTestSupport.tagged(bytes(10, 9), 100, 0, mr.stag(), BASE + 20).get(0));
    }

    @Test
    @DisplayName("RFC 5041 §8.3.1 (6): a region revoked while its segment is placed directly is 1/0, reported with that segment")
    void revocationDuringDirectPlacementNamesTheSegment_5041_8_3() {
        ByteBuffer seg = DdpTestSupport.tagged(bytes(10, 0), 100, 0, mr.stag(), BASE).get(0).bytes();
        assertTrue(rx.beginDirect(seg, 0, seg.capacity()));
        assertTrue(stags.invalidate(mr.stag(), pd));
        assertFalse(rx.placeDirect(seg, DdpHeader.TAGGED_HEADER_LENGTH, 10));
        assertEquals(List.of(TermCode.DDP_TAGGED_INVALID_STAG), ulp.errors);
        assertSame(seg, ulp.errorSegment);
    }

    @Test
    @DisplayName("RFC 5041 §8.3: a deregistered STag and a reused slot's old key never validate")
    void deregisteredStagNeverValidates_5041_8_3() {
        int old = mr.stag();
        assertTrue(stags.deregister(old));
        StagRegion again = null;
        for (int i = 0; i < 20 && (again == null || (again.stag() >>> 8) != (old >>> 8)); i++) {
            again = stags.register(pd, regionMem, GUARD, SIZE, BASE, StagAccess.REMOTE_WRITE);
        }
        assertTrue(again.stag() != old);
        assertRejected(TermCode.DDP_TAGGED_INVALID_STAG, DdpTestSupport.tagged(bytes(4, 0), 100, 0, old, BASE).get(0));
    }

    @Test
    @DisplayName("RFC 5041 §4.1/§7.2: a tagged segment with DV != 1 is 1/4")
    void taggedInvalidVersion_5041_4_1() {
        Segment s = DdpTestSupport.tagged(bytes(10, 0), 100, 0, mr.stag(), BASE).get(0);
        s.bytes().put(0, (byte) (s.bytes().get(0) & ~DdpHeader.DV_MASK | 2));
        assertRejected(TermCode.DDP_TAGGED_INVALID_VERSION, s);
    }

    @Test
    @DisplayName("RFC 5041 §4.1/§7.2: an untagged segment with DV != 1 is 2/6")
    void untaggedInvalidVersion_5041_4_1() {
        postRq(1);
        Segment s = DdpTestSupport.untagged(bytes(10, 0), 100, 0, 0, 0, 1).get(0);
        s.bytes().put(0, (byte) (s.bytes().get(0) & ~DdpHeader.DV_MASK));
        assertRejected(TermCode.DDP_UNTAGGED_INVALID_VERSION, s);
    }

    @Test
    @DisplayName("RFC 5041 §4.1: reserved control bits are ignored on receive")
    void reservedBitsIgnored_5041_4_1() {
        postRq(1);
        Segment s = DdpTestSupport.untagged(bytes(10, 0), 100, 0, 0, 0, 1).get(0);
        s.bytes().put(0, (byte) (s.bytes().get(0) | DdpHeader.RSVD_MASK));
        feed(rx, s);
        assertTrue(ulp.errors.isEmpty());
        assertEquals(1, ulp.untagged.size());
    }

    @Test
    @DisplayName("RFC 5041 §7.1/§7.2: an invalid QN is 2/1")
    void invalidQn_5041_7_1() {
        postRq(1);
        assertRejected(TermCode.DDP_UNTAGGED_INVALID_QN, DdpTestSupport.untagged(bytes(10, 0), 100, 0, 0, 3, 1).get(0));
    }

    @Test
    @DisplayName("RFC 5041 §7.1/§7.2: QN 0xFFFFFFFF (unsigned) is 2/1")
    void hugeQn_5041_7_1() {
        assertRejected(TermCode.DDP_UNTAGGED_INVALID_QN, DdpTestSupport.untagged(bytes(1, 0), 100, 0, 0, -1, 1).get(0));
    }

    @Test
    @DisplayName("RFC 5041 §7.1/§7.2: the next MSN with no buffer posted is 2/2")
    void msnNoBuffer_5041_7_1() {
        assertRejected(TermCode.DDP_UNTAGGED_MSN_NO_BUFFER,
                DdpTestSupport.untagged(bytes(10, 0), 100, 0, 0, 0, 1).get(0));
    }

    @Test
    @DisplayName("RFC 5041 §7.1/§7.2: an MSN beyond the posted buffers is 2/3")
    void msnBeyondRange_5041_7_1() {
        postRq(2);
        assertRejected(TermCode.DDP_UNTAGGED_MSN_RANGE, DdpTestSupport.untagged(bytes(10, 0), 100, 0, 0, 0, 4).get(0));
    }

    @Test
    @DisplayName("RFC 5041 §4.3/§7.2: MSN 0 (before the first MSN 1) is 2/3")
    void msnBeforeFirst_5041_4_3() {
        postRq(2);
        assertRejected(TermCode.DDP_UNTAGGED_MSN_RANGE, DdpTestSupport.untagged(bytes(10, 0), 100, 0, 0, 0, 0).get(0));
    }

    @Test
    @DisplayName("RFC 5041 §7.1/§7.2: MO past the buffer is 2/4")
    void invalidMo_5041_7_1() {
        postRq(1);
        Segment s = DdpTestSupport.untagged(bytes(10, 0), 100, 0, 0, 0, 1).get(0);
        s.bytes().putInt(DdpHeader.MO_OFFSET, SIZE + 4);
        assertRejected(TermCode.DDP_UNTAGGED_INVALID_MO, s);
    }

    @Test
    @DisplayName("RFC 5041 §7.1/§7.2: MO + length past the buffer is 2/5 (message too long)")
    void messageTooLong_5041_7_1() {
        postRq(1);
        List<Segment> segs = DdpTestSupport.untagged(bytes(SIZE + 1, 0), 100, 0, 0, 0, 1);
        byte[] before = snapshot(rqMem);
        for (int i = 0; i < segs.size() - 1; i++) {
            feed(rx, segs.get(i));
        }
        assertTrue(ulp.errors.isEmpty());
        feed(rx, segs.get(segs.size() - 1));
        assertEquals(List.of(TermCode.DDP_UNTAGGED_MESSAGE_TOO_LONG), ulp.errors);
        assertEquals(before[GUARD + SIZE], rqMem.get(GUARD + SIZE), "byte past the buffer untouched");
        assertTrue(ulp.untagged.isEmpty());
    }

    @Test
    @DisplayName("RFC 5041 §7.1: after an error every later segment is dropped silently")
    void laterSegmentsDroppedSilently_5041_7_1() {
        postRq(2);
        feed(rx, DdpTestSupport.untagged(bytes(10, 0), 100, 0, 0, 7, 1).get(0));
        assertEquals(1, ulp.errors.size());
        byte[] region = snapshot(regionMem);
        byte[] rq = snapshot(rqMem);
        feed(rx, DdpTestSupport.untagged(bytes(10, 0), 100, 0, 0, 0, 1).get(0));
        feed(rx, DdpTestSupport.tagged(bytes(10, 0), 100, 0, mr.stag(), BASE).get(0));
        feed(rx, DdpTestSupport.tagged(bytes(10, 0), 100, 0, 12345, BASE).get(0));
        assertEquals(1, ulp.errors.size(), "no second error report");
        assertTrue(ulp.untagged.isEmpty());
        assertTrue(ulp.taggedMsgs.isEmpty());
        assertArrayEquals(region, snapshot(regionMem));
        assertArrayEquals(rq, snapshot(rqMem));
    }

    @Test
    @DisplayName("RFC 5041 §7.1: zero-length tagged segments are not checked against the STag")
    void zeroLengthTaggedNotChecked_5041_7_1() {
        feed(rx, DdpTestSupport.tagged(new byte[0], 100, 0x40, 1, 0).get(0));
        assertTrue(ulp.errors.isEmpty());
        assertEquals(1, ulp.taggedMsgs.size());
        assertEquals(0, ulp.taggedMsgs.get(0)[2]);
    }

    @Test
    @DisplayName("RFC 5041 §5.2: a zero-length untagged message consumes one buffer and its MSN")
    void zeroLengthUntagged_5041_5_2() {
        postRq(2);
        feed(rx, DdpTestSupport.untagged(new byte[0], 100, 0x43, 0, 0, 1).get(0));
        feed(rx, DdpTestSupport.untagged(bytes(5, 0), 100, 0x43, 0, 0, 2).get(0));
        assertTrue(ulp.errors.isEmpty());
        assertEquals(2, ulp.untagged.size());
        assertEquals(0, ulp.untagged.get(0)[5]);
        assertEquals(100, ulp.untagged.get(0)[4]);
        assertEquals(5, ulp.untagged.get(1)[5]);
        assertEquals(101, ulp.untagged.get(1)[4]);
    }

    @Test
    @DisplayName("RFC 5041 §5.2/§5.4: segments placed out of order, message delivered once when complete")
    void outOfOrderPlacement_5041_5_2() {
        postRq(1);
        byte[] msg = bytes(250, 5);
        List<Segment> segs = new ArrayList<>(DdpTestSupport.untagged(msg, 40, 0x45, 0x77, 0, 1));
        Collections.reverse(segs);
        for (int i = 0; i < segs.size(); i++) {
            assertTrue(ulp.untagged.isEmpty(), "not delivered before every segment is placed");
            feed(rx, segs.get(i));
        }
        assertEquals(1, ulp.untagged.size());
        long[] d = ulp.untagged.get(0);
        assertEquals(250, d[5], "ULP message length");
        assertEquals(0x45, d[2], "RsvdULP (8)");
        assertEquals(0x77, d[3], "RsvdULP (32)");
        byte[] got = new byte[250];
        rqMem.get(GUARD, got);
        assertArrayEquals(msg, got);
    }

    @Test
    @DisplayName("RFC 5041 §5.3: messages are delivered in MSN order even if a later one completes first")
    void inOrderDelivery_5041_5_3() {
        postRq(3);
        List<Segment> m1 = DdpTestSupport.untagged(bytes(100, 1), 50, 0, 0, 0, 1);
        List<Segment> m2 = DdpTestSupport.untagged(bytes(10, 2), 50, 0, 0, 0, 2);
        List<Segment> m3 = DdpTestSupport.untagged(bytes(10, 3), 50, 0, 0, 0, 3);
        feed(rx, m3.get(0));
        feed(rx, m2.get(0));
        feed(rx, m1.get(1));
        assertTrue(ulp.untagged.isEmpty());
        for (int i = 2; i < m1.size(); i++) {
            feed(rx, m1.get(i));
        }
        assertTrue(ulp.untagged.isEmpty(), "MSN 1 incomplete: nothing delivered");
        feed(rx, m1.get(0));
        assertEquals(3, ulp.untagged.size());
        for (int i = 0; i < 3; i++) {
            assertEquals(i + 1, ulp.untagged.get(i)[1], "delivered in MSN order");
        }
    }

    @Test
    @DisplayName("RFC 5041 §5.4: a message is delivered at most once; a replayed segment is an MSN range error")
    void atMostOnce_5041_5_4() {
        postRq(2);
        Segment s = DdpTestSupport.untagged(bytes(10, 0), 100, 0, 0, 0, 1).get(0);
        feed(rx, s);
        assertEquals(1, ulp.untagged.size());
        feed(rx, s.copy());
        assertEquals(1, ulp.untagged.size());
        assertEquals(List.of(TermCode.DDP_UNTAGGED_MSN_RANGE), ulp.errors);
    }

    @Test
    @DisplayName("RFC 5041 §5.4: a duplicate segment is not counted twice, so a message with a hole is never delivered")
    void duplicateSegmentCannotCompleteMessageWithHole_5041_5_4() {
        postRq(1);
        byte[] msg = bytes(66, 9);
        List<Segment> segs = DdpTestSupport.untagged(msg, 40, 0, 0, 0, 1); // 3 segments of 22 bytes
        assertEquals(3, segs.size());
        feed(rx, segs.get(0));
        feed(rx, segs.get(0).copy()); // same MSN/MO range again
        feed(rx, segs.get(2));
        assertTrue(ulp.untagged.isEmpty(), "bytes [22, 44) were never placed: no delivery (RFC 5041 §5.4)");
        feed(rx, segs.get(1));
        assertEquals(1, ulp.untagged.size(), "delivered once every byte is placed");
        assertTrue(ulp.errors.isEmpty(), () -> "errors " + ulp.errors);
        byte[] got = new byte[msg.length];
        rqMem.get(GUARD, got);
        assertArrayEquals(msg, got);
    }

    @Test
    @DisplayName("RFC 5041 §5.2/§5.4: overlapping re-sends and an exact duplicate L segment count each byte once")
    void overlapsAndDuplicateLastSegmentCountOnce_5041_5_4() {
        postRq(2);
        byte[] msg = bytes(100, 4);
        feed(rx, DdpTestSupport.untaggedSegment(msg, 60, 40, true, 0x11, 0x22, 0, 1));
        feed(rx, DdpTestSupport.untaggedSegment(msg, 60, 40, true, 0x11, 0x22, 0, 1));
        feed(rx, DdpTestSupport.untaggedSegment(msg, 10, 30, false, 0, 0, 0, 1));
        feed(rx, DdpTestSupport.untaggedSegment(msg, 20, 45, false, 0, 0, 0, 1)); // overlaps both neighbours
        assertTrue(ulp.untagged.isEmpty(), "bytes [0, 10) missing (placed 10+30+... would exceed 100 if summed)");
        assertTrue(ulp.errors.isEmpty(), () -> "errors " + ulp.errors);
        feed(rx, DdpTestSupport.untaggedSegment(msg, 0, 10, false, 0, 0, 0, 1));
        assertEquals(1, ulp.untagged.size());
        assertEquals(100, ulp.untagged.get(0)[5]);
        assertEquals(0x11, ulp.untagged.get(0)[2], "RsvdULP of the L segment");
        byte[] got = new byte[msg.length];
        rqMem.get(GUARD, got);
        assertArrayEquals(msg, got);
    }

    @Test
    @DisplayName("RFC 5041 §4.1/§7.2: a second L segment with another end is 2/4 (invalid MO)")
    void secondLastSegmentWithOtherEnd_5041_7_2() {
        postRq(1);
        byte[] msg = bytes(100, 4);
        feed(rx, DdpTestSupport.untaggedSegment(msg, 60, 40, true, 0, 0, 0, 1));
        assertRejected(TermCode.DDP_UNTAGGED_INVALID_MO, DdpTestSupport.untaggedSegment(msg, 30, 20, true, 0, 0, 0, 1));
    }

    @Test
    @DisplayName("RFC 5041 §7.2: more out-of-order holes than a buffer tracks is local catastrophic 0/0, nothing placed")
    void outOfOrderRangeBound_5041_7_2() {
        rx = new DdpReceiver(pd, stags, new int[] {4, 2, 1}, ulp, 2);
        postRq(1);
        byte[] msg = bytes(200, 3);
        feed(rx, DdpTestSupport.untaggedSegment(msg, 20, 10, false, 0, 0, 0, 1));
        feed(rx, DdpTestSupport.untaggedSegment(msg, 60, 10, false, 0, 0, 0, 1));
        feed(rx, DdpTestSupport.untaggedSegment(msg, 30, 10, false, 0, 0, 0, 1)); // joins the first range
        assertTrue(ulp.errors.isEmpty());
        assertRejected(TermCode.DDP_LOCAL_CATASTROPHIC, DdpTestSupport.untaggedSegment(msg, 100, 10, false, 0, 0, 0, 1));
    }

    @Test
    @DisplayName("RFC 5041 §5.2: coverage ranges merge, absorb into the in-order mark, and never double count")
    void coverageRangesMerge_5041_5_2() {
        UntaggedQueue q = new UntaggedQueue(1, 3);
        q.post(ByteBuffer.allocate(100), 0, 100, 0);
        assertTrue(q.cover(0, 50, 60));
        assertTrue(q.cover(0, 70, 80));
        assertTrue(q.cover(0, 90, 95));
        assertEquals(3, q.rangeCount(0));
        assertTrue(q.cover(0, 55, 72), "bridges two ranges");
        assertEquals(2, q.rangeCount(0));
        assertTrue(q.cover(0, 80, 90), "adjacent on both sides");
        assertEquals(1, q.rangeCount(0));
        assertTrue(q.cover(0, 0, 10));
        assertEquals(10, q.inOrder[0]);
        assertTrue(q.cover(0, 5, 50), "reaches the range: absorbed into the in-order mark");
        assertEquals(95, q.inOrder[0]);
        assertEquals(0, q.rangeCount(0));
        assertTrue(q.cover(0, 0, 95), "a pure duplicate");
        assertEquals(95, q.inOrder[0]);
        q.total[0] = 100;
        assertTrue(!q.headComplete());
        assertTrue(q.cover(0, 95, 100));
        assertTrue(q.headComplete());
    }

    @Test
    @DisplayName("RFC 5041 §4.4: a segment shorter than its header is DDP catastrophic 1/0/0")
    void truncatedSegment_5041_4_4() {
        ByteBuffer b = ByteBuffer.allocateDirect(10);
        new DdpHeader().wrap(b, 0);
        b.put(0, (byte) 0xC1);
        rx.receive(b, 0, 10);
        assertEquals(List.of(TermCode.DDP_LOCAL_CATASTROPHIC), ulp.errors);
    }

    @Test
    @DisplayName("RFC 5041 §4.3: MSN wraps modulo 2^32 on a queue")
    void msnWraps_5041_4_3() {
        // Delivering 2^32 - 1 messages is infeasible; start a queue just before the wrap instead.
        UntaggedQueue q = new UntaggedQueue(2, -1, 1);
        q.post(ByteBuffer.allocateDirect(1), 0, 1, 1);
        q.post(ByteBuffer.allocateDirect(1), 0, 1, 2);
        assertEquals(q.head(), q.slotFor(-1));
        assertTrue(q.slotFor(0) >= 0, "MSN 0 follows 0xFFFFFFFF");
        assertEquals(UntaggedQueue.NO_BUFFER, q.slotFor(1));
    }
}
