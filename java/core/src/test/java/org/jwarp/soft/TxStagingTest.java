package org.jwarp.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.jwarp.soft.cq.SoftCompletionQueue;
import org.jwarp.soft.tx.DirectBufferPool;
import org.jwarp.soft.verbs.SoftMemoryRegion;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Transmit staging (the bytes of RFC 5044 §4 FPDUs waiting for the socket) is shared, not per
 * stream: a stream holds a staging area only while the socket has not taken all it staged.
 */
class TxStagingTest {
    private static final int MSG = 64 * 1024;

    /** The stream's staging buffer, read under its I/O lock. */
    static ByteBuffer stagingOf(Connection c) {
        SoftStream s = ((SoftConnection) c).stream();
        s.io.lock();
        try {
            return s.txBuffer();
        } finally {
            s.io.unlock();
        }
    }

    /** Waits (up to 5 s: the give-back may follow the completion on the reactor) for the stream to hold no staging. */
    static ByteBuffer drainedStaging(Connection c) throws InterruptedException {
        ByteBuffer b = stagingOf(c);
        for (int i = 0; i < 500 && b != null; i++) {
            Thread.sleep(10);
            b = stagingOf(c);
        }
        return b;
    }

    private static void ok(SoftCompletionQueue cq) throws InterruptedException {
        assertEquals(WcStatus.SUCCESS, SoftFixture.one(cq).status);
    }

    /** From {@code a} to {@code b}: a 64 KiB Send into a posted receive, then a 64 KiB RDMA Write. */
    private static void sendAndWrite(Connection a, SoftCompletionQueue acq, SoftMemoryRegion src, Connection b,
                                     SoftCompletionQueue bcq, SoftMemoryRegion dst) throws Exception {
        b.queuePair().postRecv(1, dst, 0, MSG);
        a.queuePair().postSend(new SendRequest().send(2, src, 0, MSG));
        ok(acq);
        ok(bcq);
        a.queuePair().postSend(new SendRequest().write(3, src, 0, MSG, dst.address(), dst.rkey()));
        ok(acq);
    }

    @Test
    @DisplayName("RFC 5044 §4: a stream whose FPDUs all left holds no transmit staging (both ends, after a 64 KiB Send and Write each way)")
    void drainedStreamHoldsNoStaging_5044_4() throws Exception {
        try (SoftFixture f = new SoftFixture()) {
            f.listen(4);
            try (SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
                SoftMemoryRegion src1 = f.region(f.pd, MSG, Access.LOCAL_WRITE);
                SoftMemoryRegion dst1 = f.region(f.pd, MSG, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
                SoftMemoryRegion src2 = f.region(f.pd2, MSG, Access.LOCAL_WRITE);
                SoftMemoryRegion dst2 = f.region(f.pd2, MSG, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
                sendAndWrite(p.initiator(), f.cq, src1, p.responder(), f.cq2, dst2);
                sendAndWrite(p.responder(), f.cq2, src2, p.initiator(), f.cq, dst1);
                assertNull(drainedStaging(p.initiator()), "the initiator's stream drained but keeps its staging buffer");
                assertNull(drainedStaging(p.responder()), "the responder's stream drained but keeps its staging buffer");
            }
        }
    }

    /** Polls {@code cond} for up to 10 s. */
    private static boolean eventually(java.util.function.BooleanSupplier cond) throws InterruptedException {
        for (int i = 0; i < 1000; i++) {
            if (cond.getAsBoolean()) {
                return true;
            }
            Thread.sleep(10);
        }
        return cond.getAsBoolean();
    }

    @Test
    @DisplayName("RFC 5044 §4: a peer that stops reading keeps one staging area; with none left another stream waits, and gets the next one given back")
    void stalledPeerHoldsOneAreaOthersWaitForTheNext_5044_4() throws Exception {
        SoftConfig cfg = SoftFixture.defaultConfig().withTxStagingAreas(1);
        try (SoftFixture f = new SoftFixture(cfg)) {
            f.listen(4);
            DirectBufferPool pool = f.device.buffers();
            CompletableFuture<Connection> acc = RawPeer.acceptClientServer(f);
            try (RawInitiator raw = RawInitiator.connect(f.address(), false, false, false, 8, 8)) {
                Connection stalled = acc.get(5, TimeUnit.SECONDS);
                raw.writeRtr().flush(); // the responder sends FPDUs only after the initiator's first (RFC 5044 §7.1.2)
                int size = 4 << 20;
                int sends = 8; // 32 MiB: far more than loopback socket buffers hold while the peer does not read
                SoftMemoryRegion big = f.region(f.pd2, size, Access.LOCAL_WRITE);
                for (int i = 0; i < sends; i++) {
                    stalled.queuePair().postSend(new SendRequest().send(100 + i, big, 0, size));
                }
                assertTrue(eventually(() -> stagingOf(stalled) != null && pool.stagingInUse() == 1),
                        "the stalled stream keeps the staging area its partial write left bytes in");
                Thread.sleep(200);
                assertEquals(1, pool.stagingInUse(), "one stream holds at most one staging area, however much it has queued");

                // a second connection: set up (setup frames never wait), but its data finds no area
                try (SoftFixture.Pair p = f.connect(SoftFixture.clientServer().build(), SoftFixture.clientServer().build())) {
                    SoftMemoryRegion src = f.region(f.pd, MSG, Access.LOCAL_WRITE);
                    SoftMemoryRegion dst = f.region(f.pd2, MSG, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
                    p.responder().queuePair().postRecv(7, dst, 0, MSG);
                    p.initiator().queuePair().postSend(new SendRequest().send(8, src, 0, MSG));
                    assertTrue(eventually(() -> pool.stagingWaiters() >= 1), "the second stream waits for an area");
                    WorkCompletion[] wc = SoftFixture.wcs(1);
                    assertEquals(0, f.cq.poll(wc, 1), "no Send completes while its stream has no staging area");
                    assertTrue(pool.stagingInUse() <= 1, "the bound holds: " + pool.stagingInUse());

                    // the peer reads again: the stalled stream drains, gives its area back, the waiter gets it
                    AtomicLong read = new AtomicLong();
                    CompletableFuture<Void> reader = CompletableFuture.runAsync(() -> {
                        try {
                            InputStream in = raw.peer.socket.getInputStream();
                            byte[] b = new byte[1 << 16];
                            for (int n; read.get() < (long) sends * size && (n = in.read(b)) >= 0; ) {
                                read.addAndGet(n);
                            }
                        } catch (java.io.IOException e) {
                            throw new RuntimeException(e);
                        }
                    });
                    WorkCompletion c = SoftFixture.one(f.cq);
                    assertEquals(WcStatus.SUCCESS, c.status);
                    assertEquals(8, c.wrId);
                    assertEquals(WcStatus.SUCCESS, SoftFixture.one(f.cq2).status, "the receive");
                    for (int i = 0; i < sends; i++) {
                        WorkCompletion w = SoftFixture.one(f.cq2);
                        assertEquals(WcStatus.SUCCESS, w.status, "stalled Send " + i);
                    }
                    reader.get(30, TimeUnit.SECONDS);
                    assertNull(drainedStaging(stalled), "drained: the area went back");
                    assertNull(drainedStaging(p.initiator()));
                    assertTrue(eventually(() -> pool.stagingInUse() == 0), "every area back: " + pool.stagingInUse());
                    assertEquals(0, pool.stagingWaiters());
                }
            }
        }
    }
}
