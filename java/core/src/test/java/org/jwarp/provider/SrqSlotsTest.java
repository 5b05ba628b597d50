package org.jwarp.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WorkCompletion;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Slot accounting of the device providers' shared receive queues (DiSNI, ffm), without a device. */
class SrqSlotsTest {

    private static WorkCompletion wc(long token) {
        WorkCompletion w = new WorkCompletion();
        w.wrId = token;
        w.opcode = WcOpcode.SEND; // an error completion leaves the opcode undefined
        return w;
    }

    @Test
    @DisplayName("RFC 5041 §5.1: an SRQ's buffers complete in any order across its QPs; each retires only its own slot")
    void buffersCompleteOutOfOrderAndRetireTheirOwnSlot_5041_5_1() {
        SrqSlots s = new SrqSlots(3);
        long a = s.take(0, 100);
        long b = s.take(1, 200);
        long c = s.take(2, 300);
        assertTrue(s.full());
        WorkCompletion w = wc(b);
        assertTrue(s.completed(w));
        assertEquals(200, w.wrId);
        assertEquals(WcOpcode.RECV, w.opcode);
        assertEquals(2, s.posted());
        assertFalse(s.completed(wc(b)), "a slot completes once");
        long d = s.take(0, 400); // the freed slot again, under a new token
        assertFalse(s.completed(wc(b)), "the slot's earlier token is stale");
        for (long[] t : new long[][] {{c, 300}, {a, 100}, {d, 400}}) {
            w = wc(t[0]);
            assertTrue(s.completed(w));
            assertEquals(t[1], w.wrId);
        }
        assertEquals(0, s.posted());
    }

    @Test
    @DisplayName("A chain the device refused from WR 1 on keeps WR 0's slot and frees the others")
    void refusedChainFreesTheSlotsOfTheWrsNotTaken() {
        SrqSlots s = new SrqSlots(4);
        long first = s.take(0, 1);
        long second = s.take(1, 2);
        s.take(2, 3);
        s.refused(1, 3);
        assertEquals(1, s.posted());
        assertFalse(s.completed(wc(second)), "a refused WR's token is not outstanding");
        assertTrue(s.completed(wc(first)));
        assertEquals(0, s.posted());
    }

    @Test
    @DisplayName("Tokens of another SRQ (another generation) and of a QP's rings are not this SRQ's")
    void foreignTokensAreRefused() {
        SrqSlots s = new SrqSlots(2);
        SrqSlots other = new SrqSlots(2);
        long mine = s.take(0, 5);
        long theirs = other.take(0, 6);
        assertFalse(s.owns(theirs));
        assertFalse(s.completed(wc(theirs)));
        assertFalse(s.owns(new WrRing(WrRing.RECV_TAG, 2).nextToken()));
        assertTrue(s.owns(mine));
        assertEquals(1, s.posted());
    }
}
