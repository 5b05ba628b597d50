package org.jwarp.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.jwarp.ground.TermCode;
import org.jwarp.soft.cm.SoftListener;
import org.jwarp.soft.verbs.SoftMemoryRegion;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.AsyncEvent;
import org.jwarp.verbs.ConnectionTerminatedException;
import org.jwarp.verbs.ListenerConfig;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;

/**
 * Issue 31, finding 1 in the library: a listener with an idle timeout ({@link ListenerConfig}) ends
 * an established connection it accepted that does nothing for that long, as after a local error
 * (RFC 5040 §7): TERM 0/0/0 to the peer, QP to ERR, flush, QP_FATAL and CLOSED. Off by default; a
 * connection with traffic stays.
 */
class ListenerIdleTimeoutTest {
    private static final Duration IDLE = Duration.ofMillis(400);

    private static SoftListener listen(SoftFixture f, ListenerConfig config) throws Exception {
        f.listener = (SoftListener) f.device.connectionManager().listen(
                new InetSocketAddress(SoftFixture.LOOPBACK, 0), config);
        return f.listener;
    }

    @Test
    @DisplayName("RFC 5040 §7: an accepted connection idle for the listener's idle timeout ends with TERM 0/0/0, flush and QP_FATAL")
    void idleAcceptedConnectionTerminated_5040_7() throws Exception {
        try (SoftFixture f = new SoftFixture()) {
            List<AsyncEvent> events = new CopyOnWriteArrayList<>();
            f.device.setEventListener(events::add, Runnable::run);
            SoftListener l = listen(f, ListenerConfig.of(8).withIdleTimeout(IDLE));
            try (SoftFixture.Pair p = f.connect(SoftFixture.clientServer().build(), SoftFixture.clientServer().build())) {
                SoftMemoryRegion rb = f.region(f.pd2, 64, Access.LOCAL_WRITE);
                p.responder().queuePair().postRecv(7, rb, 0, 64); // outstanding: flushed when the connection ends
                long t0 = System.nanoTime();
                SoftFixture.waitUntil("the idle responder ends", () -> !p.responder().isOpen());
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                assertTrue(ms >= IDLE.toMillis() - 50, "ended after " + ms + " ms, before the idle timeout");

                ConnectionTerminatedException mine = assertInstanceOf(ConnectionTerminatedException.class,
                        p.responder().failure());
                assertEquals(TermCode.RDMAP_LOCAL_CATASTROPHIC, mine.term());
                assertFalse(mine.sentByPeer());
                assertTrue(mine.getMessage().contains("idle"), mine.getMessage());

                SoftFixture.waitUntil("the peer receives the TERM", () -> !p.initiator().isOpen());
                ConnectionTerminatedException theirs = assertInstanceOf(ConnectionTerminatedException.class,
                        p.initiator().failure(), String.valueOf(p.initiator().failure()));
                assertEquals(TermCode.RDMAP_LOCAL_CATASTROPHIC, theirs.term());
                assertTrue(theirs.sentByPeer());

                WorkCompletion wc = SoftFixture.one(f.cq2);
                assertEquals(7, wc.wrId);
                assertEquals(WcStatus.WR_FLUSH_ERR, wc.status);
                int qpn = p.responder().queuePair().qpNum();
                SoftFixture.waitUntil("QP_FATAL and CLOSED for the responder's QP", () -> events.stream()
                        .filter(e -> e.qpNum() == qpn).map(AsyncEvent::type).toList()
                        .containsAll(List.of(AsyncEvent.Type.QP_FATAL, AsyncEvent.Type.CLOSED)));
                assertEquals(1, l.counters().idleClosed());
                System.out.println("idle accepted connection ended after " + ms + " ms (idle timeout "
                        + IDLE.toMillis() + " ms)");
            }
        }
    }

    @Test
    @DisplayName("RFC 5040 §7: a connection with traffic more often than the idle timeout stays open")
    void activeConnectionStays_5040_7() throws Exception {
        try (SoftFixture f = new SoftFixture()) {
            SoftListener l = listen(f, ListenerConfig.of(8).withIdleTimeout(IDLE));
            try (SoftFixture.Pair p = f.connect(SoftFixture.clientServer().build(), SoftFixture.clientServer().build())) {
                SoftMemoryRegion src = f.region(f.pd, 64, Access.LOCAL_WRITE);
                SoftMemoryRegion rb = f.region(f.pd2, 64, Access.LOCAL_WRITE);
                SendRequest wr = new SendRequest();
                WorkCompletion[] wcs = SoftFixture.wcs(4);
                // 3 idle timeouts' worth, one Send every quarter timeout
                for (int i = 0; i < 12; i++) {
                    p.responder().queuePair().postRecv(i, rb, 0, 64);
                    p.initiator().queuePair().postSend(wr.send(i, src, 0, 8));
                    assertEquals(i, SoftFixture.one(f.cq2).wrId);
                    assertEquals(i, SoftFixture.one(f.cq).wrId);
                    Thread.sleep(IDLE.toMillis() / 4);
                }
                assertTrue(p.responder().isOpen(), String.valueOf(p.responder().failure()));
                assertTrue(p.initiator().isOpen(), String.valueOf(p.initiator().failure()));
                assertEquals(0, l.counters().idleClosed());
                assertEquals(0, f.cq2.poll(wcs, wcs.length));
            }
        }
    }

    @Test
    @DisplayName("Off by default: an idle connection accepted by a plain listener stays open")
    void offByDefault() throws Exception {
        try (SoftFixture f = new SoftFixture()) {
            SoftListener l = listen(f, ListenerConfig.of(8));
            assertFalse(ListenerConfig.of(8).idleCheck());
            try (SoftFixture.Pair p = f.connect(SoftFixture.clientServer().build(), SoftFixture.clientServer().build())) {
                Thread.sleep(3 * IDLE.toMillis());
                assertTrue(p.responder().isOpen(), String.valueOf(p.responder().failure()));
                assertEquals(0, l.counters().idleClosed());
            }
        }
    }

    @Test
    @DisplayName("RFC 5040 §7: sends stuck behind a peer that stopped reading do not keep a connection alive; they flush")
    void stuckSendsDoNotCountAsActivity_5040_7() throws Exception {
        try (SoftFixture f = new SoftFixture()) {
            SoftListener l = listen(f, ListenerConfig.of(4).withIdleTimeout(IDLE));
            java.util.concurrent.CompletableFuture<org.jwarp.verbs.Connection> acc = RawPeer.acceptClientServer(f);
            try (RawInitiator raw = RawInitiator.connect(f.address(), false, false, false, 8, 8)) { // never reads
                org.jwarp.verbs.Connection c = acc.get(SoftFixture.SETUP_SECONDS, TimeUnit.SECONDS);
                // the peer's first FPDU opens the responder's sending (RFC 5044 §7.1.2); then it reads nothing
                SoftMemoryRegion rb = f.region(f.pd2, 64, Access.LOCAL_WRITE);
                c.queuePair().postRecv(999, rb, 0, 64);
                raw.send(new byte[8]).flush();
                assertEquals(999, SoftFixture.one(f.cq2).wrId);
                SoftMemoryRegion src = f.region(f.pd2, 1 << 20, Access.LOCAL_WRITE);
                SendRequest wr = new SendRequest();
                WorkCompletion[] wcs = SoftFixture.wcs(32);
                int outstanding = 0;
                long posted = 0;
                long completed = 0;
                long flushed = 0;
                long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(SoftFixture.SETUP_SECONDS);
                // keep the send queue full of 1 MiB Sends until the connection ends
                while (c.isOpen() && System.nanoTime() - end < 0) {
                    try {
                        while (outstanding < 32) {
                            c.queuePair().postSend(wr.send(posted, src, 0, 1 << 20));
                            posted++;
                            outstanding++;
                        }
                    } catch (org.jwarp.verbs.RdmaException e) {
                        break; // the QP went to ERR meanwhile
                    }
                    int n = f.cq2.await(wcs, wcs.length, 50, TimeUnit.MILLISECONDS);
                    for (int i = 0; i < n; i++) {
                        outstanding--;
                        if (wcs[i].status == WcStatus.WR_FLUSH_ERR) {
                            flushed++;
                        } else {
                            completed++;
                        }
                    }
                }
                assertFalse(c.isOpen(), "the connection with stuck sends is still open");
                while (outstanding > 0) {
                    WorkCompletion wc = SoftFixture.one(f.cq2);
                    outstanding--;
                    if (wc.status == WcStatus.WR_FLUSH_ERR) {
                        flushed++;
                    }
                }
                assertTrue(flushed > 0, "no send was stuck: " + completed + " completed");
                ConnectionTerminatedException t = assertInstanceOf(ConnectionTerminatedException.class, c.failure());
                assertTrue(t.getMessage().contains("idle"), t.getMessage());
                assertEquals(1, l.counters().idleClosed());
                System.out.println("stuck sends: " + completed + " MiB taken by the socket, then " + flushed
                        + " flushed at the idle timeout");
            }
        }
    }
}
