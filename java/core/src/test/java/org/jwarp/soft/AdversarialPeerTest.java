package org.jwarp.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.jwarp.mpa.MpaFrame;
import org.jwarp.mpa.MpaFrameLimits;
import org.jwarp.ground.TermCode;
import org.jwarp.soft.cm.SoftListener;
import org.jwarp.soft.verbs.SoftMemoryRegion;
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
            // closed streams give their transmit staging back (on a later reactor turn), not to the GC
            int lent = -1;
            for (int i = 0; i < 500 && lent != 0; i++) {
                lent = f.device.buffers().stagingInUse();
                Thread.sleep(10);
            }
            assertEquals(0, lent, "staging areas still lent after every stream closed");
            assertTrue(f.device.buffers().stagingFree() >= 1, "no staging area came back to the pool");
            assertTrue(f.device.buffers().pooledBytes() <= SoftDevice.POOLED_BUFFER_BYTES, "pool over its cap");
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

    @Test
    @DisplayName("RFC 6581 §9.3: a partial FPDU that never completes ends in TERM 2/0/5 and a close after the stall timeout")
    void stalledPartialFpduGetsTerm5_6581_9_3() throws Exception {
        try (SoftFixture f = new SoftFixture(RawPeer.stallConfig(Duration.ofMillis(300)))) {
            try (RawPeer p = RawPeer.connect(f)) {
                RawInitiator raw = p.raw();
                Connection c = p.conn();
                SoftMemoryRegion rb = f.region(f.pd2, 64, org.jwarp.verbs.Access.LOCAL_WRITE);
                c.queuePair().postRecv(1, rb, 0, 64);
                byte[] partial = new byte[12];
                partial[0] = (byte) 0xFF; // ULPDU length 65535: the rest never comes
                partial[1] = (byte) 0xFF;
                long t0 = System.nanoTime();
                raw.peer.send(partial);
                assertEquals(TermCode.MPA_LOCAL_CATASTROPHIC, raw.peer.readTerm());
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                assertTrue(ms >= 250 && ms < 3000, "TERM after the stall timeout, took " + ms + " ms");
                assertTrue(raw.peer.closedByPeer(), "then the connection closes");
                assertEquals(org.jwarp.verbs.WcStatus.WR_FLUSH_ERR, SoftFixture.one(f.cq2).status);
                assertInstanceOf(org.jwarp.verbs.RdmaTimeoutException.class, c.failure());
            }
            legitRoundTrip(f);
        }
    }

    @Test
    @DisplayName("RFC 5044 §4: FPDUs that keep completing are no stall, though a partial one is always pending")
    void tricklingButProgressingIsNoStall_5044_4() throws Exception {
        try (SoftFixture f = new SoftFixture(RawPeer.stallConfig(Duration.ofMillis(1000)))) {
            try (RawPeer p = RawPeer.connect(f)) {
                RawInitiator raw = p.raw();
                Connection c = p.conn();
                SoftMemoryRegion rb = f.region(f.pd2, 64 * 24, org.jwarp.verbs.Access.LOCAL_WRITE);
                int n = 24;
                for (int i = 0; i < n; i++) {
                    c.queuePair().postRecv(i, rb, i * 64, 64);
                }
                byte[] all = new byte[0];
                for (int i = 0; i < n; i++) {
                    raw.send(new byte[16]);
                }
                all = raw.take();
                int fpdu = all.length / n;
                // half an FPDU, then each time the rest of one and half of the next: a partial FPDU
                // is pending for the whole 2.4 s (over twice the stall timeout), but one completes
                // every 100 ms (a sleep may overshoot by up to ~900 ms on a loaded machine)
                raw.peer.send(java.util.Arrays.copyOfRange(all, 0, fpdu / 2));
                for (int i = 0; i < n; i++) {
                    Thread.sleep(100);
                    int from = i * fpdu + fpdu / 2;
                    int to = Math.min(all.length, from + fpdu);
                    raw.peer.send(java.util.Arrays.copyOfRange(all, from, to));
                }
                for (int i = 0; i < n; i++) {
                    assertEquals(org.jwarp.verbs.WcStatus.SUCCESS, SoftFixture.one(f.cq2).status);
                }
                assertTrue(c.isOpen(), "no stall TERM: " + c.failure());
            }
        }
    }

    private static void awaitPending(SoftListener l, int n) throws InterruptedException {
        for (int i = 0; i < 500 && l.counters().pending() != n; i++) {
            Thread.sleep(10);
        }
        assertEquals(n, l.counters().pending(), "pending connections on the listener");
    }

    private static void awaitReady(SoftListener l, int n) throws InterruptedException {
        for (int i = 0; i < 500 && l.counters().ready() != n; i++) {
            Thread.sleep(10);
        }
        assertEquals(n, l.counters().ready(), "requests waiting for the ULP");
    }

    private static void assertAccepted(SoftFixture f, EvilPeer peer) throws Exception {
        ConnectionRequest r = f.listener.next(Duration.ofSeconds(5));
        Connection c = r.accept(f.responderQp(), SoftFixture.clientServer().build());
        assertTrue(c.isOpen());
        MpaFrame rep = MpaFrame.decode(peer.readFrame(), MpaFrameLimits.RFC);
        assertTrue(!rep.reject(), "the peer got an accepting Reply");
        c.close();
    }

    @Test
    @DisplayName("RFC 6581 §9.3: a full pending set evicts its oldest connection without a complete MPA Request (TERM 2/0/5), never one awaiting its decision")
    void fullPendingSetEvictsOldestSilent_6581_9_3() throws Exception {
        byte[] req = SoftHandshakeFaultTest.request(false, false, new byte[0]);
        try (SoftFixture f = new SoftFixture()) { // 5 s handshake timeouts: nothing here times out
            SoftListener l = f.listen(2);
            try (EvilPeer a = EvilPeer.connect(l.localAddress())) {
                a.send(req);
                awaitReady(l, 1); // a: the oldest, its Request complete, waiting for the ULP
                try (EvilPeer b = EvilPeer.connect(l.localAddress())) {
                    awaitPending(l, 2);
                    try (EvilPeer c = EvilPeer.connect(l.localAddress())) {
                        assertEquals(TermCode.MPA_LOCAL_CATASTROPHIC, b.readTerm(), "silent b evicted, not a");
                        assertTrue(b.closedByPeer());
                        assertEquals(1, l.counters().evicted());
                        awaitPending(l, 2);
                        c.send(java.util.Arrays.copyOf(req, 10)); // slow loris: a partial Request
                        Thread.sleep(50);
                        try (EvilPeer d = EvilPeer.connect(l.localAddress())) {
                            assertEquals(TermCode.MPA_LOCAL_CATASTROPHIC, c.readTerm(), "a partial Request is no Request");
                            assertTrue(c.closedByPeer());
                            assertEquals(2, l.counters().evicted());
                            d.send(req);
                            awaitReady(l, 2);
                            // both pending connections sent their Request: a newcomer is refused
                            try (EvilPeer e = EvilPeer.connect(l.localAddress())) {
                                assertTrue(e.closedByPeer(), "refused");
                            } catch (java.net.SocketException e) {
                                // reset while setting up the streams: refused
                            }
                            assertEquals(1, l.counters().refused());
                            assertEquals(2, l.counters().evicted());
                            assertAccepted(f, a);
                            assertAccepted(f, d);
                        }
                    }
                }
            }
            legitRoundTrip(f);
        }
    }

    /**
     * {@code n} hostile connections held open by one NIO thread: half silent, half slow loris (10
     * bytes of a Request, then nothing); each one the listener closes is opened again at once.
     */
    static final class Storm implements AutoCloseable {
        private final java.nio.channels.Selector sel = java.nio.channels.Selector.open();
        private final InetSocketAddress target;
        private final Thread thread;
        private volatile boolean stop;
        final AtomicInteger reconnects = new AtomicInteger();
        final AtomicInteger open = new AtomicInteger();
        private final byte[] partial = java.util.Arrays.copyOf(SoftHandshakeFaultTest.request(false, false,
                new byte[0]), 10);

        Storm(InetSocketAddress target, int n) throws java.io.IOException {
            this.target = target;
            for (int i = 0; i < n; i++) {
                open(i % 2 == 1);
            }
            thread = new Thread(this::run, "storm");
            thread.setDaemon(true);
            thread.start();
        }

        private void open(boolean loris) throws java.io.IOException {
            java.nio.channels.SocketChannel ch = java.nio.channels.SocketChannel.open(target);
            if (loris) {
                try {
                    ch.write(java.nio.ByteBuffer.wrap(partial));
                } catch (java.io.IOException e) {
                    // closed by the listener already: the read below sees it and reconnects
                }
            }
            ch.configureBlocking(false);
            ch.register(sel, java.nio.channels.SelectionKey.OP_READ, loris);
            open.incrementAndGet();
        }

        private void run() {
            java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocate(4096);
            try {
                while (!stop) {
                    sel.select(50);
                    for (java.nio.channels.SelectionKey k : sel.selectedKeys()) {
                        java.nio.channels.SocketChannel ch = (java.nio.channels.SocketChannel) k.channel();
                        int r;
                        try {
                            buf.clear();
                            r = ch.read(buf);
                        } catch (java.io.IOException e) {
                            r = -1;
                        }
                        if (r < 0) {
                            k.cancel();
                            ch.close();
                            open.decrementAndGet();
                            try {
                                open((Boolean) k.attachment()); // the reconnect loop
                                reconnects.incrementAndGet();
                            } catch (java.io.IOException e) {
                                // refused or reset while connecting: try again next turn
                                reopenLater++;
                            }
                        }
                    }
                    sel.selectedKeys().clear();
                    for (; reopenLater > 0 && !stop; reopenLater--) {
                        try {
                            open(reopenLater % 2 == 1);
                        } catch (java.io.IOException e) {
                            break;
                        }
                    }
                }
            } catch (java.io.IOException e) {
                // closing
            }
        }

        private int reopenLater;

        @Override
        public void close() throws Exception {
            stop = true;
            thread.join(5000);
            for (java.nio.channels.SelectionKey k : sel.keys()) {
                k.channel().close();
            }
            sel.close();
        }
    }

    @Test
    @DisplayName("RFC 6581 §9.3: with 300 silent and slow-loris connections reconnecting as they are evicted, a legit client connects at once")
    void legitClientConnectsThroughStorm_6581_9_3() throws Exception {
        try (SoftFixture f = new SoftFixture()) { // 5 s handshake timeouts, backlog 16: eviction does the work
            SoftListener l = f.listen(16);
            AtomicBoolean stop = new AtomicBoolean();
            CompletableFuture<Void> server = CompletableFuture.runAsync(() -> {
                while (!stop.get()) {
                    try {
                        ConnectionRequest r = l.next(Duration.ofMillis(100));
                        r.accept(f.responderQp(), SoftFixture.clientServer().build()).close();
                    } catch (RdmaException e) {
                        // no request within 100 ms
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
            long ts = System.nanoTime();
            try (Storm storm = new Storm(l.localAddress(), 300)) {
                System.out.printf("storm: 300 opened in %d ms%n", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - ts));
                Thread.sleep(300);
                long worst = 0;
                for (int i = 0; i < 10; i++) {
                    long t0 = System.nanoTime();
                    Connection c = f.device.connectionManager().connect(l.localAddress(), f.initiatorQp(),
                            SoftFixture.clientServer().build(), Duration.ofSeconds(5));
                    worst = Math.max(worst, System.nanoTime() - t0);
                    c.close();
                }
                long worstMs = TimeUnit.NANOSECONDS.toMillis(worst);
                System.out.printf("storm: 10 legit connects, worst %d ms; %d evicted, %d refused, %d storm reconnects,"
                        + " %d open%n", worstMs, l.counters().evicted(), l.counters().refused(), storm.reconnects.get(),
                        storm.open.get());
                assertTrue(l.counters().evicted() >= 284, "the storm filled the pending set and was evicted: "
                        + l.counters().evicted());
                assertTrue(worstMs < 3000, "legit connect took " + worstMs + " ms (goal 1 s)");
            } finally {
                stop.set(true);
                server.get(5, TimeUnit.SECONDS);
            }
        }
    }

    /**
     * Round trips (Send, answering Send) on a legit pair. Returns, per round trip, its time in
     * nanoseconds and how many FPDUs {@code flood} decoded meanwhile (the reactor's work for the
     * flooding peer while the legit one waited).
     */
    private static long[][] roundTrips(SoftFixture f, SoftFixture.Pair p, int n, SoftStream flood) throws Exception {
        SoftMemoryRegion a = f.region(f.pd, 64, org.jwarp.verbs.Access.LOCAL_WRITE);
        SoftMemoryRegion b = f.region(f.pd2, 64, org.jwarp.verbs.Access.LOCAL_WRITE);
        long[][] out = new long[2][n];
        for (int i = 0; i < n; i++) {
            long t0 = System.nanoTime();
            long f0 = flood.fpdusReceived();
            p.responder().queuePair().postRecv(1, b, 0, 64);
            p.initiator().queuePair().postRecv(2, a, 0, 64);
            p.initiator().queuePair().postSend(new org.jwarp.verbs.SendRequest().send(3, a, 0, 16));
            assertEquals(1, SoftFixture.one(f.cq2).wrId);
            p.responder().queuePair().postSend(new org.jwarp.verbs.SendRequest().send(4, b, 0, 16));
            for (int got = 0; got < 2; got++) { // the Send's completion and the answer, in either order
                assertEquals(org.jwarp.verbs.WcStatus.SUCCESS, SoftFixture.one(f.cq).status);
            }
            assertEquals(4, SoftFixture.one(f.cq2).wrId);
            out[0][i] = System.nanoTime() - t0;
            out[1][i] = flood.fpdusReceived() - f0;
        }
        return out;
    }

    @Test
    @DisplayName("RFC 5041 §5: a flood of tiny valid RDMA Writes on one connection does not starve another on the same reactor")
    void tinyFpduFloodDoesNotStarveOthers_5041_5() throws Exception {
        // receive polling off: every completion comes from the one reactor both connections share
        SoftConfig cfg = SoftConfig.defaults().withTimeouts(Duration.ofSeconds(5), Duration.ofSeconds(5),
                Duration.ofSeconds(5)).withPolling(0, 4, 1000).withReactors(1);
        try (SoftFixture f = new SoftFixture(cfg)) {
            SoftMemoryRegion target = f.region(f.pd2, 4096, org.jwarp.verbs.Access.LOCAL_WRITE,
                    org.jwarp.verbs.Access.REMOTE_WRITE);
            try (RawPeer peer = RawPeer.connect(f)) {
                RawInitiator raw = peer.raw();
                Connection flooded = peer.conn();
                for (int i = 0; i < 4096; i++) {
                    raw.write(target.rkey(), target.address() + (i % 4096), new byte[] {(byte) i});
                }
                byte[] burst = raw.take(); // 4096 FPDUs of 24 bytes
                AtomicBoolean stop = new AtomicBoolean();
                AtomicInteger bursts = new AtomicInteger();
                Thread flood = new Thread(() -> {
                    try {
                        while (!stop.get()) {
                            raw.peer.send(burst);
                            bursts.incrementAndGet();
                        }
                    } catch (java.io.IOException e) {
                        // closed at the end
                    }
                }, "flood");
                flood.start();
                try (SoftFixture.Pair p = f.connect(SoftFixture.clientServer().build(),
                        SoftFixture.clientServer().build())) {
                    Thread.sleep(200);
                    SoftStream fs = ((SoftConnection) flooded).stream();
                    long[][] rt = roundTrips(f, p, 51, fs);
                    long[] ms = java.util.Arrays.stream(rt[0]).map(TimeUnit.NANOSECONDS::toMillis).sorted().toArray();
                    long[] work = rt[1].clone();
                    java.util.Arrays.sort(work);
                    System.out.printf("flood: legit round trips median %d ms, worst %d ms; flood FPDUs decoded per"
                            + " round trip median %d, worst %d%n", ms[25], ms[50], work[25], work[50]);
                    assertTrue(work[50] > 0, "the flood ran meanwhile");
                    assertTrue(flooded.isOpen(), "the flood is valid traffic: " + flooded.failure());
                    // Per reactor turn the flooding stream gets at most READ_BUDGET bytes (2730 FPDUs of
                    // 24 bytes; before the bound, 8 x 256 KiB: up to 87381), whatever the CPU load.
                    long perTurn = fs.receiver.maxFpdusPerTurn();
                    System.out.printf("flood: at most %d FPDUs of the flood per reactor turn%n", perTurn);
                    assertTrue(perTurn > 0 && perTurn <= StreamReceive.READ_BUDGET / 24 + 1,
                            "flood FPDUs decoded in one reactor turn: " + perTurn);
                    assertTrue(ms[50] < 2000, "legit round trip took " + ms[50] + " ms under the flood");
                } finally {
                    stop.set(true);
                    raw.close();
                    flood.join(5000);
                }
            }
        }
    }

    @Test
    @DisplayName("RFC 6581 §7.1 / RFC 5044 §8: an enhanced (S=1) Request whose PD_Length cannot hold the 4 bytes of enhanced data gets TERM code 4, then close")
    void enhancedRequestWithShortPdGetsTerm4_6581_7_1() throws Exception {
        try (SoftFixture f = new SoftFixture()) {
            SoftListener l = f.listen(2);
            byte[] req = SoftHandshakeFaultTest.request(true, false, new byte[0]); // S=1, PD = the 4 bytes of IRD/ORD
            int pdAt = org.jwarp.mpa.MpaRequestReplyFlyweight.PD_LENGTH_OFFSET;
            req[pdAt] = 0;
            req[pdAt + 1] = 2;
            try (EvilPeer p = EvilPeer.connect(l.localAddress())) {
                p.send(java.util.Arrays.copyOf(req, org.jwarp.mpa.MpaRequestReplyFlyweight.HEADER_LENGTH + 2));
                assertEquals(TermCode.MPA_INVALID_REQ_REP, p.readTerm());
                assertTrue(p.closedByPeer());
            }
            legitRoundTrip(f);
        }
    }

    @Test
    @DisplayName("RFC 5041 §7.2: a Send with no receive posted gets TERM 1/2/2 and the connection closes (no receiver-not-ready retry)")
    void sendWithNoReceiveGetsTermAndClose_5041_7_2() throws Exception {
        try (SoftFixture f = new SoftFixture()) {
            try (RawPeer p = RawPeer.connect(f)) {
                RawInitiator raw = p.raw();
                Connection c = p.conn();
                raw.send(new byte[32]).flush();
                assertEquals(TermCode.DDP_UNTAGGED_MSN_NO_BUFFER, raw.peer.readTerm());
                assertTrue(raw.peer.closedByPeer(), "the connection closes");
                for (int i = 0; i < 200 && c.isOpen(); i++) {
                    Thread.sleep(10);
                }
                assertTrue(!c.isOpen(), "the local side is down too");
            }
            legitRoundTrip(f);
        }
    }
}
