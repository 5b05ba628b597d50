package org.jwarp.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.jwarp.ground.RtrType;
import org.jwarp.soft.verbs.SoftMemoryRegion;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionRequest;
import org.jwarp.verbs.SendRequest;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The close of a stream whose reactor cannot do it (gone, or not done within the close wait):
 * every outstanding WR flushes (RFC 5040 §6.2.2) and everything the stream's zero-copy transmit
 * held goes back, under the stream's I/O lock: its transmit staging area (RFC 5044 §4 FPDUs) to
 * the device's pool, and its source-revocation listener (RFC 5041 §8.3.1 (6)) out of the STag
 * table. The stream under test posts Writes to a raw peer that reads nothing, so at close its
 * staging area is lent and payload slices of the region wait for the socket.
 */
class StreamCloseOutsideTest {
    static final int REGION = 4 << 20;
    static final int OPS = 4;

    @Test
    @DisplayName("RFC 5041 §8.3.1 (6): a close after the reactor is gone returns the staging area and leaves no revocation listener")
    void closeWithReactorGone_releasesStagingAndListener_5041_8_3_1() throws Exception {
        try (SoftFixture f = new SoftFixture()) {
            f.listen(2);
            CompletableFuture<Connection> acc = accept(f);
            try (RawInitiator raw = RawInitiator.connect(f.address(), false, true, false, OPS, OPS)) {
                SoftConnection c = stalledWriter(f, raw, acc);
                c.stream().reactor.close(); // the reactor is gone: its handlers close, the connection closes from outside
                c.close();
                assertReleased(f);
            }
        }
    }

    @Test
    @DisplayName("RFC 5041 §8.3.1 (6): a close that times out while the I/O lock is held hands the release to its holder")
    void closeTimingOutUnderHeldLock_releasesStagingAndListener_5041_8_3_1() throws Exception {
        try (SoftFixture f = new SoftFixture()) {
            f.listen(2);
            CompletableFuture<Connection> acc = accept(f);
            try (RawInitiator raw = RawInitiator.connect(f.address(), false, true, false, OPS, OPS)) {
                SoftConnection c = stalledWriter(f, raw, acc);
                SoftStream s = c.stream();
                CountDownLatch held = new CountDownLatch(1);
                CountDownLatch letGo = new CountDownLatch(1);
                Thread holder = new Thread(() -> {
                    s.io.lock(); // the reactor's closeByUser waits for it: close times out, closes from outside
                    try {
                        held.countDown();
                        letGo.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } finally {
                        s.io.unlock();
                    }
                }, "io-holder");
                holder.start();
                try {
                    assertTrue(held.await(5, TimeUnit.SECONDS));
                    c.close(); // waits 2 s for the reactor, then closes from the caller while the lock is held
                    org.jwarp.verbs.WorkCompletion[] wcs = SoftFixture.wcs(OPS);
                    assertEquals(0, f.cq2.poll(wcs, OPS), "WRs flushed while another thread held the stream's I/O lock");
                    assertEquals(1, f.device.buffers().stagingInUse(),
                            "the staging area went back while another thread held the stream's I/O lock");
                } finally {
                    letGo.countDown();
                    holder.join(5000);
                }
                assertReleased(f);
                for (int i = 0; i < OPS; i++) {
                    assertEquals(org.jwarp.verbs.WcStatus.WR_FLUSH_ERR, SoftFixture.one(f.cq2).status,
                            "the Writes flush once the holder lets go (RFC 5040 §6.2.2)");
                }
            }
        }
    }

    /** A soft responder whose Writes wait for a raw peer that reads nothing: staging lent, slices pending. */
    private static CompletableFuture<Connection> accept(SoftFixture f) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                ConnectionRequest r = f.listener.next(Duration.ofSeconds(5));
                return r.accept(f.responderQp(), SoftFixture.p2p().ird(OPS)
                        .rtrTypes(RtrType.WRITE, RtrType.READ, RtrType.SEND).build());
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
    }

    private static SoftConnection stalledWriter(SoftFixture f, RawInitiator raw, CompletableFuture<Connection> acc)
            throws Exception {
        SoftConnection c = (SoftConnection) acc.get(SoftFixture.SETUP_SECONDS, TimeUnit.SECONDS);
        SoftMemoryRegion src = f.region(f.pd2, REGION, Access.LOCAL_WRITE, Access.REMOTE_READ);
        raw.writeRtr();
        raw.flush();
        SendRequest wr = new SendRequest();
        for (int i = 0; i < OPS; i++) {
            c.queuePair().postSend(wr.write(i, src, 0, REGION, 0, 0x5500));
        }
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(SoftFixture.SETUP_SECONDS);
        while (f.device.buffers().stagingInUse() == 0 || !referencing(c.stream())) {
            if (System.nanoTime() > until) {
                throw new AssertionError("the writer never held staging with slices pending");
            }
            Thread.sleep(10);
        }
        assertEquals(1, f.device.stags().revocationListeners(), "the writer's revocation listener is registered");
        return c;
    }

    private static boolean referencing(SoftStream s) {
        s.io.lock();
        try {
            return s.sender.gather() != null && s.sender.gather().referencing();
        } finally {
            s.io.unlock();
        }
    }

    private static void assertReleased(SoftFixture f) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while ((f.device.buffers().stagingInUse() != 0 || f.device.stags().revocationListeners() != 0)
                && System.nanoTime() < until) {
            Thread.sleep(10);
        }
        assertEquals(0, f.device.buffers().stagingInUse(), "staging areas still lent after the close");
        assertEquals(0, f.device.stags().revocationListeners(), "a closed stream's revocation listener is still in the STag table");
    }
}
