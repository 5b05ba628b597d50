package org.jwarp.soft;

import org.jwarp.soft.verbs.VerbsProbe;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.jwarp.ground.TermCode;
import org.jwarp.memory.StagAccess;
import org.jwarp.memory.StagDomain;
import org.jwarp.memory.StagRegion;
import org.jwarp.memory.StagTable;
import org.jwarp.soft.verbs.SoftMemoryRegion;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.ConnectionTerminatedException;
import org.jwarp.verbs.SendOpcode;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WorkRequestException;

/**
 * Issue 31, finding 4: a peer's Send with Invalidate (RFC 5040 §5.3) may only invalidate an STag it
 * could legitimately use (java/CONFORMANCE.md, "Remote invalidation"); a refused one gets TERM
 * 0/1/0x09 and changes nothing; STags are not guessable from one another; a local post whose region
 * is gone ends the stream with a TERM instead of leaving it silently to the application.
 */
class HostileInvalidationTest {

    private static void awaitClosed(org.jwarp.verbs.Connection c) throws InterruptedException {
        SoftFixture.waitUntil("the connection ends", () -> !c.isOpen());
    }

    @Test
    @DisplayName("RFC 5040 §5.3: a Send with Invalidate naming a local-only STag gets TERM 0/1/0x09 and the region stays valid")
    void remoteInvalidationOfLocalOnlyStagRefused_5040_5_3() throws Exception {
        try (SoftFixture f = new SoftFixture();
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
            SoftMemoryRegion src = f.region(f.pd, 64, Access.LOCAL_WRITE);
            SoftMemoryRegion rb = f.region(f.pd2, 64, Access.LOCAL_WRITE); // a receive buffer: never advertised
            p.responder().queuePair().postRecv(1, rb, 0, 64);
            SendRequest wr = new SendRequest().send(5, src, 0, 8);
            wr.opcode = SendOpcode.SEND_WITH_INVALIDATE;
            wr.invalidateRkey = rb.rkey();
            p.initiator().queuePair().postSend(wr);
            awaitClosed(p.initiator());
            ConnectionTerminatedException t = assertInstanceOf(ConnectionTerminatedException.class,
                    p.initiator().failure());
            assertEquals(TermCode.RDMAP_CANNOT_INVALIDATE, t.term());
            assertTrue(VerbsProbe.isValid(rb), "a refused invalidation changes nothing");
        }
    }

    @Test
    @DisplayName("RFC 5041 §8.2/§8.3.1 (2): a Send with Invalidate from another stream of the PD leaves a stream-bound STag alone")
    void remoteInvalidationFromAnotherStreamRefused_5041_8_3_1() {
        StagTable table = new StagTable(64);
        StagDomain pd = new StagDomain();
        Object mine = new Object();
        StagRegion mr = table.register(pd, ByteBuffer.allocateDirect(64), 0, 64, 0, StagAccess.REMOTE_WRITE);
        mr.bindStream(mine);
        assertEquals(StagTable.NOT_ASSOCIATED, table.invalidateRemote(mr.stag(), pd, new Object()));
        assertEquals(StagTable.NOT_ASSOCIATED, table.invalidateRemote(mr.stag(), new StagDomain(), mine));
        assertTrue(mr.isValid());
        StagRegion local = table.register(pd, ByteBuffer.allocateDirect(64), 0, 64, 0, StagAccess.LOCAL_WRITE);
        assertEquals(StagTable.ACCESS_VIOLATION, table.invalidateRemote(local.stag(), pd, mine));
        assertTrue(local.isValid());
        assertEquals(StagTable.INVALID_STAG, table.invalidateRemote(mr.stag() ^ 0x80, pd, mine));
        assertEquals(StagTable.OK, table.invalidateRemote(mr.stag(), pd, mine));
        assertFalse(mr.isValid());
    }

    @Test
    @DisplayName("RFC 5042 (guessable STags): neighbouring registrations do not reveal each other's STags")
    void stagsAreNotSequential() {
        // two tables, same registrations: a fixed start index and key would give the same STags
        Set<Integer> firsts = new HashSet<>();
        int sequential = 0;
        int rounds = 8;
        for (int t = 0; t < rounds; t++) {
            StagTable table = new StagTable(1 << 16);
            StagDomain pd = new StagDomain();
            ByteBuffer mem = ByteBuffer.allocateDirect(64);
            int prev = table.register(pd, mem, 0, 64, 0, StagAccess.LOCAL_WRITE).stag();
            firsts.add(prev);
            for (int i = 0; i < 8; i++) {
                int next = table.register(pd, mem, 0, 64, 0, StagAccess.LOCAL_WRITE).stag();
                if (next - prev == 0x100) {
                    sequential++; // same key, next index: what "rkey - 0x100" guessed
                }
                prev = next;
            }
        }
        assertTrue(firsts.size() > 1, "every table starts with the same STag: " + firsts);
        assertTrue(sequential < rounds * 8 / 2, sequential + " of " + rounds * 8 + " STags were the previous one + 0x100");
    }

    @Test
    @DisplayName("A slot's next registration never gets the key its previous one had (a stale STag never validates)")
    void reusedSlotChangesKey() {
        StagTable table = new StagTable(2); // one slot
        StagDomain pd = new StagDomain();
        ByteBuffer mem = ByteBuffer.allocateDirect(64);
        int prev = table.register(pd, mem, 0, 64, 0, StagAccess.ALL).stag();
        for (int i = 0; i < 1000; i++) {
            assertTrue(table.deregister(prev));
            int next = table.register(pd, mem, 0, 64, 0, StagAccess.ALL).stag();
            assertNotEquals(prev, next);
            assertEquals(StagTable.INVALID_STAG, table.check(prev, pd, 0, 1, 0));
            prev = next;
        }
    }

    @Test
    @DisplayName("RFC 5040 §7: a post naming a region that is gone is refused and ends the stream with a TERM, not silently")
    void postOnGoneRegionTerminates_5040_7() throws Exception {
        try (SoftFixture f = new SoftFixture();
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
            SoftMemoryRegion src = f.region(f.pd, 64, Access.LOCAL_WRITE);
            src.close();
            assertThrows(WorkRequestException.class,
                    () -> p.initiator().queuePair().postSend(new SendRequest().send(5, src, 0, 8)));
            awaitClosed(p.responder());
            ConnectionTerminatedException t = assertInstanceOf(ConnectionTerminatedException.class,
                    p.responder().failure(), "the peer learns of it by a TERM");
            assertTrue(t.term().layer() == TermCode.LAYER_RDMAP, t.term().toString());
            assertFalse(p.initiator().isOpen());
        }
    }
}
