package org.jwarp.rdmap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.jwarp.rdmap.DirectPlacementTest.feed;
import static org.jwarp.rdmap.DirectPlacementTest.wireOf;
import static org.jwarp.rdmap.RdmapEndpointTest.direct;
import static org.jwarp.rdmap.RdmapEndpointTest.pattern;
import static org.jwarp.rdmap.RdmapEndpointTest.read;

import java.nio.ByteBuffer;
import java.util.List;
import org.jwarp.ground.TermCode;
import org.jwarp.memory.StagAccess;
import org.jwarp.memory.StagRegion;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Reading a large segment's payload straight into the registered buffer once its header is
 * validated (RFC 5041 §7.1): {@link RdmapEndpoint#placement} lends a view of the region under a
 * placement lease, the "socket" (here a copy from the wire) fills it, {@link org.jwarp.mpa.PlacementHandle#directRead}
 * runs the CRC (RFC 5044 §4.4) over the placed bytes and drops the lease; the revocation fence
 * (RFC 5041 §8.3.1 (6)) is re-checked before every such read, for tagged and untagged targets.
 */
class DirectReadTest {
    static final int SIZE = 16_000;

    /**
     * Delivers {@code wire[from, end)} to {@code to} as a socket reader would: into the direct target
     * when there is one (at most {@code piece} bytes per read), else {@code piece} bytes through
     * {@link RdmapEndpoint#receive}. Returns the bytes that went straight into targets.
     */
    static int deliver(RdmapEndpoint to, ByteBuffer wire, int from, int end, int piece) {
        int direct = 0;
        int at = from;
        while (at < end) {
            ByteBuffer t = to.placement().directTarget();
            if (t != null) {
                assertTrue(t.isDirect() && t.remaining() > 0, "a view of the registered buffer");
                int k = Math.min(Math.min(piece, t.remaining()), end - at);
                int pos = t.position();
                t.put(pos, wire, at, k).position(pos + k);
                to.placement().directRead(k);
                at += k;
                direct += k;
            } else {
                int k = Math.min(piece, end - at);
                feed(to, wire, at, at + k, k);
                at += k;
            }
        }
        return direct;
    }

    @Test
    @DisplayName("RFC 5041 §7.1: after the header is validated, a Write's and a Send's payload is read straight into the region; CRC over the placed bytes")
    void payloadReadIntoRegisteredBuffer_5041_7_1() {
        for (boolean crc : new boolean[] {true, false}) {
            RdmapPair p = new RdmapPair(RdmapPair.settings(16_384, crc, 4, 4));
            ByteBuffer mem = ByteBuffer.allocateDirect(SIZE + 64);
            StagRegion mr = p.stags.register(p.pdB, mem, 32, SIZE, 0x4000, StagAccess.REMOTE_WRITE);
            byte[] msg = pattern(SIZE, 3);
            p.a.postWrite(1, direct(msg), 0, SIZE, mr.stag(), 0x4000, true);
            ByteBuffer w = wireOf(p.a);
            int placed = deliver(p.b, w, 0, w.limit(), 4000);
            assertArrayEquals(msg, read(mem, 32, SIZE));
            assertTrue(placed >= SIZE - 4000, "crc=" + crc + ": only " + placed + " bytes read straight into the region");
            assertEquals(0, mr.placementsInProgress(), "no lease left behind");

            ByteBuffer rqMem = ByteBuffer.allocateDirect(SIZE);
            StagRegion rq = p.stags.register(p.pdB, rqMem, 0, SIZE, 0, StagAccess.LOCAL_WRITE);
            p.b.postReceive(9, rq, rqMem, 0, SIZE);
            byte[] send = pattern(SIZE, 8);
            p.a.postSend(2, RdmapOpcode.SEND, direct(send), 0, SIZE, 0, true);
            w = wireOf(p.a);
            placed = deliver(p.b, w, 0, w.limit(), 3000);
            assertArrayEquals(send, read(rqMem, 0, SIZE));
            assertTrue(placed >= SIZE - 3000, "crc=" + crc + ": only " + placed + " bytes of the Send read straight in");
            assertEquals(1, p.evB.receives.size());
            assertTrue(p.evB.localErrors.isEmpty(), "crc=" + crc + ": " + p.evB.localErrors);
        }
    }

    @Test
    @DisplayName("RFC 5044 §4.4: a bit flipped in payload read straight into the region fails the CRC: TERM 2/0/2, no completion")
    void crcOverPlacedBytes_5044_4_4() {
        RdmapPair p = new RdmapPair(RdmapPair.settings(16_384, true, 4, 4));
        ByteBuffer rqMem = ByteBuffer.allocateDirect(SIZE);
        StagRegion rq = p.stags.register(p.pdB, rqMem, 0, SIZE, 0, StagAccess.LOCAL_WRITE);
        p.b.postReceive(9, rq, rqMem, 0, SIZE);
        p.a.postSend(2, RdmapOpcode.SEND, direct(pattern(SIZE, 8)), 0, SIZE, 0, true);
        ByteBuffer w = wireOf(p.a);
        w.put(9000, (byte) (w.get(9000) ^ 0x04));
        assertTrue(deliver(p.b, w, 0, w.limit(), 4000) > 0);
        assertEquals(List.of(TermCode.MPA_CRC_ERROR), p.evB.localErrors);
        assertTrue(p.evB.receives.isEmpty());
    }

    @Test
    @DisplayName("RFC 5041 §8.3.1 (6): a region deregistered between two reads into it gets no later byte; Write: TERM 1/0, Send: 0/0 and the receive comes back")
    void revokedBetweenDirectReads_5041_8_3_1() {
        for (boolean tagged : new boolean[] {true, false}) {
            RdmapPair p = new RdmapPair(RdmapPair.settings(16_384, true, 4, 4));
            ByteBuffer mem = ByteBuffer.allocateDirect(SIZE);
            StagRegion mr = p.stags.register(p.pdB, mem, 0, SIZE, 0, StagAccess.REMOTE_WRITE | StagAccess.LOCAL_WRITE);
            if (tagged) {
                p.a.postWrite(1, direct(pattern(SIZE, 5)), 0, SIZE, mr.stag(), 0, true);
            } else {
                p.b.postReceive(9, mr, mem, 0, SIZE);
                p.a.postSend(2, RdmapOpcode.SEND, direct(pattern(SIZE, 5)), 0, SIZE, 0, true);
            }
            ByteBuffer w = wireOf(p.a);
            assertEquals(1000, deliver(p.b, w, 0, 4000, 3000), "the read after the header went into the region");
            assertTrue(p.stags.deregister(mr.stag()));
            byte[] after = read(mem, 0, SIZE);
            assertNull(p.b.placement().directTarget(), "no view of a revoked region");
            assertEquals(List.of(tagged ? TermCode.DDP_TAGGED_INVALID_STAG : TermCode.DDP_LOCAL_CATASTROPHIC),
                    p.evB.localErrors);
            assertEquals(tagged ? List.of() : List.of(9L), p.evB.revokedReceives);
            deliver(p.b, w, 4000, w.limit(), 3000);
            assertArrayEquals(after, read(mem, 0, SIZE), "nothing lands after deregistration returned");
            assertEquals(0, mr.placementsInProgress());
            assertTrue(p.evB.receives.isEmpty());
        }
    }

    @Test
    @DisplayName("RFC 5041 §8.3.1 (6): a Send for a receive whose region was deregistered after posting places nothing; the receive comes back, TERM 0/0")
    void untaggedBufferOfRevokedRegion_5041_8_3_1() {
        for (int size : new int[] {100, SIZE}) { // whole in one read, and split (placed directly)
            RdmapPair p = new RdmapPair(RdmapPair.settings(16_384, true, 4, 4));
            ByteBuffer rqMem = ByteBuffer.allocateDirect(SIZE);
            StagRegion rq = p.stags.register(p.pdB, rqMem, 0, SIZE, 0, StagAccess.LOCAL_WRITE);
            p.b.postReceive(9, rq, rqMem, 0, SIZE);
            p.b.postReceive(10, rq, rqMem, 0, SIZE);
            assertTrue(p.stags.deregister(rq.stag()));
            p.a.postSend(2, RdmapOpcode.SEND, direct(pattern(size, 8)), 0, size, 0, true);
            ByteBuffer w = wireOf(p.a);
            deliver(p.b, w, 0, w.limit(), 1000);
            assertArrayEquals(new byte[SIZE], read(rqMem, 0, SIZE), size + " B: nothing placed");
            assertEquals(List.of(9L), p.evB.revokedReceives);
            assertEquals(List.of(TermCode.DDP_LOCAL_CATASTROPHIC), p.evB.localErrors);
            assertTrue(p.evB.receives.isEmpty());
            p.b.flush();
            assertEquals(1, p.evB.flushed.size(), "only the second receive is flushed");
            assertEquals(10L, p.evB.flushed.get(0)[0]);
        }
    }

    @Test
    @DisplayName("RFC 5041 §7.1: the lent view is the receiver's reused view of the region (no allocation per read)")
    void viewReused_5041_7_1() {
        RdmapPair p = new RdmapPair(RdmapPair.settings(16_384, true, 4, 4));
        ByteBuffer mem = ByteBuffer.allocateDirect(SIZE);
        StagRegion mr = p.stags.register(p.pdB, mem, 0, SIZE, 0, StagAccess.REMOTE_WRITE);
        p.a.postWrite(1, direct(pattern(SIZE, 5)), 0, SIZE, mr.stag(), 0, true);
        ByteBuffer w = wireOf(p.a);
        feed(p.b, w, 0, 1000, 1000);
        ByteBuffer first = p.b.placement().directTarget();
        assertNotNull(first);
        first.put(first.position(), w, 1000, 1000).position(first.position() + 1000);
        p.b.placement().directRead(1000);
        ByteBuffer second = p.b.placement().directTarget();
        assertSame(first, second);
        p.b.placement().directRead(0);
    }

    @Test
    @DisplayName("RFC 5040 §7: once the stream terminated, the placement handle lends no view of the region, even mid-segment")
    void noViewAfterTerminate_5040_7() {
        RdmapPair p = new RdmapPair(RdmapPair.settings(16_384, true, 4, 4));
        ByteBuffer mem = ByteBuffer.allocateDirect(SIZE);
        StagRegion mr = p.stags.register(p.pdB, mem, 0, SIZE, 0, StagAccess.REMOTE_WRITE);
        p.a.postWrite(1, direct(pattern(SIZE, 5)), 0, SIZE, mr.stag(), 0, true);
        ByteBuffer w = wireOf(p.a);
        feed(p.b, w, 0, 1000, 1000);
        assertTrue(p.b.placement().directLength() > 0, "a large segment's header was validated");
        p.b.terminate(TermCode.RDMAP_LOCAL_CATASTROPHIC, "test");
        assertNull(p.b.placement().directTarget(), "no view once out of RTS");
        assertEquals(0, mr.placementsInProgress());
    }

    /** Feeds {@code wire[from, end)} to {@code to} in one piece, allocating nothing. */
    private static void feedInPlace(RdmapEndpoint to, ByteBuffer wire, int from, int end) {
        wire.limit(end).position(from);
        to.receive(wire);
        wire.limit(wire.capacity());
    }

    @Test
    @DisplayName("RFC 5041 §7.1: two streams reading straight into one shared region at the same time allocate nothing per read")
    void sharedRegionTwoStreamsNoAllocation_5041_7_1() {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory
                .getThreadMXBean();
        RdmapPair p1 = new RdmapPair(RdmapPair.settings(16_384, true, 4, 4));
        RdmapPair p2 = new RdmapPair(RdmapPair.settings(16_384, true, 4, 4));
        ByteBuffer mem = ByteBuffer.allocateDirect(2 * SIZE);
        // One region (a shared receive pool) holding the posted buffers of both streams.
        StagRegion mr = p1.stags.register(p1.pdB, mem, 0, 2 * SIZE, 0, StagAccess.LOCAL_WRITE);
        ByteBuffer src = direct(pattern(SIZE, 6));
        ByteBuffer w1 = ByteBuffer.allocateDirect(1 << 16);
        ByteBuffer w2 = ByteBuffer.allocateDirect(1 << 16);
        int rounds = 2_000;
        long[] measured = new long[2]; // bytes allocated while both views are lent, direct reads
        Runnable round = () -> {
            for (int i = 0; i < rounds; i++) {
                p1.b.postReceive(i, mr, mem, 0, SIZE);
                p2.b.postReceive(i, mr, mem, SIZE, SIZE);
                p1.a.postSend(i, RdmapOpcode.SEND, src, 0, SIZE, 0, true);
                p2.a.postSend(i, RdmapOpcode.SEND, src, 0, SIZE, 0, true);
                p1.a.transmit(w1.clear());
                p2.a.transmit(w2.clear());
                int end1 = w1.position();
                int end2 = w2.position();
                feedInPlace(p1.b, w1, 0, 64); // the header, validated: the payload goes straight in
                feedInPlace(p2.b, w2, 0, 64);
                int at1 = 64;
                int at2 = 64;
                while (true) {
                    long before = mx.getCurrentThreadAllocatedBytes();
                    ByteBuffer t1 = p1.b.placement().directTarget();
                    ByteBuffer t2 = p2.b.placement().directTarget(); // while stream 1 holds its view of the region
                    if (t1 == null || t2 == null) {
                        assertTrue(t1 == null && t2 == null, "both streams place the same message");
                        break;
                    }
                    int k1 = Math.min(4000, t1.remaining());
                    int k2 = Math.min(4000, t2.remaining());
                    t1.put(t1.position(), w1, at1, k1).position(t1.position() + k1);
                    t2.put(t2.position(), w2, at2, k2).position(t2.position() + k2);
                    p1.b.placement().directRead(k1);
                    p2.b.placement().directRead(k2);
                    measured[0] += mx.getCurrentThreadAllocatedBytes() - before;
                    measured[1] += 2;
                    at1 += k1;
                    at2 += k2;
                }
                feedInPlace(p1.b, w1, at1, end1);
                feedInPlace(p2.b, w2, at2, end2);
            }
        };
        round.run(); // warm up
        assertEquals(rounds, p1.evB.receives.size());
        assertEquals(rounds, p2.evB.receives.size());
        assertArrayEquals(pattern(SIZE, 6), read(mem, SIZE, SIZE));
        measured[0] = 0;
        measured[1] = 0;
        round.run();
        assertTrue(measured[1] >= 4L * rounds, "only " + measured[1] + " direct reads");
        double perRead = (double) measured[0] / measured[1];
        assertTrue(perRead < 1.0, "direct reads into a shared region allocate " + perRead + " B/read");
        assertTrue(p1.evB.localErrors.isEmpty() && p2.evB.localErrors.isEmpty());
        assertEquals(0, mr.placementsInProgress());
    }
}
