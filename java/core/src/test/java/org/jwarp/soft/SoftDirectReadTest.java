package org.jwarp.soft;

import org.jwarp.soft.verbs.VerbsProbe;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

import org.jwarp.soft.verbs.SoftMemoryRegion;
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
 * arrive intact (RFC 5044 §4.4 CRC over the placed bytes). The rule is checked on one read at a
 * time over a {@link ScriptedChannel}; the end-to-end case checks only that the data is right.
 */
class SoftDirectReadTest {
    static final int SIZE = 1 << 20;
    /** An MPA length field and a tagged DDP header (RFC 5044 §4.2, RFC 5041 §4.1). */
    static final int WRITE_HEADER = 2 + 14;
    static final int WRITE = 64 * 1024;

    private interface Step {
        void run(SoftStream s, StreamReceive rcv, ScriptedChannel sc, SoftMemoryRegion dst) throws Exception;
    }

    /**
     * Holds the responder's I/O lock (its reactor and pollers wait) with a {@link ScriptedChannel}
     * in place, posts a 64 KiB Write, reads exactly the first segment's header through
     * {@link StreamReceive#readOnce}, runs {@code step}, puts the channel back and checks the Write
     * lands whole.
     */
    private static void afterHeader(boolean crc, Step step) throws Exception {
        try (SoftFixture f = new SoftFixture();
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().crc(crc).build(), SoftFixture.p2p().crc(crc).build())) {
            SoftMemoryRegion src = f.region(f.pd, WRITE, Access.LOCAL_WRITE);
            SoftMemoryRegion dst = f.region(f.pd2, WRITE, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
            for (int i = 0; i < WRITE; i += 4) {
                VerbsProbe.raw(src).putInt(i, i * 7 + 1);
            }
            // A Send received first: the stream's first FPDU (RTR) is behind it, the header read below is the Write's.
            p.responder().queuePair().postRecv(5, dst, 0, 64);
            p.initiator().queuePair().postSend(new SendRequest().send(6, src, 0, 64));
            assertEquals(WcStatus.SUCCESS, SoftFixture.one(f.cq).status);
            assertEquals(WcStatus.SUCCESS, SoftFixture.one(f.cq2).status);
            SoftStream s = ((SoftConnection) p.responder()).stream();
            StreamReceive rcv = s.receiver;
            ByteBuffer rx = ByteBuffer.allocateDirect(128 * 1024);
            s.lockIo();
            SocketChannel real = s.channel();
            ScriptedChannel sc = new ScriptedChannel(real);
            try {
                s.open(sc);
                sc.cap = WRITE_HEADER;
                p.initiator().queuePair().postSend(new SendRequest().write(1, src, 0, WRITE, dst.address(), dst.rkey()));
                long deadline = System.nanoTime() + 10_000_000_000L;
                int got = 0;
                while (got < WRITE_HEADER) {
                    int n = rcv.readOnce(rx, rx.capacity());
                    assertTrue(n >= 0 && System.nanoTime() < deadline, "the header did not arrive");
                    got += n;
                }
                assertEquals(0, rcv.directReads, "the header is read plainly");
                assertTrue(s.data().placement().directLength() >= StreamReceive.DIRECT_MIN, "a large segment's header was validated");
                sc.cap = Integer.MAX_VALUE;
                step.run(s, rcv, sc, dst);
            } finally {
                s.open(real);
                s.io.unlock();
                org.jwarp.memory.StagRegion mr = VerbsProbe.engineRegion(dst);
                int leaked = mr.placementsInProgress();
                for (int i = 0; i < leaked; i++) {
                    mr.releasePlacement(); // a failed check must not leave the fixture's close waiting forever
                }
                assertEquals(0, leaked, "placement leases left behind");
            }
            s.reactor.schedule(s); // the reactor reads on
            assertEquals(WcStatus.SUCCESS, SoftFixture.one(f.cq).status);
            // A Send after the Write: once it is received, the Write is placed (RFC 5040 §5.5 ordering).
            SoftMemoryRegion rq = f.region(f.pd2, 64, Access.LOCAL_WRITE);
            p.responder().queuePair().postRecv(7, rq, 0, 64);
            p.initiator().queuePair().postSend(new SendRequest().send(8, src, 0, 64));
            assertEquals(WcStatus.SUCCESS, SoftFixture.one(f.cq).status);
            assertEquals(WcStatus.SUCCESS, SoftFixture.one(f.cq2).status);
            for (int i = 0; i < WRITE; i += 4) {
                assertEquals(i * 7 + 1, VerbsProbe.raw(dst).getInt(i), "crc=" + crc + ": byte " + i);
            }
            assertEquals(0, VerbsProbe.engineRegion(dst).placementsInProgress(), "no placement lease left behind");
        }
    }

    @Test
    @DisplayName("RFC 5041 §7.1: with the header validated and at least DIRECT_MIN payload due, the next read goes straight into the region's memory (no copy), CRC on and off")
    void payloadAfterValidatedHeaderReadIntoRegion_5041_7_1() throws Exception {
        for (boolean crc : new boolean[] {true, false}) {
            afterHeader(crc, (s, rcv, sc, dst) -> {
                long deadline = System.nanoTime() + 10_000_000_000L;
                ByteBuffer rx = ByteBuffer.allocateDirect(128 * 1024);
                while (rcv.directBytes == 0) {
                    assertTrue(rcv.readOnce(rx, rx.capacity()) >= 0 && System.nanoTime() < deadline, "no payload");
                }
                assertEquals(1, sc.scatterReads, "one scattering read");
                assertEquals(1, rcv.directReads);
                int placed = sc.scatterTo - sc.scatterFrom;
                assertEquals(placed, rcv.directBytes);
                assertTrue(placed >= StreamReceive.DIRECT_MIN, "placed " + placed);
                assertEquals(0, sc.scatterFrom, "the payload begins at the Write's tagged offset");
                // The read's target is the region's memory itself: a byte changed there shows in it.
                ByteBuffer view = sc.scatterFirst;
                ByteBuffer mem = VerbsProbe.raw(dst);
                for (int i = 0; i < placed - 3; i += 4) {
                    assertEquals(i * 7 + 1, mem.getInt(i), "byte " + i);
                }
                byte b = mem.get(placed - 1);
                mem.put(placed - 1, (byte) ~b);
                assertEquals((byte) ~b, view.get(placed - 1), "the scattering read's target is a view of the region");
                mem.put(placed - 1, b);
            });
        }
    }

    @Test
    @DisplayName("RFC 5041 §8.3.1 (6): an exception between taking the placement lease and the read drops the lease")
    void leaseDroppedWhenReadSetupThrows_5041_8_3_1() throws Exception {
        afterHeader(true, (s, rcv, sc, dst) -> {
            // A read buffer smaller than the limit asked for: sizing it throws after the lease is taken.
            ByteBuffer tiny = ByteBuffer.allocateDirect(8);
            assertThrows(IllegalArgumentException.class, () -> rcv.readOnce(tiny, 64 * 1024));
            assertEquals(0, VerbsProbe.engineRegion(dst).placementsInProgress(), "the lease was dropped");
            assertEquals(0, sc.scatterReads, "nothing was read");
        });
    }

    @Test
    @DisplayName("RFC 5041 §7.1: 1 MiB Writes and Sends arrive intact through the direct-read path, CRC on and off")
    void largeMessagesIntact_5041_7_1() throws Exception {
        for (boolean crc : new boolean[] {true, false}) {
            try (SoftFixture f = new SoftFixture();
                 SoftFixture.Pair p = f.connect(SoftFixture.p2p().crc(crc).build(), SoftFixture.p2p().crc(crc).build())) {
                assertEquals(crc, p.initiator().info().crc());
                SoftMemoryRegion src = f.region(f.pd, SIZE, Access.LOCAL_WRITE);
                SoftMemoryRegion dst = f.region(f.pd2, SIZE, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
                SoftMemoryRegion rq = f.region(f.pd2, SIZE, Access.LOCAL_WRITE);
                for (int round = 0; round < 3; round++) {
                    for (int i = 0; i < SIZE; i += 4) {
                        VerbsProbe.raw(src).putInt(i, i * 31 + round);
                    }
                    p.initiator().queuePair().postSend(new SendRequest().write(1, src, 0, SIZE, dst.address(), dst.rkey()));
                    assertEquals(WcStatus.SUCCESS, SoftFixture.one(f.cq).status);
                    p.responder().queuePair().postRecv(2, rq, 0, SIZE);
                    p.initiator().queuePair().postSend(new SendRequest().send(3, src, 0, SIZE));
                    assertEquals(WcStatus.SUCCESS, SoftFixture.one(f.cq).status);
                    WorkCompletion rc = SoftFixture.one(f.cq2); // the Send follows the Write: both placed now
                    assertEquals(WcStatus.SUCCESS, rc.status);
                    assertEquals(SIZE, rc.byteLength);
                    ByteBuffer a = VerbsProbe.raw(dst);
                    ByteBuffer b = VerbsProbe.raw(rq);
                    for (int i = 0; i < SIZE; i += 4) {
                        if (a.getInt(i) != i * 31 + round || b.getInt(i) != i * 31 + round) {
                            throw new AssertionError("crc=" + crc + " round " + round + ": wrong byte at " + i);
                        }
                    }
                }
            }
        }
    }
}
