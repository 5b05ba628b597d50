package org.jwarp.rdmap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.jwarp.rdmap.RdmapEndpointTest.direct;
import static org.jwarp.rdmap.RdmapEndpointTest.pattern;
import static org.jwarp.rdmap.RdmapEndpointTest.read;

import java.nio.ByteBuffer;
import java.util.List;
import org.jwarp.ddp.DdpHeader;
import org.jwarp.ground.TermCode;
import org.jwarp.memory.StagAccess;
import org.jwarp.memory.StagRegion;
import org.jwarp.mpa.Fpdu;
import org.jwarp.mpa.FpduDecoder;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Direct placement of large segments split across reads (RFC 5041 §7.1 header first, then the
 * payload straight from each read into the target, RFC 5044 §4.4 CRC over it at the end), without
 * a 64 KiB reassembly buffer; its CRC and revocation failures (RFC 5041 §8.3.1 (6)).
 */
class DirectPlacementTest {
    static final int SIZE = 16_000;
    static final RdmapSettings S = RdmapPair.settings(16_384, true, 4, 4);

    /** What A transmits now, as one wire buffer. */
    static ByteBuffer wireOf(RdmapEndpoint from) {
        ByteBuffer w = ByteBuffer.allocateDirect(1 << 20);
        from.transmit(w);
        return w.flip();
    }

    /** Feeds {@code wire[from, to)} to {@code to} in pieces of {@code piece} bytes. */
    static void feed(RdmapEndpoint to, ByteBuffer wire, int from, int end, int piece) {
        for (int at = from; at < end; at += piece) {
            ByteBuffer c = wire.duplicate().position(at).limit(Math.min(end, at + piece)).slice();
            to.receive(c);
        }
    }

    @Test
    @DisplayName("RFC 5041 §7.1: a 16 KB Write, Send and Read Response arriving in 1000-byte reads are placed directly, no 64 KiB gather buffer")
    void splitSegmentsPlacedDirectly_5041_7_1() {
        RdmapPair p = new RdmapPair(S);
        ByteBuffer mem = ByteBuffer.allocateDirect(SIZE);
        StagRegion mr = p.stags.register(p.pdB, mem, 0, SIZE, 0x4000, StagAccess.REMOTE_WRITE | StagAccess.REMOTE_READ);
        byte[] msg = pattern(SIZE, 5);
        p.a.postWrite(1, direct(msg), 0, SIZE, mr.stag(), 0x4000, true);
        ByteBuffer w = wireOf(p.a);
        assertEquals(1, RdmapEndpointTest.ulpdus(bytes(w)).size(), "one FPDU");
        feed(p.b, w, 0, w.limit(), 1000);
        assertArrayEquals(msg, read(mem, 0, SIZE));

        ByteBuffer rq = ByteBuffer.allocateDirect(SIZE);
        p.b.postReceive(9, rq, 0, SIZE);
        byte[] send = pattern(SIZE, 8);
        p.a.postSend(2, RdmapOpcode.SEND, direct(send), 0, SIZE, 0, true);
        w = wireOf(p.a);
        feed(p.b, w, 0, w.limit(), 777);
        assertArrayEquals(send, read(rq, 0, SIZE));
        assertEquals(1, p.evB.receives.size());
        assertEquals(SIZE, p.evB.receives.get(0)[2]);

        ByteBuffer sinkMem = ByteBuffer.allocateDirect(SIZE);
        StagRegion sink = p.stags.register(p.pdA, sinkMem, 0, SIZE, 0, StagAccess.LOCAL_WRITE);
        p.a.postRead(3, sink.stag(), 0, SIZE, mr.stag(), 0x4000, true);
        p.move(p.a, p.b, p.aToB, true);
        w = wireOf(p.b);
        feed(p.a, w, 0, w.limit(), 1000);
        assertArrayEquals(msg, read(sinkMem, 0, SIZE));

        assertTrue(p.evA.localErrors.isEmpty() && p.evB.localErrors.isEmpty());
        assertTrue(p.b.reassemblyBytes() <= FpduDecoder.SMALL_GATHER, "B holds " + p.b.reassemblyBytes()
                + " bytes of reassembly memory");
        assertTrue(p.a.reassemblyBytes() <= FpduDecoder.SMALL_GATHER, "A holds " + p.a.reassemblyBytes());
    }

    @Test
    @DisplayName("RFC 5044 §4.4: a CRC mismatch on a directly placed Send is TERM 2/0/2 and the receive never completes")
    void crcMismatchAfterDirectPlacement_5044_4_4() {
        RdmapPair p = new RdmapPair(S);
        ByteBuffer rq = ByteBuffer.allocateDirect(SIZE);
        p.b.postReceive(9, rq, 0, SIZE);
        p.a.postSend(2, RdmapOpcode.SEND, direct(pattern(SIZE, 8)), 0, SIZE, 0, true);
        ByteBuffer w = wireOf(p.a);
        w.put(5000, (byte) (w.get(5000) ^ 0x10)); // a payload byte, in the third read
        feed(p.b, w, 0, w.limit(), 2000);
        assertEquals(List.of(TermCode.MPA_CRC_ERROR), p.evB.localErrors);
        assertTrue(p.evB.receives.isEmpty(), "no completion for a segment whose CRC failed");
        p.move(p.b, p.a, p.bToA, false);
        assertEquals(TermCode.MPA_CRC_ERROR, p.evA.peerTerms.get(0).code());
    }

    @Test
    @DisplayName("RFC 5041 §8.3.1 (6): a region deregistered while a split Write is placed gets no later piece; TERM 1/0 with the header")
    void deregisteredDuringDirectPlacement_5041_8_3_1() {
        RdmapPair p = new RdmapPair(S);
        ByteBuffer mem = ByteBuffer.allocateDirect(SIZE);
        StagRegion mr = p.stags.register(p.pdB, mem, 0, SIZE, 0, StagAccess.REMOTE_WRITE);
        p.a.postWrite(1, direct(pattern(SIZE, 5)), 0, SIZE, mr.stag(), 0, true);
        ByteBuffer w = wireOf(p.a);
        feed(p.b, w, 0, 3000, 1000);
        assertTrue(p.b.hasPartialInput());
        assertTrue(p.stags.deregister(mr.stag()));
        byte[] after = read(mem, 0, SIZE);
        feed(p.b, w, 3000, w.limit(), 1000);
        assertArrayEquals(after, read(mem, 0, SIZE), "nothing lands after deregistration returned");
        assertEquals(List.of(TermCode.DDP_TAGGED_INVALID_STAG), p.evB.localErrors);
        p.move(p.b, p.a, p.bToA, false);
        TerminateMessage t = p.evA.peerTerms.get(0);
        assertEquals(TermCode.DDP_TAGGED_INVALID_STAG, t.code());
        assertTrue(t.d());
        assertEquals(0xC140, ByteBuffer.wrap(t.ddpHeader()).getShort(0) & 0xFFFF, "the offending header");
        assertEquals(DdpHeader.TAGGED_HEADER_LENGTH + SIZE, t.ddpSegmentLength());
    }

    @Test
    @DisplayName("RFC 5041 §7.1 / RFC 5044 §4.4: a split segment whose header fails a check is CRC-checked first, then rejected")
    void rejectedHeaderStillCrcCheckedFirst_5041_7_1() {
        for (boolean corrupt : new boolean[] {false, true}) {
            RdmapPair p = new RdmapPair(S);
            ByteBuffer mem = ByteBuffer.allocateDirect(SIZE);
            StagRegion mr = p.stags.register(p.pdB, mem, 0, SIZE, 0, StagAccess.REMOTE_WRITE);
            p.a.postWrite(1, direct(pattern(SIZE, 5)), 0, SIZE, mr.stag() + 0x100, 0, true);
            ByteBuffer w = wireOf(p.a);
            if (corrupt) {
                w.put(9000, (byte) (w.get(9000) ^ 1));
            }
            feed(p.b, w, 0, w.limit(), 1000);
            assertEquals(List.of(corrupt ? TermCode.MPA_CRC_ERROR : TermCode.DDP_TAGGED_INVALID_STAG),
                    p.evB.localErrors);
            assertArrayEquals(new byte[SIZE], read(mem, 0, SIZE));
        }
    }

    static byte[] bytes(ByteBuffer b) {
        byte[] a = new byte[b.remaining()];
        b.duplicate().get(a);
        return a;
    }

    static {
        // The segments above are larger than the small gather buffer, so they take the direct path.
        if (Fpdu.fpduLength(SIZE) <= FpduDecoder.SMALL_GATHER) {
            throw new AssertionError("test segments too small");
        }
    }
}
