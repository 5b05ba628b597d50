package org.jwarp.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;

import org.jwarp.ground.TermCode;
import org.jwarp.soft.cq.SoftCompletionQueue;
import org.jwarp.soft.verbs.SoftMemoryRegion;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.AsyncEvent;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionTerminatedException;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.jwarp.verbs.WorkRequestException;
import org.junit.jupiter.api.Test;

/**
 * An unexpected exception on a stream's data path (a bug, not a protocol error) ends that stream
 * only, whichever thread meets it: TERM 0/0/0 local catastrophic error to the peer (RFC 5040 §4.8,
 * §7), QP to ERR, every outstanding WR flushed, QP_FATAL for that QP, {@code failure()} set. It is
 * never thrown out of the application's poll/await/postSend, and a second connection on the same
 * CQs and reactor keeps working. One injected fault ({@link FaultHook}) per site, under two CPU hogs.
 */
class SoftFaultContainmentTest {
    private static final Duration GUARD = Duration.ofSeconds(20);
    /** Bounded wait for something that must happen ("no hang"), not a speed bound. */
    private static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(15);
    private static final int SIZE = 4096;
    private static final int MSG = 64;

    /** The polling threads stay away from sockets: the reactor reads and transmits. */
    private static SoftConfig reactorOnly() {
        return SoftFixture.defaultConfig().withPolling(0, 1 << 20, 1000);
    }

    @Test
    void reactorReceiveFaultEndsThatStreamOnly_5040_7() throws Exception {
        assertTimeoutPreemptively(GUARD, () -> {
            try (Bench b = new Bench(reactorOnly())) {
                Set<Long> out = b.postReceives(b.bad.responder(), 1, 3);
                FaultHook.Site site = FaultHook.Site.REACTOR_RECEIVE;
                b.arm(b.bad.responder(), site, t -> true);
                b.bad.initiator().queuePair().postSend(new SendRequest().send(11, b.mrA, 0, MSG));
                b.awaitFired(() -> false);
                b.assertContained(b.bad.responder(), b.bad.initiator(), out);
            }
        });
    }

    @Test
    void reactorTransmitFaultOnReadResponseEndsThatStreamOnly_5040_7() throws Exception {
        assertTimeoutPreemptively(GUARD, () -> {
            try (Bench b = new Bench(reactorOnly())) {
                Set<Long> out = b.postReceives(b.bad.responder(), 1, 3);
                b.arm(b.bad.responder(), FaultHook.Site.REACTOR_TRANSMIT, t -> true);
                b.bad.initiator().queuePair().postSend(new SendRequest().read(21, b.mrA, 0, MSG, b.mrB.address(),
                        b.mrB.rkey()));
                b.awaitFired(() -> false);
                b.assertContained(b.bad.responder(), b.bad.initiator(), out);
                assertNotEquals(WcStatus.SUCCESS, b.cqA.awaitWr(b.bad.initiator(), 21).status,
                        "the Read the faulting stream never answered does not succeed");
            }
        });
    }

    @Test
    void pollReceiveFaultNeverThrowsOutOfAwait_5040_7() throws Exception {
        assertTimeoutPreemptively(GUARD, () -> {
            try (Bench b = new Bench(SoftFixture.defaultConfig())) {
                Connection r = b.bad.responder();
                Set<Long> out = b.postReceives(r, 1, 3);
                b.arm(r, FaultHook.Site.POLL_RECEIVE, t -> t == b.cqB.thread);
                // The CQ's waiting thread reads the stream while its poller holds it; a Send the
                // reactor happens to read instead completes, and the next one is tried.
                int base = b.cqB.count(r, WcOpcode.RECV, WcStatus.SUCCESS);
                for (int k = 0; !b.fired.get(); k++) {
                    assertTrue(k < 500, "the waiting thread never read the stream");
                    out.addAll(b.postReceives(r, 100 + k, 1));
                    b.bad.initiator().queuePair().postSend(new SendRequest().send(200 + k, b.mrA, 0, MSG));
                    int want = base + k + 1;
                    b.awaitFired(() -> b.cqB.count(r, WcOpcode.RECV, WcStatus.SUCCESS) >= want);
                }
                out.removeAll(b.cqB.wrIds(r, WcStatus.SUCCESS));
                b.assertContained(r, b.bad.initiator(), out);
            }
        });
    }

    @Test
    void postingThreadTransmitFaultNeverThrowsOutOfPostSend_5040_7() throws Exception {
        assertTimeoutPreemptively(GUARD, () -> {
            try (Bench b = new Bench(SoftFixture.defaultConfig())) {
                Connection r = b.bad.responder();
                Set<Long> out = b.postReceives(r, 1, 3);
                Thread poster = Thread.currentThread();
                b.arm(r, FaultHook.Site.INLINE_TRANSMIT, t -> t == poster);
                long faulting = -1;
                // The posting thread transmits when it wins the stream's lock; else the reactor does and
                // the Send completes, and the next one is tried.
                for (int k = 0; !b.fired.get(); k++) {
                    assertTrue(k < 500, "the posting thread never transmitted inline");
                    b.postReceives(b.bad.initiator(), 300 + k, 1);
                    r.queuePair().postSend(new SendRequest().send(400 + k, b.mrB, 0, MSG)); // must not throw
                    faulting = 400 + k;
                    long wr = faulting;
                    b.awaitFired(() -> b.cqB.find(r, wr) != null);
                }
                out.add(faulting);
                b.assertContained(r, b.bad.initiator(), out);
            }
        });
    }

    @Test
    void pollingThreadReadResponseFaultNeverThrowsOutOfAwait_5040_7() throws Exception {
        assertTimeoutPreemptively(GUARD, () -> {
            try (Bench b = new Bench(SoftFixture.defaultConfig())) {
                Connection r = b.bad.responder();
                Set<Long> out = b.postReceives(r, 1, 3);
                b.arm(r, FaultHook.Site.INLINE_TRANSMIT, t -> t == b.cqB.thread);
                long faulting = -1;
                // The Read Response leaves from the CQ's waiting thread when its poller read the
                // Read Request; a Read the reactor answered completes, and the next one is tried.
                for (int k = 0; !b.fired.get(); k++) {
                    assertTrue(k < 500, "the waiting thread never answered a Read Request");
                    faulting = 500 + k;
                    b.bad.initiator().queuePair().postSend(new SendRequest().read(faulting, b.mrA, 0, MSG,
                            b.mrB.address(), b.mrB.rkey()));
                    long wr = faulting;
                    b.awaitFired(() -> b.cqA.find(b.bad.initiator(), wr) != null);
                }
                b.assertContained(r, b.bad.initiator(), out);
                assertNotEquals(WcStatus.SUCCESS, b.cqA.awaitWr(b.bad.initiator(), faulting).status,
                        "the Read whose response faulted does not succeed");
            }
        });
    }

    @Test
    void virtualMachineErrorEndsTheStreamAndIsRethrownNotSwallowed_5040_7() throws Exception {
        assertTimeoutPreemptively(GUARD, () -> {
            try (Bench b = new Bench(SoftFixture.defaultConfig())) {
                Connection r = b.bad.responder();
                Set<Long> out = b.postReceives(r, 1, 3);
                b.injected = new OutOfMemoryError("injected");
                Thread poster = Thread.currentThread();
                b.arm(r, FaultHook.Site.INLINE_TRANSMIT, t -> t == poster);
                for (int k = 0; !b.fired.get(); k++) {
                    assertTrue(k < 500, "the posting thread never transmitted inline");
                    b.postReceives(b.bad.initiator(), 300 + k, 1);
                    try {
                        r.queuePair().postSend(new SendRequest().send(400 + k, b.mrB, 0, MSG));
                    } catch (OutOfMemoryError e) {
                        assertSame(b.injected, e, "the JVM's own failure reaches the caller");
                        out.add(400L + k);
                        break;
                    }
                    long wr = 400 + k;
                    b.awaitFired(() -> b.cqB.find(r, wr) != null);
                    assertTrue(!b.fired.get(), "the fault fired but postSend returned normally");
                }
                b.assertContained(r, b.bad.initiator(), out);
            }
        });
    }

    @Test
    void faultAtEverySiteOnEveryCallStillEndsThatStreamOnly_5040_7() throws Exception {
        assertTimeoutPreemptively(GUARD, () -> {
            try (Bench b = new Bench(SoftFixture.defaultConfig())) {
                Connection r = b.bad.responder();
                Set<Long> out = b.postReceives(r, 1, 3);
                SoftStream s = ((SoftConnection) r).stream();
                s.lockIo();
                try {
                    s.faults(at -> {
                        b.fired.set(true);
                        throw (RuntimeException) b.injected;
                    });
                } finally {
                    s.io.unlock();
                }
                r.queuePair().postSend(new SendRequest().send(41, b.mrB, 0, MSG)); // must not throw
                try {
                    b.bad.initiator().queuePair().postSend(new SendRequest().send(42, b.mrA, 0, MSG));
                } catch (WorkRequestException e) {
                    // The fault of the first call already ended the stream and its TERM put the
                    // peer's QP in ERR before this post: refused at post time, as the contract says.
                    assertTrue(b.fired.get(), "the peer's QP left RTS although no fault fired: " + e);
                }
                out.add(41L);
                b.awaitFired(() -> false);
                b.assertContained(r, b.bad.initiator(), out);
            }
        });
    }

    // ------------------------------------------------------------------ bench

    /** Waits on one CQ in a loop, as an application's completion thread does, keeping every completion. */
    private static final class Collector implements AutoCloseable {
        final SoftCompletionQueue cq;
        final Thread thread;
        final List<WorkCompletion> seen = new CopyOnWriteArrayList<>();
        final AtomicReference<Throwable> thrown = new AtomicReference<>();
        private volatile boolean stop;

        Collector(SoftCompletionQueue cq, String name) {
            this.cq = cq;
            thread = new Thread(this::run, name);
            thread.setDaemon(true);
            thread.start();
        }

        private void run() {
            WorkCompletion[] a = SoftFixture.wcs(16);
            while (!stop) {
                try {
                    int n = cq.await(a, a.length, 100, TimeUnit.MILLISECONDS);
                    for (int i = 0; i < n; i++) {
                        WorkCompletion c = new WorkCompletion();
                        c.copyFrom(a[i]);
                        seen.add(c);
                    }
                } catch (InterruptedException e) {
                    return;
                } catch (Throwable t) {
                    thrown.compareAndSet(null, t); // the application's await threw: what must never happen
                }
            }
        }

        WorkCompletion find(Connection c, long wrId) {
            int qp = c.queuePair().qpNum();
            for (WorkCompletion w : seen) {
                if (w.qpNum == qp && w.wrId == wrId) {
                    return w;
                }
            }
            return null;
        }

        WorkCompletion awaitWr(Connection c, long wrId) throws InterruptedException {
            waitFor(() -> find(c, wrId) != null, "completion of WR " + wrId + " on QP " + c.queuePair().qpNum());
            return find(c, wrId);
        }

        int count(Connection c, WcOpcode op, WcStatus st) {
            int qp = c.queuePair().qpNum();
            int n = 0;
            for (WorkCompletion w : seen) {
                n += w.qpNum == qp && w.opcode == op && w.status == st ? 1 : 0;
            }
            return n;
        }

        Set<Long> wrIds(Connection c, WcStatus st) {
            int qp = c.queuePair().qpNum();
            Set<Long> s = new HashSet<>();
            for (WorkCompletion w : seen) {
                if (w.qpNum == qp && w.status == st) {
                    s.add(w.wrId);
                }
            }
            return s;
        }

        @Override
        public void close() throws InterruptedException {
            stop = true;
            thread.join(5000);
        }
    }

    /**
     * Two connections between the fixture's ends: {@code bad} is faulted, {@code good} shares its
     * CQs, protection domains, device and reactor. A collector waits on each CQ; two CPU hogs run.
     */
    private static final class Bench implements AutoCloseable {
        final SoftFixture f;
        final SoftFixture.Pair bad;
        final SoftFixture.Pair good;
        final SoftMemoryRegion mrA;
        final SoftMemoryRegion mrB;
        final Collector cqA;
        final Collector cqB;
        final List<AsyncEvent> events = new CopyOnWriteArrayList<>();
        final AtomicBoolean fired = new AtomicBoolean();
        /** What the hook throws: a RuntimeException or an Error. */
        Throwable injected = new IllegalStateException("injected data-path fault");
        private final AtomicBoolean stopHogs = new AtomicBoolean();
        private final List<Thread> hogs = new ArrayList<>();

        Bench(SoftConfig cfg) throws Exception {
            f = new SoftFixture(cfg);
            f.device.setEventListener(events::add, Runnable::run);
            bad = f.connect(SoftFixture.clientServer().build(), SoftFixture.clientServer().build());
            good = f.connect(SoftFixture.clientServer().build(), SoftFixture.clientServer().build());
            mrA = f.region(f.pd, SIZE, Access.LOCAL_WRITE, Access.REMOTE_READ, Access.REMOTE_WRITE);
            mrB = f.region(f.pd2, SIZE, Access.LOCAL_WRITE, Access.REMOTE_READ, Access.REMOTE_WRITE);
            cqA = new Collector(f.cq, "app-cq-initiator");
            cqB = new Collector(f.cq2, "app-cq-responder");
            // the initiator speaks first (RFC 5044 §7.1.2): the responders may transmit from then on
            roundTrip(bad.initiator(), bad.responder(), 801);
            roundTrip(good.initiator(), good.responder(), 811);
            for (int i = 0; i < 2; i++) {
                Thread t = new Thread(() -> {
                    long x = 0;
                    while (!stopHogs.get()) {
                        x += System.nanoTime() & 1;
                    }
                    if (x == 42) {
                        System.out.print("");
                    }
                }, "cpu-hog-" + i);
                t.setDaemon(true);
                hogs.add(t);
                t.start();
            }
        }

        /** Posts {@code n} receives of {@code MSG} bytes with consecutive ids from {@code first}. */
        Set<Long> postReceives(Connection c, long first, int n) throws RdmaException {
            Set<Long> ids = new HashSet<>();
            SoftMemoryRegion mr = mrFor(c);
            for (int i = 0; i < n; i++) {
                c.queuePair().postRecv(first + i, mr, SIZE / 2, MSG);
                ids.add(first + i);
            }
            return ids;
        }

        private boolean initiatorSide(Connection c) {
            return c == bad.initiator() || c == good.initiator();
        }

        SoftMemoryRegion mrFor(Connection c) {
            return initiatorSide(c) ? mrA : mrB;
        }

        Collector cqFor(Connection c) {
            return initiatorSide(c) ? cqA : cqB;
        }

        /** Arms a one-shot fault at {@code site} of {@code c}'s stream, for the threads {@code who} accepts. */
        void arm(Connection c, FaultHook.Site site, Predicate<Thread> who) {
            SoftStream s = ((SoftConnection) c).stream();
            FaultHook h = at -> {
                if (at == site && who.test(Thread.currentThread()) && fired.compareAndSet(false, true)) {
                    if (injected instanceof RuntimeException r) {
                        throw r;
                    }
                    throw (Error) injected;
                }
            };
            s.lockIo();
            try {
                s.faults(h);
            } finally {
                s.io.unlock();
            }
        }

        /** Waits until the fault fired or {@code otherwise} holds. */
        void awaitFired(BooleanSupplier otherwise) throws InterruptedException {
            waitFor(() -> fired.get() || otherwise.getAsBoolean(), "the injected fault or the operation's completion");
            assertNull(cqA.thrown.get(), "await threw");
            assertNull(cqB.thrown.get(), "await threw");
        }

        /**
         * The faulted stream ended alone: failure set (the injected exception as its cause), TERM
         * 0/0/0 seen by the peer, its outstanding WRs {@code flushed} completed WR_FLUSH_ERR,
         * QP_FATAL for its QP, no await threw, and a Send round trip on the other connection.
         */
        void assertContained(Connection faulted, Connection peer, Set<Long> flushed) throws Exception {
            waitFor(() -> faulted.failure() != null, "failure() of the faulted connection");
            ConnectionTerminatedException e = assertInstanceOf(ConnectionTerminatedException.class, faulted.failure());
            assertEquals(TermCode.RDMAP_LOCAL_CATASTROPHIC, e.term());
            assertSame(injected, e.getCause(), "the failure names the fault");
            assertTrue(!faulted.isOpen());

            waitFor(() -> peer.failure() != null, "the peer sees the connection end");
            ConnectionTerminatedException pe = assertInstanceOf(ConnectionTerminatedException.class, peer.failure(),
                    String.valueOf(peer.failure()));
            assertTrue(pe.sentByPeer());
            assertEquals(TermCode.RDMAP_LOCAL_CATASTROPHIC, pe.term(), "TERM 0/0/0 local catastrophic error");

            Collector cq = cqFor(faulted);
            assertTrue(!flushed.isEmpty());
            for (long id : flushed) {
                assertEquals(WcStatus.WR_FLUSH_ERR, cq.awaitWr(faulted, id).status, "WR " + id);
            }
            int qp = faulted.queuePair().qpNum();
            waitFor(() -> events.stream().anyMatch(ev -> ev.type() == AsyncEvent.Type.QP_FATAL && ev.qpNum() == qp),
                    "QP_FATAL for QP " + qp);

            // the other connection on the same CQs, device and reactor still works, both ways
            assertTrue(good.initiator().isOpen() && good.responder().isOpen(), "the other connection stays open");
            roundTrip(good.initiator(), good.responder(), 901);
            roundTrip(good.responder(), good.initiator(), 903);
            assertNull(cqA.thrown.get(), "await threw");
            assertNull(cqB.thrown.get(), "await threw");
        }

        private void roundTrip(Connection from, Connection to, long wr) throws Exception {
            postReceives(to, wr, 1);
            from.queuePair().postSend(new SendRequest().send(wr + 1, mrFor(from), 0, MSG));
            Collector src = cqFor(from);
            Collector dst = cqFor(to);
            assertEquals(WcStatus.SUCCESS, src.awaitWr(from, wr + 1).status, "Send on the other connection");
            WorkCompletion rc = dst.awaitWr(to, wr);
            assertEquals(WcStatus.SUCCESS, rc.status, "receive on the other connection");
            assertEquals(MSG, rc.byteLength);
        }

        @Override
        public void close() throws Exception {
            stopHogs.set(true);
            for (Thread t : hogs) {
                t.join(2000);
            }
            try {
                cqA.close();
                cqB.close();
            } finally {
                f.close();
            }
        }
    }

    private static void waitFor(BooleanSupplier cond, String what) throws InterruptedException {
        long end = System.nanoTime() + WAIT_NANOS;
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                fail("no " + what + " within " + TimeUnit.NANOSECONDS.toSeconds(WAIT_NANOS) + " s");
            }
            Thread.sleep(2);
        }
    }
}
