package org.jwarp.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import org.jwarp.soft.cq.SoftCompletionQueue;
import org.jwarp.soft.verbs.SoftMemoryRegion;
import org.jwarp.soft.verbs.SoftProtectionDomain;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.QueuePair;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A registered region belongs to its protection domain (RFC 5041 §8.2): unbound, every stream of
 * the PD may use it at once, and so may the application. Here four connections of one PD share
 * one region, driven by several threads that post and poll, with two busy threads hogging the
 * cores, on every data path that touches the region: Send, Write and Read Response transmit
 * (zero-copy, the CRC computed over the region's bytes, RFC 5044 §4.4), inline Send, and
 * placement (Writes, Sends and Read Responses placed into disjoint parts of one region). Every
 * byte is checked, every completion must be SUCCESS, and nothing may be thrown out of
 * {@code poll}/{@code await}. Last, the application's own buffer keeps its position, limit and
 * mark through every path: the provider works on the region by absolute index only.
 */
class SoftSharedRegionTest {
    private static final int CONNS = 4;
    private static final int ROUNDS = 500;
    /** Operations each connection has in flight per round. */
    private static final int WINDOW = 4;
    /** The FPDU size: a message is several FPDUs, each referenced (zero-copy) with its CRC over the region. */
    private static final int FPDU = 16 * 1024;
    /** Several FPDUs; the odd tail needs pad (RFC 5044 §4.2). */
    private static final int MSG = 60 * 1024 + 333;
    private static final int SHARED = 1024 * 1024;
    /** A placement slot per operation in flight: odd, so the slots do not start aligned. */
    private static final int SLOT = MSG + 3;
    /** The slots of one connection. */
    private static final int SLOTS = WINDOW * SLOT;
    private static final int SMALL = 200;
    /** Longest wait for one completion: a hang fails the test, a slow machine does not. */
    private static final long WAIT_S = 15;

    /** A region and the test's own view of its memory (made before any traffic, never handed out). */
    private record Mem(SoftMemoryRegion mr, ByteBuffer view) {
    }

    private static Mem region(SoftProtectionDomain pd, int size) throws Exception {
        ByteBuffer b = ByteBuffer.allocateDirect(size);
        return new Mem(pd.register(b, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ)),
                b.duplicate());
    }

    private static void fill(ByteBuffer b, int from, int n, int seed) {
        for (int i = 0; i < n; i++) {
            b.put(from + i, (byte) (i * 31 + (i >>> 9) + seed));
        }
    }

    /**
     * Length of operation {@code i} of a round: large (FPDUs referenced) and small (copied, below
     * the gather threshold) alternate, as in a middleware's mix.
     */
    private static int length(int i) {
        return i % 2 == 0 ? MSG : SMALL + 37 * i;
    }

    /** Source offset of operation {@code i} of round {@code r} of connection {@code k}: the connections' ranges overlap. */
    private static int offset(int k, int r, int i) {
        return (k * 7919 + r * 4099 + i * 65_537) % (SHARED - MSG - SMALL);
    }

    private static void assertBytes(ByteBuffer want, int wantAt, ByteBuffer got, int gotAt, int n, String what) {
        int m = want.slice(wantAt, n).mismatch(got.slice(gotAt, n));
        if (m >= 0) {
            throw new AssertionError(what + ": byte " + m + " of " + n + " differs");
        }
    }

    /** Waits for the next completion of {@code cq}: WR {@code id}, {@code op}, SUCCESS. */
    private static void expect(SoftCompletionQueue cq, WorkCompletion[] w, long id, WcOpcode op) throws Exception {
        int n = cq.await(w, 1, WAIT_S, TimeUnit.SECONDS);
        if (n != 1) {
            throw new AssertionError("no completion of " + op + " " + id + " within " + WAIT_S + " s (a hang)");
        }
        WorkCompletion c = w[0];
        if (c.status != WcStatus.SUCCESS || c.wrId != id || c.opcode != op) {
            throw new AssertionError("completion " + c + ", expected a successful " + op + " " + id);
        }
    }

    /** Two threads spinning for the test's life: posters, pollers and reactors fight for the cores. */
    private static final class Hogs implements AutoCloseable {
        private volatile boolean stop;
        private final Thread[] threads = new Thread[2];

        Hogs() {
            for (int i = 0; i < threads.length; i++) {
                threads[i] = new Thread(() -> {
                    long x = 0;
                    while (!stop) {
                        x++;
                    }
                    if (x == 42) {
                        Thread.yield();
                    }
                }, "cpu-hog-" + i);
                threads[i].setDaemon(true);
                threads[i].start();
            }
        }

        @Override
        public void close() throws InterruptedException {
            stop = true;
            for (Thread t : threads) {
                t.join();
            }
        }
    }

    private interface Work {
        void run(int k, QueuePair initiator, QueuePair responder, SoftCompletionQueue icq, SoftCompletionQueue rcq,
                 WorkCompletion[] w) throws Exception;
    }

    /**
     * {@value #CONNS} connections of one fixture, initiators on its {@code pd}, responders on
     * {@code pd2}, every end with a CQ of its own; two CPU hogs while it is open.
     */
    private static final class Bench implements AutoCloseable {
        final SoftFixture f;
        final SoftFixture.Pair[] pairs = new SoftFixture.Pair[CONNS];
        final SoftCompletionQueue[] icq = new SoftCompletionQueue[CONNS];
        final SoftCompletionQueue[] rcq = new SoftCompletionQueue[CONNS];
        final Queue<Throwable> errors = new ConcurrentLinkedQueue<>();
        final List<Thread> workers = new ArrayList<>();
        final List<Thread> servers = new ArrayList<>();
        volatile boolean serving = true;
        Hogs hogs;

        Bench(int inline) throws Exception {
            f = new SoftFixture(SoftFixture.defaultConfig().withBuffers(FPDU, 64 * 1024).withReactors(2));
            try {
                for (int k = 0; k < CONNS; k++) {
                    icq[k] = f.device.createCompletionQueue(64);
                    rcq[k] = f.device.createCompletionQueue(64);
                    QueuePairConfig iq = QueuePairConfig.of(f.pd, icq[k], 16).withInline(inline);
                    QueuePairConfig rq = QueuePairConfig.of(f.pd2, rcq[k], 16);
                    pairs[k] = f.connect(iq, rq, SoftFixture.p2p().build(), r -> SoftFixture.p2p().build());
                }
            } catch (Exception e) {
                f.close();
                throw e;
            }
        }

        /** Starts the hogs and one thread per connection running {@code work}. */
        void perConnection(Work work) {
            hogs = new Hogs();
            for (int k = 0; k < CONNS; k++) {
                int c = k;
                Thread t = new Thread(() -> {
                    try {
                        work.run(c, pairs[c].initiator().queuePair(), pairs[c].responder().queuePair(), icq[c],
                                rcq[c], SoftFixture.wcs(1));
                    } catch (Throwable e) {
                        errors.add(e);
                    }
                }, "conn-" + k);
                workers.add(t);
                t.start();
            }
        }

        /**
         * A server thread per responder CQ, alternating {@code poll} and {@code await} as
         * middleware's do: it drives its streams (answers Read Requests inline). No completion is
         * expected on those CQs.
         */
        void serve() {
            for (int k = 0; k < CONNS; k++) {
                SoftCompletionQueue q = rcq[k];
                Thread t = new Thread(() -> {
                    WorkCompletion[] w = SoftFixture.wcs(4);
                    try {
                        for (long turn = 0; serving; turn++) {
                            int n = (turn & 1) == 0 ? q.poll(w, 4) : q.await(w, 4, 2, TimeUnit.MILLISECONDS);
                            for (int i = 0; i < n; i++) {
                                errors.add(new AssertionError("unexpected server completion " + w[i]));
                            }
                        }
                    } catch (Throwable e) {
                        errors.add(e);
                    }
                }, "server-" + k);
                servers.add(t);
                t.start();
            }
        }

        /** Waits for the workers (a hung one fails the test), stops the servers, fails with the first error. */
        void finish() throws Exception {
            for (Thread t : workers) {
                t.join(TimeUnit.SECONDS.toMillis(4 * WAIT_S));
                if (t.isAlive()) {
                    errors.add(new AssertionError(t.getName() + " still running (a hang)"));
                }
            }
            serving = false;
            for (Thread t : servers) {
                t.join(TimeUnit.SECONDS.toMillis(WAIT_S));
            }
            if (!errors.isEmpty()) {
                AssertionError e = new AssertionError(errors.size() + " failure(s); first: " + errors.peek(), errors.peek());
                errors.stream().skip(1).limit(8).forEach(e::addSuppressed);
                throw e;
            }
        }

        @Override
        public void close() throws Exception {
            serving = false;
            if (hogs != null) {
                hogs.close();
            }
            f.close();
        }
    }

    @Test
    @DisplayName("RFC 5041 §8.2, RFC 5044 §4.4: Sends from one region shared by four connections of its PD, posted and polled from four threads under CPU contention, arrive intact into disjoint parts of one shared receive region")
    void sendsFromSharedRegionIntact_5041_8_2() throws Exception {
        try (Bench b = new Bench(0)) {
            Mem src = region(b.f.pd, SHARED);
            Mem dst = region(b.f.pd2, CONNS * SLOTS);
            fill(src.view(), 0, SHARED, 0);
            b.perConnection((k, iq, rq, icq, rcq, w) -> {
                SendRequest[] s = requests();
                for (int r = 0; r < ROUNDS; r++) {
                    for (int i = 0; i < WINDOW; i++) {
                        rq.postRecv(i, dst.mr(), (long) k * SLOTS + i * SLOT, MSG);
                        s[i].send(i, src.mr(), offset(k, r, i), length(i)).next = i + 1 < WINDOW ? s[i + 1] : null;
                    }
                    iq.postSend(s[0]);
                    for (int i = 0; i < WINDOW; i++) {
                        expect(icq, w, i, WcOpcode.SEND);
                    }
                    for (int i = 0; i < WINDOW; i++) {
                        expect(rcq, w, i, WcOpcode.RECV);
                        assertBytes(src.view(), offset(k, r, i), dst.view(), k * SLOTS + i * SLOT, length(i),
                                "conn " + k + " round " + r + " Send " + i);
                    }
                }
            });
            b.finish();
        }
    }

    @Test
    @DisplayName("RFC 5041 §8.2, RFC 5044 §4.4: Writes from one region shared by four connections of its PD, posted and polled from four threads under CPU contention, are placed intact into disjoint parts of one shared target region")
    void writesFromSharedRegionIntact_5041_8_2() throws Exception {
        try (Bench b = new Bench(0)) {
            Mem src = region(b.f.pd, SHARED);
            Mem dst = region(b.f.pd2, CONNS * SLOTS);
            Mem commit = region(b.f.pd2, CONNS * SMALL);
            fill(src.view(), 0, SHARED, 1);
            b.perConnection((k, iq, rq, icq, rcq, w) -> {
                SendRequest[] s = requests();
                SendRequest send = new SendRequest();
                long at = dst.mr().address() + (long) k * SLOTS;
                for (int r = 0; r < ROUNDS; r++) {
                    rq.postRecv(r, commit.mr(), (long) k * SMALL, SMALL);
                    // the Send follows the Writes: once it is received, they are placed (RFC 5040 §5.5)
                    send.send(WINDOW, src.mr(), offset(k, r, 0), SMALL);
                    for (int i = 0; i < WINDOW; i++) {
                        s[i].write(i, src.mr(), offset(k, r, i), length(i), at + i * SLOT, dst.mr().rkey()).next =
                                i + 1 < WINDOW ? s[i + 1] : send;
                    }
                    iq.postSend(s[0]);
                    for (int i = 0; i < WINDOW; i++) {
                        expect(icq, w, i, WcOpcode.RDMA_WRITE);
                    }
                    expect(icq, w, WINDOW, WcOpcode.SEND);
                    expect(rcq, w, r, WcOpcode.RECV);
                    for (int i = 0; i < WINDOW; i++) {
                        assertBytes(src.view(), offset(k, r, i), dst.view(), k * SLOTS + i * SLOT, length(i),
                                "conn " + k + " round " + r + " Write " + i);
                    }
                }
            });
            b.finish();
        }
    }

    @Test
    @DisplayName("RFC 5041 §8.2, RFC 5044 §4.4: four connections RDMA-Read one region shared by the responder's PD while server threads poll and await, under CPU contention: every Read Response intact, placed into disjoint parts of one shared sink region")
    void readResponsesFromSharedRegionIntact_5041_8_2() throws Exception {
        try (Bench b = new Bench(0)) {
            Mem src = region(b.f.pd2, SHARED);
            Mem sink = region(b.f.pd, CONNS * SLOTS);
            fill(src.view(), 0, SHARED, 2);
            b.serve();
            b.perConnection((k, iq, rq, icq, rcq, w) -> {
                SendRequest[] s = requests();
                for (int r = 0; r < ROUNDS; r++) {
                    for (int i = 0; i < WINDOW; i++) {
                        s[i].read(i, sink.mr(), (long) k * SLOTS + i * SLOT, length(i), src.mr().address() + offset(k, r, i),
                                src.mr().rkey()).next = i + 1 < WINDOW ? s[i + 1] : null;
                    }
                    iq.postSend(s[0]);
                    for (int i = 0; i < WINDOW; i++) {
                        expect(icq, w, i, WcOpcode.RDMA_READ);
                        assertBytes(src.view(), offset(k, r, i), sink.view(), k * SLOTS + i * SLOT, length(i),
                                "conn " + k + " round " + r + " Read " + i);
                    }
                }
            });
            b.finish();
        }
    }

    @Test
    @DisplayName("RFC 5041 §8.2, RFC 5044 §4.4: inline Sends copied from one region while the PD's streams reference FPDUs of the same region, four connections and threads under CPU contention: every Send arrives intact")
    void inlineSendsFromSharedRegionIntact_5041_8_2() throws Exception {
        try (Bench b = new Bench(SoftProvider.MAX_INLINE_DATA)) {
            Mem src = region(b.f.pd, SHARED);
            Mem dst = region(b.f.pd2, CONNS * (SLOTS + WINDOW * SMALL));
            fill(src.view(), 0, SHARED, 3);
            b.perConnection((k, iq, rq, icq, rcq, w) -> {
                SendRequest[] small = requests();
                SendRequest[] large = requests();
                int base = k * (SLOTS + WINDOW * SMALL);
                for (int r = 0; r < ROUNDS; r++) {
                    for (int i = 0; i < WINDOW; i++) {
                        rq.postRecv(2 * i, dst.mr(), base + i * SMALL, SMALL);
                        rq.postRecv(2 * i + 1, dst.mr(), base + WINDOW * SMALL + i * SLOT, MSG);
                        small[i].send(2 * i, src.mr(), offset(k, r, i) + MSG, SMALL).inline = true;
                        small[i].next = large[i].send(2 * i + 1, src.mr(), offset(k, r, i), MSG);
                        large[i].next = i + 1 < WINDOW ? small[i + 1] : null;
                    }
                    iq.postSend(small[0]);
                    for (int i = 0; i < 2 * WINDOW; i++) {
                        expect(icq, w, i, WcOpcode.SEND);
                    }
                    for (int i = 0; i < WINDOW; i++) {
                        expect(rcq, w, 2 * i, WcOpcode.RECV);
                        assertBytes(src.view(), offset(k, r, i) + MSG, dst.view(), base + i * SMALL, SMALL,
                                "inline, conn " + k + " round " + r + " Send " + i);
                        expect(rcq, w, 2 * i + 1, WcOpcode.RECV);
                        assertBytes(src.view(), offset(k, r, i), dst.view(), base + WINDOW * SMALL + i * SLOT, MSG,
                                "conn " + k + " round " + r + " Send " + i);
                    }
                }
            });
            b.finish();
        }
    }

    @Test
    @DisplayName("RFC 5041 §8.2, §7.1: Writes placed directly into disjoint parts of one region shared by the responder's PD while the same region answers the four connections' Reads, server threads polling, under CPU contention: every byte placed and read back intact")
    void directPlacementIntoSharedRegionIntact_5041_8_2() throws Exception {
        try (Bench b = new Bench(0)) {
            Mem target = region(b.f.pd2, CONNS * SLOTS);
            Mem src = region(b.f.pd, CONNS * SLOTS);
            Mem back = region(b.f.pd, CONNS * SLOTS);
            b.serve();
            b.perConnection((k, iq, rq, icq, rcq, w) -> {
                SendRequest[] write = requests();
                SendRequest[] read = requests();
                int base = k * SLOTS;
                long remote = target.mr().address() + base;
                for (int r = 0; r < ROUNDS; r++) {
                    for (int i = 0; i < WINDOW; i++) {
                        int at = base + i * SLOT;
                        fill(src.view(), at, MSG, 17 * k + 5 * r + i);
                        // RFC 5040 §5.5: a Read is answered after the Write before it was placed
                        write[i].write(2 * i, src.mr(), at, MSG, remote + i * SLOT, target.mr().rkey()).next =
                                read[i].read(2 * i + 1, back.mr(), at, MSG, remote + i * SLOT, target.mr().rkey());
                        read[i].next = i + 1 < WINDOW ? write[i + 1] : null;
                    }
                    iq.postSend(write[0]);
                    for (int i = 0; i < WINDOW; i++) {
                        expect(icq, w, 2 * i, WcOpcode.RDMA_WRITE);
                        expect(icq, w, 2 * i + 1, WcOpcode.RDMA_READ);
                        int at = base + i * SLOT;
                        assertBytes(src.view(), at, back.view(), at, MSG, "read back, conn " + k + " round " + r);
                        assertBytes(src.view(), at, target.view(), at, MSG, "placed, conn " + k + " round " + r);
                    }
                }
            });
            b.finish();
        }
    }

    private static SendRequest[] requests() {
        SendRequest[] a = new SendRequest[WINDOW];
        for (int i = 0; i < WINDOW; i++) {
            a[i] = new SendRequest();
        }
        return a;
    }

    // ------------------------------------------------------------------ the application's buffer

    private static final int POSITION = 13;
    private static final int MARK = 11;
    /** Below most ranges used: a provider that indexes the application's buffer would trip over it. */
    private static final int LIMIT = 4097;

    private static void assertUntouched(ByteBuffer app, String after) {
        assertEquals(POSITION, app.position(), "position after " + after);
        assertEquals(LIMIT, app.limit(), "limit after " + after);
        assertEquals(MARK, app.duplicate().reset().position(), "mark after " + after);
    }

    @Test
    @DisplayName("RFC 5041 §8.2: the application's registered buffer keeps its position, limit and mark while Send, inline Send, Write and Read Response read it and Writes, Sends and Read Responses are placed into it")
    void applicationBufferStateUntouchedByEveryPath_5041_8_2() throws Exception {
        try (SoftFixture f = new SoftFixture(SoftFixture.defaultConfig().withBuffers(FPDU, 64 * 1024))) {
            f.qpTweak = c -> c.withInline(SoftProvider.MAX_INLINE_DATA);
            int size = 64 * 1024;
            ByteBuffer app = ByteBuffer.allocateDirect(size);
            ByteBuffer mine = app.duplicate();
            SoftMemoryRegion mr = f.pd.register(app, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
                    Access.REMOTE_READ));
            app.limit(LIMIT).position(MARK).mark().position(POSITION);
            Mem peer = region(f.pd2, size);
            try (SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
                QueuePair me = p.initiator().queuePair();
                QueuePair other = p.responder().queuePair();
                SendRequest s = new SendRequest();
                fill(mine, 0, size, 5);

                other.postRecv(1, peer.mr(), 0, 20_000);
                me.postSend(s.send(1, mr, 5, 20_000)); // from below the mark
                assertSuccess(f, 1, 1);
                assertBytes(mine, 5, peer.view(), 0, 20_000, "Send");
                assertUntouched(app, "a zero-copy Send");

                other.postRecv(2, peer.mr(), 0, 300);
                me.postSend(s.send(2, mr, 7000, 300));
                assertSuccess(f, 1, 1);
                assertBytes(mine, 7000, peer.view(), 0, 300, "copied Send");
                assertUntouched(app, "a copied Send");

                other.postRecv(3, peer.mr(), 0, SMALL);
                s.send(3, mr, 9001, SMALL).inline = true;
                me.postSend(s);
                assertSuccess(f, 1, 1);
                assertBytes(mine, 9001, peer.view(), 0, SMALL, "inline Send");
                assertUntouched(app, "an inline Send");

                other.postRecv(4, peer.mr(), 0, 8);
                me.postSend(s.write(4, mr, 0, 30_000, peer.mr().address() + 33, peer.mr().rkey()));
                me.postSend(s.send(5, mr, 0, 8)); // once received, the Write is placed
                assertSuccess(f, 2, 1);
                assertBytes(mine, 0, peer.view(), 33, 30_000, "Write");
                assertUntouched(app, "a Write");

                other.postSend(s.read(6, peer.mr(), 0, 30_000, mr.address() + 1001, mr.rkey()));
                assertSuccess(f, 0, 1);
                assertBytes(mine, 1001, peer.view(), 0, 30_000, "Read Response");
                assertUntouched(app, "a Read Response sent from it");

                fill(peer.view(), 0, size, 9);
                me.postRecv(7, mr, 62_000, 8); // apart from where the Write goes
                other.postSend(s.write(7, peer.mr(), 0, 30_000, mr.address() + 5, mr.rkey()));
                other.postSend(s.send(8, peer.mr(), 0, 8));
                assertSuccess(f, 1, 2);
                assertBytes(peer.view(), 0, mine, 5, 30_000, "Write placed");
                assertUntouched(app, "a Write placed into it");

                me.postRecv(9, mr, 40_000, 20_000);
                other.postSend(s.send(9, peer.mr(), 77, 20_000));
                assertSuccess(f, 1, 1);
                assertBytes(peer.view(), 77, mine, 40_000, 20_000, "Send placed");
                assertUntouched(app, "a Send placed into it");

                me.postSend(s.read(10, mr, 3, 30_000, peer.mr().address() + 123, peer.mr().rkey()));
                assertSuccess(f, 1, 0);
                assertBytes(peer.view(), 123, mine, 3, 30_000, "Read Response placed");
                assertUntouched(app, "a Read Response placed into it");
            }
        }
    }

    /** {@code mine} completions on the initiator's CQ and {@code theirs} on the responder's, all SUCCESS. */
    private static void assertSuccess(SoftFixture f, int mine, int theirs) throws InterruptedException {
        for (int i = 0; i < mine; i++) {
            assertEquals(WcStatus.SUCCESS, SoftFixture.one(f.cq).status);
        }
        for (int i = 0; i < theirs; i++) {
            assertEquals(WcStatus.SUCCESS, SoftFixture.one(f.cq2).status);
        }
    }
}
