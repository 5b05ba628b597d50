package org.jwarp.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Label;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.jwarp.verbs.WcOpcode;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Slot accounting of the device providers' work queues (DiSNI, ffm), without a device. */
class WrRingTest {

    @Test
    @DisplayName("RFC 5040 §5.5: a signalled completion retires every older unsignalled WR, whatever their wrIds")
    void repeatedWrIdsAndUnsignalledWrsNeverLeakSlots_5040_5_5() {
        WrRing sq = new WrRing(WrRing.SEND_TAG, 4);
        for (int round = 0; round < 10_000; round++) {
            long signalled = 0;
            for (int k = 0; k < 4; k++) { // 3 unsignalled Writes, then a signalled one, all wrId 7
                assertFalse(sq.full(), "round " + round + ": a slot leaked");
                signalled = sq.nextToken();
                sq.posted(7, WcOpcode.RDMA_WRITE);
            }
            assertTrue(sq.full());
            assertTrue(sq.retireThrough(signalled));
            assertEquals(7, sq.retiredWrId());
            assertEquals(WcOpcode.RDMA_WRITE, sq.retiredOp());
            assertEquals(0, sq.outstanding(), "round " + round);
        }
    }

    @Test
    @DisplayName("RFC 6581 §9.1: Reads retired through a later completion free their ORD credit")
    void readsCountedAcrossRetireThrough_6581_9_1() {
        WrRing sq = new WrRing(WrRing.SEND_TAG, 8);
        sq.posted(1, WcOpcode.RDMA_READ, false);
        sq.posted(1, WcOpcode.RDMA_READ, false);
        long write = sq.nextToken();
        sq.posted(1, WcOpcode.RDMA_WRITE);
        long read = sq.nextToken();
        sq.posted(1, WcOpcode.RDMA_READ);
        assertEquals(3, sq.readsOutstanding());
        assertTrue(sq.retireThrough(write));
        assertEquals(1, sq.readsOutstanding(), "the two unsignalled Reads before the Write are done");
        assertEquals(1, sq.outstanding());
        assertTrue(sq.retireThrough(read));
        assertEquals(0, sq.readsOutstanding());
        assertEquals(WcOpcode.RDMA_READ, sq.retiredOp());
    }

    @Test
    @DisplayName("Stale, repeated and foreign tokens change nothing")
    void unknownTokensAreRefused() {
        WrRing sq = new WrRing(WrRing.SEND_TAG, 4);
        WrRing rq = new WrRing(WrRing.RECV_TAG, 4);
        long s0 = sq.nextToken();
        sq.posted(5, WcOpcode.SEND);
        long r0 = rq.nextToken();
        rq.posted(5, WcOpcode.RECV);
        assertNotEquals(s0, r0, "a send and a receive token never collide");
        assertFalse(sq.owns(r0));
        assertFalse(sq.retireThrough(r0), "a receive token is not the send queue's");
        assertFalse(sq.retireThrough(sq.nextToken()), "not yet posted");
        assertTrue(sq.retireThrough(s0));
        assertFalse(sq.retireThrough(s0), "already retired: a duplicate completion");
        assertEquals(0, sq.outstanding());
        assertTrue(rq.retireThrough(r0));
        assertEquals(5, rq.retiredWrId());
        assertEquals(WcOpcode.RECV, rq.retiredOp());
        assertFalse(rq.retireThrough(-1L));
    }

    @Test
    @DisplayName("Tokens of a closed QP never match its successor with the same qp_num (generations differ)")
    void generationsKeepReusedQpNumbersApart() {
        WrRing old = new WrRing(WrRing.SEND_TAG, 4, 1);
        WrRing next = new WrRing(WrRing.SEND_TAG, 4, 2);
        long t = old.nextToken();
        old.posted(1, WcOpcode.SEND);
        next.posted(2, WcOpcode.SEND); // same sequence number 0 in the new ring
        assertFalse(next.retireThrough(t), "the old QP's flushed completion");
        assertEquals(1, next.outstanding());
        assertTrue(old.retireThrough(t));
        assertEquals(1, old.retiredWrId());
    }

    @Test
    @DisplayName("Token sequence numbers wrap modulo 2^42 without losing a slot")
    void tokenSequenceWraps() {
        WrRing sq = new WrRing(WrRing.SEND_TAG, 4, 3, WrRing.SEQ_MASK - 1);
        long[] tokens = new long[4];
        for (int i = 0; i < 4; i++) {
            tokens[i] = sq.nextToken();
            sq.posted(10 + i, WcOpcode.RDMA_WRITE);
        }
        assertTrue((tokens[2] & WrRing.SEQ_MASK) < (tokens[1] & WrRing.SEQ_MASK), "wrapped");
        assertTrue(sq.retireThrough(tokens[1]));
        assertEquals(11, sq.retiredWrId());
        assertEquals(2, sq.outstanding());
        assertFalse(sq.retireThrough(tokens[0]), "already retired, before the wrap");
        assertTrue(sq.retireThrough(tokens[3]));
        assertEquals(13, sq.retiredWrId());
        assertEquals(0, sq.outstanding());
    }

    @Test
    void fullRingRefusesAPost() {
        WrRing rq = new WrRing(WrRing.RECV_TAG, 1);
        rq.posted(1, WcOpcode.RECV);
        assertThrows(IllegalStateException.class, () -> rq.posted(2, WcOpcode.RECV));
        assertThrows(IllegalArgumentException.class, () -> new WrRing(0, 1));
    }

    @Test
    @DisplayName("siw order: a Send completing before earlier signalled Reads leaves them to complete with their own "
            + "wrIds; an unsignalled Read before it retires with it (RFC 6581 §9.1, RFC 5040 §5.5)")
    void sendCompletingBeforeEarlierReadsKeepsTheirSlots_6581_9_1() {
        WrRing sq = new WrRing(WrRing.SEND_TAG, 8);
        long w = sq.nextToken();
        sq.posted(10, WcOpcode.RDMA_WRITE, false);
        long r1 = sq.nextToken();
        sq.posted(11, WcOpcode.RDMA_READ, true);
        sq.nextToken();
        sq.posted(12, WcOpcode.RDMA_READ, false);
        long r3 = sq.nextToken();
        sq.posted(13, WcOpcode.RDMA_READ, true);
        long send = sq.nextToken();
        sq.posted(14, WcOpcode.SEND, true);
        assertEquals(3, sq.readsOutstanding());

        assertTrue(sq.retireThrough(send)); // siw: transmitted, so complete, before the Reads' responses
        assertEquals(14, sq.retiredWrId());
        assertEquals(2, sq.readsOutstanding(), "the two signalled Reads still wait for their responses");
        assertEquals(4, sq.outstanding(), "the head moves past the Write to the oldest pending Read");
        assertFalse(sq.retireThrough(send), "a completion is taken once");
        assertFalse(sq.retireThrough(w), "the unsignalled Write retired with the Send");

        assertTrue(sq.retireThrough(r1));
        assertEquals(11, sq.retiredWrId());
        assertEquals(WcOpcode.RDMA_READ, sq.retiredOp());
        assertTrue(sq.retireThrough(r3));
        assertEquals(13, sq.retiredWrId());
        assertEquals(0, sq.readsOutstanding());
        assertEquals(0, sq.outstanding());
        for (int i = 0; i < 8; i++) { // every slot is free again
            sq.posted(20 + i, WcOpcode.SEND, true);
        }
        assertTrue(sq.full());
    }

    @Property(tries = 300)
    @Label("RFC 5040 §5.5: in-order completions of random signalled/unsignalled WRs with colliding wrIds retire exactly "
            + "the WRs posted up to each one")
    void ringMatchesAFifoModel_5040_5_5(@ForAll @IntRange(min = 1, max = 16) int capacity, @ForAll long seed) {
        Random r = new Random(seed);
        WrRing sq = new WrRing(WrRing.SEND_TAG, capacity);
        ArrayDeque<long[]> model = new ArrayDeque<>(); // token, wrId, signalled, op
        ArrayDeque<Long> signalledTokens = new ArrayDeque<>();
        WcOpcode[] ops = {WcOpcode.SEND, WcOpcode.RDMA_WRITE, WcOpcode.RDMA_READ};
        for (int step = 0; step < 2000; step++) {
            boolean post = !sq.full() && (signalledTokens.isEmpty() || r.nextInt(3) > 0);
            if (post) {
                long token = sq.nextToken();
                long wrId = r.nextInt(3); // heavy collisions on purpose
                boolean signalled = r.nextInt(3) == 0 || model.size() == capacity - 1;
                WcOpcode op = ops[r.nextInt(ops.length)];
                sq.posted(wrId, op, signalled);
                model.add(new long[] {token, wrId, signalled ? 1 : 0, op.ordinal()});
                if (signalled) {
                    signalledTokens.add(token);
                }
            } else if (!signalledTokens.isEmpty()) {
                long token = signalledTokens.poll();
                assertTrue(sq.retireThrough(token));
                long[] e;
                do {
                    e = model.poll();
                } while (e[0] != token);
                assertEquals(e[1], sq.retiredWrId());
                assertEquals(WcOpcode.values()[(int) e[3]], sq.retiredOp());
            }
            assertEquals(model.size(), sq.outstanding());
            long reads = model.stream().filter(e -> e[3] == WcOpcode.RDMA_READ.ordinal()).count();
            assertEquals(reads, sq.readsOutstanding());
        }
    }

    @Test
    @DisplayName("RFC 5040 §8.2: a post-list result names how many WRs the device took; a bad_wr outside the chain is "
            + "position unknown, never \"none posted\"")
    void postListResultDecodesIndexOrUnknown_5040_8_2() {
        assertEquals(5, WrRing.postedOf(0L, 5), "success: all of the chain");
        assertEquals(0, WrRing.postedOf(22L, 5), "first refused (EINVAL), none posted");
        assertEquals(3, WrRing.postedOf((3L << 32) | 12, 5), "WR 3 refused (ENOMEM), three posted");
        long unknown = ((long) JwarpNativeIndex.UNKNOWN << 32) | 22;
        assertEquals(org.jwarp.verbs.WorkRequestException.INDEX_UNKNOWN, WrRing.postedOf(unknown, 5),
                "native sentinel: bad_wr NULL or foreign");
        assertEquals(org.jwarp.verbs.WorkRequestException.INDEX_UNKNOWN, WrRing.postedOf((5L << 32) | 22, 5),
                "an index past the chain is not a position in it");
        assertEquals(org.jwarp.verbs.WorkRequestException.INDEX_UNKNOWN, WrRing.postedOf((7L << 32) | 22, 1));
        assertTrue(new org.jwarp.verbs.WorkRequestException("x", org.jwarp.verbs.WorkRequestException.INDEX_UNKNOWN,
                null).getMessage().startsWith("WR ?: "));
    }

    /** The native layer's sentinel, as a compile-time constant (no library load in this test). */
    static final class JwarpNativeIndex {
        static final int UNKNOWN = org.jwarp.disni.natives.JwarpNative.CHAIN_UNKNOWN;
    }
}
