package org.jwarp.ddp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.jwarp.ddp.DdpTestSupport.Recorder;
import org.jwarp.ddp.DdpTestSupport.Segment;
import org.jwarp.memory.StagAccess;
import org.jwarp.memory.StagRegion;
import org.jwarp.memory.StagDomain;
import org.jwarp.memory.StagTable;
import org.jwarp.ground.TermCode;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** RFC 5041 §§4–7 rules not already pinned by the other DDP tests, one test per rule. */
class Rfc5041ConformanceTest {
    static final int GUARD = 32;
    static final int SIZE = 512;

    StagDomain pd;
    StagTable stags;
    ByteBuffer rqMem;
    ByteBuffer regionMem;
    StagRegion mr;
    Recorder ulp;
    DdpReceiver rx;

    @BeforeEach
    void setUp() {
        pd = new StagDomain();
        stags = new StagTable(8);
        rqMem = DdpTestSupport.guarded(2 * SIZE, GUARD);
        regionMem = DdpTestSupport.guarded(SIZE, GUARD);
        mr = stags.register(pd, regionMem, GUARD, SIZE, 0x8000, StagAccess.REMOTE_WRITE);
        ulp = new Recorder();
        rx = new DdpReceiver(pd, stags, new int[] {2}, ulp);
    }

    static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 7 + seed);
        }
        return b;
    }

    @Test
    void rsvdUlpAndLengthDelivered_5041_5_4() {
        rx.postUntagged(0, rqMem, GUARD, SIZE, 77);
        byte[] msg = bytes(300, 3);
        for (Segment s : DdpTestSupport.untagged(msg, 100, 0x43, 0xCAFEBABE, 0, 1)) {
            DdpTestSupport.feed(rx, s);
        }
        assertEquals(1, ulp.untagged.size());
        long[] u = ulp.untagged.get(0);
        assertEquals(0, u[0], "QN");
        assertEquals(1, u[1], "MSN");
        assertEquals(0x43, u[2], "8-bit RsvdULP");
        assertEquals(0xCAFEBABE, (int) u[3], "32-bit RsvdULP");
        assertEquals(77, u[4], "the buffer's cookie");
        assertEquals(300, u[5], "ULP message length");
        byte[] placed = new byte[300];
        rqMem.get(GUARD, placed);
        assertArrayEquals(msg, placed);

        for (Segment s : DdpTestSupport.tagged(bytes(200, 4), 60, 0x40, mr.stag(), 0x8010)) {
            DdpTestSupport.feed(rx, s);
        }
        assertEquals(1, ulp.taggedMsgs.size());
        long[] t = ulp.taggedMsgs.get(0);
        assertEquals(0x40, t[0], "RsvdULP of the tagged message");
        assertEquals(mr.stag(), (int) t[1]);
        assertEquals(200, t[2], "tagged message length");
        assertTrue(ulp.errors.isEmpty());
    }

    @Test
    void noPlacementAfterDelivery_5041_5_4() {
        rx.postUntagged(0, rqMem, GUARD, SIZE, 1);
        rx.postUntagged(0, rqMem, GUARD + SIZE, SIZE, 2);
        List<Segment> first = DdpTestSupport.untagged(bytes(50, 5), 1000, 0, 0, 0, 1);
        DdpTestSupport.feed(rx, first.get(0));
        assertEquals(1, ulp.untagged.size());
        byte[] before = DdpTestSupport.snapshot(rqMem);
        // The same MSN again, with other bytes: its buffer was delivered and must not change.
        DdpTestSupport.feed(rx, DdpTestSupport.untagged(bytes(50, 99), 1000, 0, 0, 0, 1).get(0));
        assertEquals(List.of(TermCode.DDP_UNTAGGED_MSN_RANGE), ulp.errors);
        assertArrayEquals(before, DdpTestSupport.snapshot(rqMem), "neither the delivered nor the next buffer changed");
        assertEquals(1, ulp.untagged.size(), "delivered once");
    }

    @Test
    void errorReportCarriesOffendingSegment_5041_7_1() {
        List<byte[]> reported = new ArrayList<>();
        List<TermCode> codes = new ArrayList<>();
        DdpReceiveHandler h = new DdpReceiveHandler() {
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
            }

            @Override
            public void onUntaggedMessage(int qn, int msn, int rsvdUlp, int rsvdUlp32, long cookie, ByteBuffer buffer,
                    int offset, int length) {
            }

            @Override
            public void onError(TermCode code, ByteBuffer segment, int index, int length) {
                codes.add(code);
                byte[] b = new byte[length];
                segment.get(index, b);
                reported.add(b);
            }
        };
        DdpReceiver r = new DdpReceiver(pd, stags, new int[] {1}, h);
        // The bad segment sits inside a larger buffer at an offset, as it does inside an FPDU.
        Segment bad = DdpTestSupport.tagged(bytes(20, 6), 1000, 0, mr.stag(), 0x8000 + SIZE - 10).get(0);
        ByteBuffer big = ByteBuffer.allocateDirect(bad.length() + 10);
        big.put(5, bad.bytes(), 0, bad.length());
        r.receive(big, 5, bad.length());
        assertEquals(List.of(TermCode.DDP_TAGGED_BASE_BOUNDS), codes);
        assertArrayEquals(DdpTestSupport.snapshot(bad.bytes()), reported.get(0), "the whole offending segment");
    }

    @Test
    void ulpDetectedErrorStopsPlacement_5041_7_1() {
        rx.postUntagged(0, rqMem, GUARD, SIZE, 1);
        rx.fail();
        byte[] before = DdpTestSupport.snapshot(rqMem);
        byte[] regionBefore = DdpTestSupport.snapshot(regionMem);
        DdpTestSupport.feed(rx, DdpTestSupport.untagged(bytes(40, 7), 1000, 0, 0, 0, 1).get(0));
        DdpTestSupport.feed(rx, DdpTestSupport.tagged(bytes(40, 7), 1000, 0, mr.stag(), 0x8000).get(0));
        assertArrayEquals(before, DdpTestSupport.snapshot(rqMem));
        assertArrayEquals(regionBefore, DdpTestSupport.snapshot(regionMem));
        assertTrue(ulp.untagged.isEmpty() && ulp.taggedMsgs.isEmpty());
        assertTrue(ulp.errors.isEmpty(), "dropped silently, no second error");
        assertEquals(0, rx.segmentCount());
    }

    @Test
    void errorNumbersMatchTable_5041_7_2() {
        Object[][] table = {
            {TermCode.DDP_LOCAL_CATASTROPHIC, 0, 0x00},
            {TermCode.DDP_TAGGED_INVALID_STAG, 1, 0x00},
            {TermCode.DDP_TAGGED_BASE_BOUNDS, 1, 0x01},
            {TermCode.DDP_TAGGED_STAG_NOT_ASSOCIATED, 1, 0x02},
            {TermCode.DDP_TAGGED_TO_WRAP, 1, 0x03},
            {TermCode.DDP_TAGGED_INVALID_VERSION, 1, 0x04},
            {TermCode.DDP_UNTAGGED_INVALID_QN, 2, 0x01},
            {TermCode.DDP_UNTAGGED_MSN_NO_BUFFER, 2, 0x02},
            {TermCode.DDP_UNTAGGED_MSN_RANGE, 2, 0x03},
            {TermCode.DDP_UNTAGGED_INVALID_MO, 2, 0x04},
            {TermCode.DDP_UNTAGGED_MESSAGE_TOO_LONG, 2, 0x05},
            {TermCode.DDP_UNTAGGED_INVALID_VERSION, 2, 0x06},
        };
        for (Object[] row : table) {
            TermCode c = (TermCode) row[0];
            int etype = (Integer) row[1];
            int ecode = (Integer) row[2];
            assertEquals(TermCode.LAYER_DDP, c.layer(), c.toString());
            assertEquals(etype, c.etype(), c.toString());
            assertEquals(ecode, c.ecode(), c.toString());
            int word = (1 << 28) | (etype << 24) | (ecode << 16);
            assertEquals(word, c.controlBits(), "Terminate control word of " + c);
            assertEquals(c, TermCode.fromControlWord(word | 0xE000));
            assertFalse(c.isMpa());
        }
    }

    @Property(tries = 2000)
    void headerDecoderOnlyTypedError_5041_4_4(@ForAll @Size(max = 40) byte[] bytes,
            @ForAll @IntRange(min = 0, max = 40) int cut, @ForAll @IntRange(min = 0, max = 3) int at) {
        ByteBuffer b = ByteBuffer.allocateDirect(bytes.length + at);
        b.put(at, bytes);
        int length = Math.max(0, bytes.length - cut);
        DdpHeader h = new DdpHeader();
        try {
            if (length == 0) {
                // nothing to wrap a control byte onto; requireComplete must still answer typed
                h.wrap(ByteBuffer.allocateDirect(0), 0).requireComplete(0);
            } else {
                h.wrap(b, at).requireComplete(length);
            }
        } catch (DdpFormatException expected) {
            assertTrue(expected.getMessage().contains("RFC 5041"), expected.getMessage());
            return;
        }
        assertTrue(length >= h.headerLength());
        h.control();
        h.rsvdUlp();
        h.version();
        if (h.tagged()) {
            h.stag();
            h.to();
        } else {
            h.rsvdUlp32();
            h.qn();
            h.msn();
            h.mo();
        }
    }
}
