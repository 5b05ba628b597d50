package org.jwarp.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.jwarp.mpa.MpaFrame;
import org.jwarp.mpa.MpaFrameLimits;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionRequest;
import org.jwarp.verbs.RdmaException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Hostile peers against the soft provider over loopback: each case asserts the TERM, reject or
 * close the peer gets, and that a legitimate client still connects and works afterwards. Cases
 * already covered elsewhere (bad keys, PD above 512, markers, bytes after the Request: {@link
 * SoftHandshakeFaultTest}; every DDP/RDMAP TERM, bad CRC, RTR violations: {@link SoftTermPathTest})
 * are not repeated here; this suite adds leaks, eviction, stalls and floods.
 */
class AdversarialPeerTest {

    /** A legitimate client-server connection with one Send round trip each way; fails if the provider is wedged. */
    static void legitRoundTrip(SoftFixture f) throws Exception {
        try (SoftFixture.Pair p = f.connect(SoftFixture.clientServer().build(), SoftFixture.clientServer().build())) {
            assertTrue(p.initiator().isOpen() && p.responder().isOpen(), "legit client connected");
            SoftMemoryRegion a = f.region(f.pd, 64, org.jwarp.verbs.Access.LOCAL_WRITE);
            SoftMemoryRegion b = f.region(f.pd2, 64, org.jwarp.verbs.Access.LOCAL_WRITE);
            p.responder().queuePair().postRecv(7, b, 0, 64);
            p.initiator().queuePair().postSend(new org.jwarp.verbs.SendRequest().send(8, a, 0, 16));
            assertEquals(7, SoftFixture.one(f.cq2).wrId);
            assertEquals(8, SoftFixture.one(f.cq).wrId);
        }
    }

    @Test
    @DisplayName("RFC 5044 §7.1.2: a peer resetting right after the MPA Reply leaves nothing tracked (200 cycles)")
    void resetAfterReplyLeavesNothingTracked_5044_7_1_2() throws Exception {
        int cycles = 200;
        try (SoftFixture f = new SoftFixture()) {
            SoftListener l = f.listen(16);
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger accepted = new AtomicInteger();
            CompletableFuture<Void> server = CompletableFuture.runAsync(() -> {
                while (!stop.get()) {
                    try {
                        ConnectionRequest r = l.next(Duration.ofMillis(200));
                        r.accept(f.responderQp(), SoftFixture.clientServer().build());
                        accepted.incrementAndGet(); // the ULP keeps it; the stream's own close must untrack it
                    } catch (RdmaException e) {
                        // timed out waiting, or the peer was gone before accept: fine
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
            for (int i = 0; i < cycles; i++) {
                try (EvilPeer p = EvilPeer.connect(l.localAddress())) {
                    p.send(SoftHandshakeFaultTest.request(false, false, new byte[0]));
                    MpaFrame rep = MpaFrame.decode(p.readFrame(), MpaFrameLimits.RFC);
                    assertTrue(!rep.reject(), "accepted");
                    p.socket.setSoLinger(true, 0); // RST
                }
            }
            int left = -1;
            for (int i = 0; i < 500; i++) {
                left = f.device.trackedCount(SoftConnection.class);
                if (left == 0) {
                    break;
                }
                Thread.sleep(10);
            }
            stop.set(true);
            server.get(5, TimeUnit.SECONDS);
            assertTrue(accepted.get() > 0, "some accepts returned a connection");
            assertEquals(0, left, "connections still tracked after " + cycles + " resets right after the Reply ("
                    + accepted.get() + " accepted)");
            legitRoundTrip(f);
            assertEquals(0, f.device.trackedCount(SoftConnection.class), "the legit pair was untracked on close");
        }
    }

    @Test
    @DisplayName("RFC 5044 §7.1.2: a responder resetting right after its MPA Reply leaves nothing tracked on the initiator (100 cycles)")
    void responderResetAfterReplyLeavesNothingTracked_5044_7_1_2() throws Exception {
        int cycles = 100;
        try (SoftFixture f = new SoftFixture();
             java.net.ServerSocket ss = new java.net.ServerSocket(0, 16, SoftFixture.LOOPBACK)) {
            InetSocketAddress a = new InetSocketAddress(SoftFixture.LOOPBACK, ss.getLocalPort());
            CompletableFuture<Void> evil = CompletableFuture.runAsync(() -> {
                for (int i = 0; i < cycles; i++) {
                    try (EvilPeer p = EvilPeer.accept(ss)) {
                        p.readFrame();
                        p.send(SoftHandshakeFaultTest.reply(false, new byte[0]));
                        p.socket.setSoLinger(true, 0);
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                }
            });
            int established = 0;
            for (int i = 0; i < cycles; i++) {
                try {
                    f.device.connectionManager().connect(a, f.initiatorQp(), SoftFixture.clientServer().build(),
                            Duration.ofSeconds(5)); // kept, not closed: the stream's own close must untrack it
                    established++;
                } catch (RdmaException e) {
                    // the reset won the race to the reactor: nothing was established
                }
            }
            evil.get(10, TimeUnit.SECONDS);
            int left = -1;
            for (int i = 0; i < 500; i++) {
                left = f.device.trackedCount(SoftConnection.class);
                if (left == 0) {
                    break;
                }
                Thread.sleep(10);
            }
            assertEquals(0, left, "connections still tracked after " + cycles + " resets (" + established
                    + " established)");
        }
    }
}
