package org.jwarp.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jwarp.mpa.EnhancedConnectionData;
import org.jwarp.mpa.MpaFrame;
import org.jwarp.soft.cq.SoftCompletionQueue;
import org.jwarp.soft.verbs.SoftMemoryRegion;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.jwarp.verbs.WorkRequestException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A lost LLP stream (RFC 5044 §8 code 1, RFC 5040 §6.2.2): whenever the peer closes, resets or the
 * provider shuts down, every posted WR completes (WR_FLUSH_ERR for the unfinished ones) and
 * close returns promptly.
 */
class SoftFaultTest {
    private static final Duration HANG_GUARD = Duration.ofSeconds(20);
    private static final int MIB = 1 << 20;

    /** Reaps {@code n} completions; returns how many were flushed. */
    private static int reap(SoftCompletionQueue cq, int n, long[] okOrFlushOnly) throws InterruptedException {
        int flushed = 0;
        WorkCompletion[] a = SoftFixture.wcs(64);
        int got = 0;
        while (got < n) {
            int k = cq.await(a, a.length, 5, TimeUnit.SECONDS);
            if (k == 0) {
                throw new AssertionError("only " + got + " of " + n + " completions");
            }
            for (int i = 0; i < k; i++) {
                WcStatus s = a[i].status;
                assertTrue(s == WcStatus.SUCCESS || s == WcStatus.WR_FLUSH_ERR, a[i].toString());
                flushed += s == WcStatus.WR_FLUSH_ERR ? 1 : 0;
                okOrFlushOnly[0]++;
            }
            got += k;
        }
        return flushed;
    }

    @Test
    @DisplayName("RFC 5040 §6.2.2: a peer that resets mid-transfer flushes every outstanding WR; close does not hang")
    void peerResetMidTransferFlushes_5040_6_2_2() throws Exception {
        assertTimeoutPreemptively(HANG_GUARD, () -> {
            try (SoftFixture f = new SoftFixture(); ServerSocket ss = new ServerSocket(0, 4, SoftFixture.LOOPBACK)) {
                java.util.concurrent.CountDownLatch posted = new java.util.concurrent.CountDownLatch(1);
                CompletableFuture<Void> peer = CompletableFuture.runAsync(() -> {
                    try (EvilPeer p = EvilPeer.accept(ss)) {
                        p.readFrame();
                        p.send(MpaFrame.reply().crc(true).revision(2)
                                .enhancedData(new EnhancedConnectionData(false, false, false, false, 8, 8)).build()
                                .toBytes());
                        posted.await(5, TimeUnit.SECONDS);
                        p.read(64 * 1024);
                        p.socket.setSoLinger(true, 0);
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                });
                QueuePairConfig qpc = QueuePairConfig.of(f.pd, f.cq, 40);
                Connection c = f.device.connectionManager().connect(
                        new InetSocketAddress(SoftFixture.LOOPBACK, ss.getLocalPort()), qpc,
                        SoftFixture.clientServer().build(), Duration.ofSeconds(5));
                SoftMemoryRegion src = f.region(f.pd, MIB, Access.LOCAL_WRITE);
                SoftMemoryRegion rb = f.region(f.pd, 1024, Access.LOCAL_WRITE);
                SendRequest wr = new SendRequest();
                int writes = 32;
                for (int i = 0; i < writes; i++) {
                    c.queuePair().postSend(wr.write(i, src, 0, MIB, 0x1000, 0x4242));
                }
                for (int i = 0; i < 4; i++) {
                    c.queuePair().postRecv(100 + i, rb, i * 256, 256);
                }
                posted.countDown();
                peer.get(10, TimeUnit.SECONDS);
                long[] total = {0};
                int flushed = reap(f.cq, writes + 4, total);
                assertEquals(writes + 4, total[0]);
                assertTrue(flushed >= 4 + 1, "receives and the untransmitted writes flush: " + flushed);
                assertFalse(c.isOpen());
                assertNotNull(c.failure());
                assertThrows(WorkRequestException.class, () -> c.queuePair().postSend(wr.send(1, null, 0, 0)));
                c.close();
                assertEquals(0, f.cq.poll(SoftFixture.wcs(4), 4), "nothing completes twice");
            }
        });
    }

    @Test
    @DisplayName("RFC 5040 §6.2.2: the peer closing its QP flushes this side's posted receives and queued sends")
    void peerCloseFlushesPosted_5040_6_2_2() throws Exception {
        assertTimeoutPreemptively(HANG_GUARD, () -> {
            try (SoftFixture f = new SoftFixture();
                 SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
                SoftMemoryRegion rb = f.region(f.pd, 4096, Access.LOCAL_WRITE);
                for (int i = 0; i < 8; i++) {
                    p.initiator().queuePair().postRecv(i, rb, i * 512, 512);
                }
                p.responder().close();
                WorkCompletion[] a = SoftFixture.wcs(8);
                int got = 0;
                while (got < 8) {
                    int k = f.cq.await(a, 8, 5, TimeUnit.SECONDS);
                    assertTrue(k > 0, "flush completions");
                    for (int i = 0; i < k; i++) {
                        assertEquals(WcStatus.WR_FLUSH_ERR, a[i].status);
                        assertEquals(WcOpcode.RECV, a[i].opcode);
                        assertEquals(got + i, a[i].wrId, "flushed in posting order");
                    }
                    got += k;
                }
                assertFalse(p.responder().isOpen());
                for (int i = 0; i < 200 && p.initiator().isOpen(); i++) {
                    Thread.sleep(10);
                }
                assertFalse(p.initiator().isOpen());
            }
        });
    }

    @Test
    @DisplayName("Closing the provider with live connections flushes their WRs and returns")
    void providerCloseFlushes() throws Exception {
        assertTimeoutPreemptively(HANG_GUARD, () -> {
            SoftFixture f = new SoftFixture();
            SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build());
            SoftMemoryRegion rb = f.region(f.pd, 1024, Access.LOCAL_WRITE);
            SoftMemoryRegion rb2 = f.region(f.pd2, 1024, Access.LOCAL_WRITE);
            p.initiator().queuePair().postRecv(1, rb, 0, 64);
            p.responder().queuePair().postRecv(2, rb2, 0, 64);
            f.provider.close();
            WorkCompletion[] a = SoftFixture.wcs(2);
            assertEquals(1, f.cq.poll(a, 2));
            assertEquals(WcStatus.WR_FLUSH_ERR, a[0].status);
            assertEquals(1, f.cq2.poll(a, 2));
            assertEquals(WcStatus.WR_FLUSH_ERR, a[0].status);
            assertFalse(p.initiator().isOpen());
            p.close();
        });
    }

    @Test
    @DisplayName("RFC 6581 §9.2: WRs the fenced responder queued before the RTR flush when the peer disappears")
    void fencedPostsFlushOnClose_6581_9_2() throws Exception {
        assertTimeoutPreemptively(HANG_GUARD, () -> {
            try (SoftFixture f = new SoftFixture()) {
                f.listen(2);
                CompletableFuture<Connection> acc = CompletableFuture.supplyAsync(() -> {
                    try {
                        return f.listener.next(Duration.ofSeconds(5)).accept(f.responderQp(), SoftFixture.p2p().build());
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                });
                Connection c;
                try (RawInitiator raw = RawInitiator.connect(f.address(), false, true, false, 8, 8)) {
                    c = acc.get(5, TimeUnit.SECONDS);
                    SoftMemoryRegion src = f.region(f.pd2, 256, Access.LOCAL_WRITE);
                    c.queuePair().postSend(new SendRequest().send(1, src, 0, 100));
                    c.queuePair().postSend(new SendRequest().send(2, src, 0, 100));
                }
                WorkCompletion[] a = SoftFixture.wcs(2);
                int n = 0;
                while (n < 2) {
                    int k = f.cq2.await(a, 2 - n, 5, TimeUnit.SECONDS);
                    assertTrue(k > 0);
                    for (int i = 0; i < k; i++) {
                        assertEquals(WcStatus.WR_FLUSH_ERR, a[i].status);
                    }
                    n += k;
                }
                c.close();
            }
        });
    }

    @Test
    @DisplayName("Closing a connection twice, and after the peer vanished, returns at once")
    void closeIsIdempotent() throws Exception {
        assertTimeoutPreemptively(HANG_GUARD, () -> {
            try (SoftFixture f = new SoftFixture();
                 SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
                p.responder().close();
                p.initiator().close();
                p.initiator().close();
                assertFalse(p.initiator().isOpen());
            }
        });
    }
}
