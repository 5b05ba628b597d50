package org.jwarp.rdmap;

import org.jwarp.ground.TermCode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import org.jwarp.memory.StagAccess;
import org.jwarp.memory.StagRegion;
import org.jwarp.memory.StagDomain;
import org.jwarp.memory.StagTable;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The hot path (segment, frame, CRC, decode, validate, place, complete) allocates nothing per message. */
class RdmapAllocationTest {

    static final class Counting implements RdmapListener {
        long sends;
        long receives;
        long errors;

        @Override
        public void onSendCompletion(long wrId, int opcode, int byteLength) {
            sends++;
        }

        @Override
        public void onReceiveCompletion(long wrId, int opcode, int byteLength, int invalidatedStag) {
            receives++;
        }

        @Override
        public void onLocalError(TermCode code, String detail) {
            errors++;
        }

        @Override
        public void onPeerTerminate(TerminateMessage term) {
            errors++;
        }
    }

    static long allocatedBytes() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
    }

    @Test
    @DisplayName("Send, Write and Read through two engines allocate (almost) nothing per message")
    void steadyStateAllocatesNothingPerMessage() {
        StagTable stags = new StagTable(16);
        StagDomain pdA = new StagDomain();
        StagDomain pdB = new StagDomain();
        Counting la = new Counting();
        Counting lb = new Counting();
        RdmapSettings s = new RdmapSettings(1450, true, false, 4, 4, 16, 16);
        RdmapEndpoint a = new RdmapEndpoint(s, pdA, stags, la);
        RdmapEndpoint b = new RdmapEndpoint(s, pdB, stags, lb);
        ByteBuffer payload = ByteBuffer.allocateDirect(4096);
        ByteBuffer rq = ByteBuffer.allocateDirect(4096);
        StagRegion target = stags.register(pdB, ByteBuffer.allocateDirect(4096), 0, 4096, 0, StagAccess.ALL);
        StagRegion sink = stags.register(pdA, ByteBuffer.allocateDirect(4096), 0, 4096, 0, StagAccess.LOCAL_WRITE);
        ByteBuffer wire = ByteBuffer.allocateDirect(64 * 1024);
        Runnable round = () -> {
            b.postReceive(1, rq, 0, 4096);
            a.postSend(1, RdmapOpcode.SEND, payload, 0, 3000, 0, true);
            a.postWrite(2, payload, 0, 4096, target.stag(), 0, true);
            a.postRead(3, sink.stag(), 0, 2000, target.stag(), 100, true);
            wire.clear();
            a.transmit(wire);
            wire.flip();
            b.receive(wire);
            wire.clear();
            b.transmit(wire);
            wire.flip();
            a.receive(wire);
        };
        for (int i = 0; i < 20_000; i++) {
            round.run();
        }
        int n = 50_000;
        long before = allocatedBytes();
        for (int i = 0; i < n; i++) {
            round.run();
        }
        long allocated = allocatedBytes() - before;
        assertEquals(0, la.errors + lb.errors);
        assertEquals(3L * (n + 20_000), la.sends);
        assertEquals(n + 20_000, lb.receives);
        assertTrue(allocated < n, "allocated " + allocated + " bytes over " + n + " rounds of 3 messages");
    }
}
