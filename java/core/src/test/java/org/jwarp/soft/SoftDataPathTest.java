package org.jwarp.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;

import org.jwarp.soft.verbs.SoftMemoryRegion;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class SoftDataPathTest {

    @Test
    @DisplayName("RFC 5040 §5.3: a Send lands in the posted receive buffer")
    void sendIntoPostedReceive_5040_5_3() throws Exception {
        try (SoftFixture f = new SoftFixture();
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
            SoftMemoryRegion src = f.region(f.pd, 4096, Access.LOCAL_WRITE);
            SoftMemoryRegion dst = f.region(f.pd2, 4096, Access.LOCAL_WRITE);
            ByteBuffer s = src.buffer();
            for (int i = 0; i < 4096; i++) {
                s.put(i, (byte) (i * 7));
            }
            p.responder().queuePair().postRecv(11, dst, 0, 4096);
            p.initiator().queuePair().postSend(new SendRequest().send(22, src, 0, 3000));
            WorkCompletion sc = SoftFixture.one(f.cq);
            assertEquals(WcStatus.SUCCESS, sc.status, sc.toString());
            assertEquals(22, sc.wrId);
            assertEquals(WcOpcode.SEND, sc.opcode);
            WorkCompletion rc = SoftFixture.one(f.cq2);
            assertEquals(WcStatus.SUCCESS, rc.status, rc.toString());
            assertEquals(WcOpcode.RECV, rc.opcode);
            assertEquals(11, rc.wrId);
            assertEquals(3000, rc.byteLength);
            ByteBuffer d = dst.buffer();
            for (int i = 0; i < 3000; i++) {
                assertEquals((byte) (i * 7), d.get(i), "byte " + i);
            }
            assertTrue(p.initiator().isOpen());
        }
    }
}
