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
 * validated (RFC 5041 §7.1): {@link RdmapEndpoint#directTarget} lends a view of the region under a
 * placement lease, the "socket" (here a copy from the wire) fills it, {@link RdmapEndpoint#directRead}
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
            ByteBuffer t = to.directTarget();
            if (t != null) {
                assertTrue(t.isDirect() && t.remaining() > 0, "a view of the registered buffer");
                int k = Math.min(Math.min(piece, t.remaining()), end - at);
                int pos = t.position();
                t.put(pos, wire, at, k).position(pos + k);
                to.directRead(k);
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
            assertNull(p.b.directTarget(), "no view of a revoked region");
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
    @DisplayName("RFC 5041 §7.1: the lent view is the region's reused spare (no allocation per read)")
    void viewReused_5041_7_1() {
        RdmapPair p = new RdmapPair(RdmapPair.settings(16_384, true, 4, 4));
        ByteBuffer mem = ByteBuffer.allocateDirect(SIZE);
        StagRegion mr = p.stags.register(p.pdB, mem, 0, SIZE, 0, StagAccess.REMOTE_WRITE);
        p.a.postWrite(1, direct(pattern(SIZE, 5)), 0, SIZE, mr.stag(), 0, true);
        ByteBuffer w = wireOf(p.a);
        feed(p.b, w, 0, 1000, 1000);
        ByteBuffer first = p.b.directTarget();
        assertNotNull(first);
        first.put(first.position(), w, 1000, 1000).position(first.position() + 1000);
        p.b.directRead(1000);
        ByteBuffer second = p.b.directTarget();
        assertSame(first, second);
        p.b.directRead(0);
    }
}
