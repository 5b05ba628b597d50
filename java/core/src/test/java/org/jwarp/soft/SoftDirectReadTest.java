package org.jwarp.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;

import org.jwarp.verbs.Access;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * RFC 5041 §7.1 through the soft provider: once a large segment's header is validated its payload
 * is read from the socket straight into the registered buffer (a scattering read: payload into
 * the region, pad + CRC + what follows into the read buffer), with CRC on and off, and the bytes
 * arrive intact (RFC 5044 §4.4 CRC over the placed bytes).
 */
class SoftDirectReadTest {
    static final int SIZE = 1 << 20;

    @Test
    @DisplayName("RFC 5041 §7.1: 1 MiB Writes and Sends are read from the socket straight into the region, CRC on and off")
    void largeMessagesReadStraightIntoRegion_5041_7_1() throws Exception {
        for (boolean crc : new boolean[] {true, false}) {
            try (SoftFixture f = new SoftFixture();
                 SoftFixture.Pair p = f.connect(SoftFixture.p2p().crc(crc).build(), SoftFixture.p2p().crc(crc).build())) {
                assertEquals(crc, p.initiator().info().crc());
                SoftMemoryRegion src = f.region(f.pd, SIZE, Access.LOCAL_WRITE);
                SoftMemoryRegion dst = f.region(f.pd2, SIZE, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
                SoftMemoryRegion rq = f.region(f.pd2, SIZE, Access.LOCAL_WRITE);
                StreamReceive rcv = ((SoftConnection) p.responder()).stream().receiver;
                for (int round = 0; round < 3; round++) {
                    for (int i = 0; i < SIZE; i += 4) {
                        src.raw().putInt(i, i * 31 + round);
                    }
                    p.initiator().queuePair().postSend(new SendRequest().write(1, src, 0, SIZE, dst.address(), dst.rkey()));
                    assertEquals(WcStatus.SUCCESS, SoftFixture.one(f.cq).status);
                    p.responder().queuePair().postRecv(2, rq, 0, SIZE);
                    p.initiator().queuePair().postSend(new SendRequest().send(3, src, 0, SIZE));
                    assertEquals(WcStatus.SUCCESS, SoftFixture.one(f.cq).status);
                    WorkCompletion rc = SoftFixture.one(f.cq2); // the Send follows the Write: both placed now
                    assertEquals(WcStatus.SUCCESS, rc.status);
                    assertEquals(SIZE, rc.byteLength);
                    ByteBuffer a = dst.raw();
                    ByteBuffer b = rq.raw();
                    for (int i = 0; i < SIZE; i += 4) {
                        if (a.getInt(i) != i * 31 + round || b.getInt(i) != i * 31 + round) {
                            throw new AssertionError("crc=" + crc + " round " + round + ": wrong byte at " + i);
                        }
                    }
                }
                long direct = rcv.directBytes;
                assertTrue(direct >= 6L * SIZE / 4, "crc=" + crc + ": only " + direct + " of " + 6L * SIZE
                        + " payload bytes were read straight into registered memory (" + rcv.directReads + " reads)");
            }
        }
    }
}
