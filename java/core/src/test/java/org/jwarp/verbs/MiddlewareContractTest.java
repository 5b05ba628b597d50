package org.jwarp.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The middleware part of the provider contract (issue 15), run unchanged against each provider:
 * shared receive queues (untagged buffers of RFC 5041 §5.1 shared by streams, consumed in order),
 * completion channels with {@code requestNotify} and solicited events (RFC 5040 §5.5 completions,
 * §6.9 Send with Solicited Event), asynchronous connection setup, and the device's asynchronous
 * events. Both ends live in this JVM on the address of the subclass's {@link DeviceUnderTest}; a
 * provider or device that is missing fails the suite in {@link DeviceSuite#openProvider()}; nothing is skipped.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
public abstract class MiddlewareContractTest extends DeviceSuite {
    static final Duration SETUP = Duration.ofSeconds(30);
    static final int MSG = 64;

    protected MiddlewareContractTest(DeviceUnderTest device) {
        super(device);
    }

    /** Whether a CQ overrun sends the QPs using the CQ to ERR (soft: yes; kernel siw/rxe: the event only). */
    protected abstract boolean overrunFailsQueuePairs();

    /**
     * Whether a solicited-only arm ignores unsolicited receives. False on kernel siw, which never
     * raises a solicited-only event for a receive: the DiSNI provider then arms for every completion.
     */
    protected boolean solicitedOnlyHonoured() {
        return true;
    }

    /** Sends of the contention test (fewer under emulation). */
    protected int contentionMessages() {
        return 2000;
    }

    static WorkCompletion[] wcs(int n) {
        WorkCompletion[] a = new WorkCompletion[n];
        for (int i = 0; i < n; i++) {
            a[i] = new WorkCompletion();
        }
        return a;
    }

    /** One end's device, PD and a registered buffer. */
    final class End implements AutoCloseable {
        final Device dev;
        final ProtectionDomain pd;
        final ByteBuffer buf;
        final MemoryRegion mr;
        final List<AutoCloseable> owned = new ArrayList<>();

        End(int bytes) throws Exception {
            dev = provider.open(bindAddress());
            pd = dev.allocateProtectionDomain();
            buf = ByteBuffer.allocateDirect(bytes);
            mr = pd.register(buf, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ));
        }

        <T extends AutoCloseable> T own(T c) {
            owned.add(0, c);
            return c;
        }

        @Override
        public void close() {
            for (AutoCloseable c : owned) {
                try {
                    c.close();
                } catch (Exception e) {
                    // keep closing
                }
            }
            mr.close();
            pd.close();
            dev.close();
        }
    }

    /**
     * Connects {@code n} client QPs (from {@code clientQp}) to {@code n} server QPs (from
     * {@code serverQp.apply(i)}), accepting with acceptAsync; returns {client..., server...}.
     */
    Connection[] connectMany(End server, End client, int n, IntFunction<QueuePairConfig> serverQp,
            IntFunction<QueuePairConfig> clientQp) throws Exception {
        Connection[] out = new Connection[2 * n];
        InetSocketAddress at = new InetSocketAddress(bindAddress(), nextPort());
        try (Listener l = server.dev.connectionManager().listen(at, n)) {
            for (int i = 0; i < n; i++) {
                final int k = i;
                CompletableFuture<Connection> acc = CompletableFuture.supplyAsync(() -> {
                    try {
                        return l.next(SETUP).acceptAsync(serverQp.apply(k), ConnectionParameters.builder().build()).get();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                out[i] = client.own(client.dev.connectionManager().connect(l.localAddress(), clientQp.apply(i),
                        ConnectionParameters.builder().build(), SETUP));
                out[n + i] = server.own(acc.get(60, TimeUnit.SECONDS));
            }
        }
        return out;
    }

    /**
     * {@link #connectMany} with receives posted before each server QP connects: server QP i on
     * {@code serverCq.apply(i)} holds {@code recvs} receives (wrId k, buffer k at
     * {@code (i * recvs + k) * MSG} of the server's region); each client QP on {@code ccq} has a send
     * queue of {@code recvs}.
     */
    Connection[] connectWithReceives(End server, End client, int n, IntFunction<CompletionQueue> serverCq,
            CompletionQueue ccq, int recvs) throws Exception {
        return connectMany(server, client, n, i -> new QueuePairConfig(server.pd, serverCq.apply(i), serverCq.apply(i),
                4, recvs).withBeforeConnect(qp -> {
                    for (int k = 0; k < recvs; k++) {
                        qp.postRecv(k, server.mr, (long) (i * recvs + k) * MSG, MSG);
                    }
                }), i -> new QueuePairConfig(client.pd, ccq, ccq, recvs, 1));
    }

    /**
     * {@link #connectMany} with every server QP on {@code scq} taking its receives from {@code srq};
     * each client QP on {@code ccq} has a send queue of {@code sends}.
     */
    Connection[] connectOnSrq(End server, End client, int n, CompletionQueue scq, SharedReceiveQueue srq,
            CompletionQueue ccq, int sends) throws Exception {
        return connectMany(server, client, n, i -> new QueuePairConfig(server.pd, scq, scq, 4, 1).withSrq(srq),
                i -> new QueuePairConfig(client.pd, ccq, ccq, sends, 1));
    }

    // ---- 1. shared receive queues ---------------------------------------------------------------

    /**
     * 1,000 Sends over 8 QPs drain one shared receive queue: every buffer is used exactly once,
     * each holds the message its completion names, each QP takes buffers in posting order, and the
     * completions carry the receiving QP's number (RFC 5041 §5.1 untagged buffers, §5.3 placement).
     */
    @Test
    void srqThousandSendsAcrossEightQpsInOrder_5041_5_1() throws Exception {
        final int qps = 8;
        final int per = 125;
        final int total = qps * per;
        try (End server = new End(total * MSG); End client = new End(qps * per * MSG)) {
            CompletionQueue scq = server.own(server.dev.createCompletionQueue(2 * total));
            CompletionQueue ccq = client.own(client.dev.createCompletionQueue(2 * total));
            SharedReceiveQueue srq = server.own(server.pd.createSharedReceiveQueue(total, 1));
            assertTrue(srq.capacity() >= total, "capacity " + srq.capacity());
            RecvRequest r = new RecvRequest();
            for (int i = 0; i < total; i++) {
                srq.postRecv(r.set(i, server.mr, (long) i * MSG, MSG));
            }
            assertEquals(total, srq.posted());
            Connection[] c = connectOnSrq(server, client, qps, scq, srq, ccq, per + 1);
            // a QP on an SRQ refuses receives of its own
            WorkRequestException own = assertThrows(WorkRequestException.class,
                    () -> c[qps].queuePair().postRecv(1, server.mr, 0, MSG));
            assertTrue(own.getMessage().contains("shared receive queue"), own.getMessage());
            SendRequest s = new SendRequest();
            for (int m = 0; m < per; m++) {
                for (int q = 0; q < qps; q++) {
                    int off = (q * per + m) * MSG;
                    client.buf.putInt(off, q).putInt(off + 4, m).putLong(off + 8, 0x5151_0000L + q * per + m);
                    c[q].queuePair().postSend(s.send(q * per + m, client.mr, off, MSG));
                }
            }
            WorkCompletion[] w = wcs(32);
            boolean[] used = new boolean[total];
            long[] lastBuf = new long[qps];
            int[] nextSeq = new int[qps];
            java.util.Arrays.fill(lastBuf, -1);
            java.util.Map<Integer, Integer> qpIndex = new java.util.HashMap<>();
            for (int q = 0; q < qps; q++) {
                qpIndex.put(c[qps + q].queuePair().qpNum(), q);
            }
            int got = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (got < total) {
                int n = scq.await(w, w.length, 1, TimeUnit.SECONDS);
                assertTrue(System.nanoTime() < deadline, "only " + got + " of " + total + " receives completed");
                for (int i = 0; i < n; i++) {
                    WorkCompletion wc = w[i];
                    assertTrue(wc.isSuccess(), wc.toString());
                    assertEquals(WcOpcode.RECV, wc.opcode);
                    assertEquals(MSG, wc.byteLength);
                    int b = (int) wc.wrId;
                    assertTrue(b >= 0 && b < total && !used[b], "buffer " + b + " used twice or unknown: " + wc);
                    used[b] = true;
                    Integer q = qpIndex.get(wc.qpNum);
                    assertNotNull(q, "completion names no server QP: " + wc);
                    int off = b * MSG;
                    assertEquals((int) q, server.buf.getInt(off), "buffer " + b + " holds another QP's message");
                    assertEquals(nextSeq[q]++, server.buf.getInt(off + 4), "QP " + q + " messages out of order");
                    assertEquals(0x5151_0000L + q * per + server.buf.getInt(off + 4), server.buf.getLong(off + 8));
                    assertTrue(b > lastBuf[q], "QP " + q + " took buffer " + b + " after " + lastBuf[q]);
                    lastBuf[q] = b;
                    got++;
                }
            }
            assertEquals(0, srq.posted(), "every shared buffer consumed");
            for (int q = 0; q < qps; q++) {
                assertEquals(per, nextSeq[q]);
            }
        }
    }

    /**
     * A receive completion of a shared buffer still in the CQ when its queue pair closes maps back
     * to the caller's wrId and frees the buffer's place in the SRQ: rounds of connect, Send, close
     * the receiving connection before polling, never leak SRQ capacity (RFC 5041 §5.1 untagged
     * buffers; the completion channel tells that the completion exists without polling it).
     */
    @Test
    void srqCompletionAfterQpClosedKeepsWrIdAndFreesBuffer_5041_5_1() throws Exception {
        final int cap = 4;
        try (End server = new End(cap * MSG); End client = new End(MSG)) {
            CompletionChannel ch = server.own(server.dev.createCompletionChannel());
            CompletionQueue scq = server.own(server.dev.createCompletionQueue(16, ch));
            CompletionQueue ccq = client.own(client.dev.createCompletionQueue(16));
            SharedReceiveQueue srq = server.own(server.pd.createSharedReceiveQueue(cap, 1));
            int slots = srq.capacity();
            for (int i = 0; i < slots; i++) {
                srq.postRecv(1000 + i, server.mr, (long) (i % cap) * MSG, MSG);
            }
            WorkCompletion[] w = wcs(8);
            SendRequest s = new SendRequest();
            long next = 1000;
            for (int round = 0; round < slots + 2; round++) {
                scq.requestNotify(false);
                Connection[] c = connectOnSrq(server, client, 1, scq, srq, ccq, 4);
                c[0].queuePair().postSend(s.send(round, client.mr, 0, MSG));
                assertSame(scq, ch.next(30, TimeUnit.SECONDS), "round " + round + ": no receive completion event");
                c[1].close(); // the receive completion is not polled yet
                int n = scq.poll(w, w.length);
                assertEquals(1, n, "round " + round + ": one receive completion");
                assertTrue(w[0].isSuccess(), w[0].toString());
                assertEquals(WcOpcode.RECV, w[0].opcode);
                assertEquals(next, w[0].wrId, "round " + round + ": the caller's wrId, not the provider's token");
                assertEquals(slots - 1, srq.posted(), "round " + round + ": the consumed buffer left the SRQ");
                srq.postRecv(next + slots, server.mr, (long) ((next + slots) % cap) * MSG, MSG);
                next++;
                c[0].close();
                while (ccq.poll(w, w.length) > 0) {
                    // the client's send completion
                }
            }
        }
    }

    /**
     * Arming a closed SRQ or CQ is a typed error, never a call on a destroyed object; arming while
     * another thread closes either ends in success or that error (RFC 5041 §5.1, RFC 5040 §5.5).
     */
    @Test
    void armAfterOrDuringCloseIsTypedError_5041_5_1() throws Exception {
        try (End e = new End(4096)) {
            SharedReceiveQueue srq = e.pd.createSharedReceiveQueue(8, 1);
            srq.close();
            assertThrows(RdmaException.class, () -> srq.armLimit(1));
            CompletionChannel ch = e.own(e.dev.createCompletionChannel());
            for (int round = 0; round < 50; round++) {
                CompletionQueue cq = e.dev.createCompletionQueue(4, ch);
                SharedReceiveQueue q = e.pd.createSharedReceiveQueue(8, 1);
                AtomicReference<Throwable> bad = new AtomicReference<>();
                java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
                Thread t = new Thread(() -> {
                    go.countDown();
                    for (int i = 0; i < 200; i++) {
                        try {
                            cq.requestNotify(false);
                        } catch (RdmaException closed) {
                            // typed: fine
                        } catch (Throwable x) {
                            bad.compareAndSet(null, x);
                        }
                        try {
                            q.armLimit(1 + (i & 3));
                        } catch (RdmaException closed) {
                            // typed: fine
                        } catch (Throwable x) {
                            bad.compareAndSet(null, x);
                        }
                    }
                });
                t.start();
                go.await();
                cq.close();
                q.close();
                t.join(10_000);
                assertNull(bad.get(), "round " + round + ": " + bad.get());
            }
            assertThrows(RdmaException.class, () -> {
                CompletionQueue cq = e.dev.createCompletionQueue(4, ch);
                cq.close();
                cq.requestNotify(false);
            });
        }
    }

    /** An SRQ of another protection domain is refused at QP creation (RFC 5041 §8.2). */
    @Test
    void srqOfAnotherPdRefused_5041_8_2() throws Exception {
        try (End server = new End(4096); End client = new End(4096)) {
            CompletionQueue scq = server.own(server.dev.createCompletionQueue(16));
            CompletionQueue ccq = client.own(client.dev.createCompletionQueue(16));
            ProtectionDomain other = server.own(server.dev.allocateProtectionDomain());
            SharedReceiveQueue foreign = server.own(other.createSharedReceiveQueue(8, 1));
            InetSocketAddress at = new InetSocketAddress(bindAddress(), nextPort());
            try (Listener l = server.dev.connectionManager().listen(at, 1)) {
                CompletableFuture<Connection> cf = client.dev.connectionManager().connectAsync(l.localAddress(),
                        new QueuePairConfig(client.pd, ccq, ccq, 4, 4), ConnectionParameters.builder().build(), SETUP);
                ConnectionRequest req = l.next(SETUP);
                RdmaException e = assertThrows(RdmaException.class,
                        () -> req.accept(new QueuePairConfig(server.pd, scq, scq, 4, 4).withSrq(foreign),
                                ConnectionParameters.builder().build()));
                assertTrue(e.getMessage().contains("protection domain"), e.getMessage());
                cf.cancel(true);
            }
        }
    }

    /** The SRQ limit raises SRQ_LIMIT_REACHED once the posted count drops below it, then disarms. */
    @Test
    void srqLimitRaisesEventAndDisarms_5041_5_1() throws Exception {
        try (End server = new End(64 * MSG); End client = new End(64 * MSG)) {
            LinkedBlockingQueue<AsyncEvent> events = new LinkedBlockingQueue<>();
            server.dev.setEventListener(events::add, Runnable::run);
            CompletionQueue scq = server.own(server.dev.createCompletionQueue(64));
            CompletionQueue ccq = client.own(client.dev.createCompletionQueue(64));
            SharedReceiveQueue srq = server.own(server.pd.createSharedReceiveQueue(16, 1));
            for (int i = 0; i < 16; i++) {
                srq.postRecv(i, server.mr, (long) i * MSG, MSG);
            }
            srq.armLimit(8);
            Connection[] c = connectOnSrq(server, client, 1, scq, srq, ccq, 16);
            SendRequest s = new SendRequest();
            WorkCompletion[] w = wcs(16);
            for (int i = 0; i < 7; i++) {
                c[0].queuePair().postSend(s.send(i, client.mr, 0, MSG));
            }
            int got = 0;
            while (got < 7) {
                int n = scq.await(w, w.length, 30, TimeUnit.SECONDS);
                assertTrue(n > 0, "receives missing");
                got += n;
            }
            assertNull(poll(events, AsyncEvent.Type.SRQ_LIMIT_REACHED, 300), "9 posted, limit 8: no event yet");
            c[0].queuePair().postSend(s.send(7, client.mr, 0, MSG));
            assertEquals(1, scq.await(w, w.length, 30, TimeUnit.SECONDS));
            assertNull(poll(events, AsyncEvent.Type.SRQ_LIMIT_REACHED, 300), "8 posted is not below the limit of 8");
            assertEquals(8, srq.limit(), "still armed");
            c[0].queuePair().postSend(s.send(8, client.mr, 0, MSG));
            assertEquals(1, scq.await(w, w.length, 30, TimeUnit.SECONDS));
            AsyncEvent e = poll(events, AsyncEvent.Type.SRQ_LIMIT_REACHED, 10_000);
            assertNotNull(e, "no SRQ_LIMIT_REACHED with 7 posted, below the limit of 8");
            assertSame(srq, e.srq());
            assertEquals(0, srq.limit(), "the limit disarms after its event");
        }
    }

    static AsyncEvent poll(LinkedBlockingQueue<AsyncEvent> q, AsyncEvent.Type type, long ms) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
        while (true) {
            long left = deadline - System.nanoTime();
            AsyncEvent e = q.poll(Math.max(0, left), TimeUnit.NANOSECONDS);
            if (e == null) {
                return null;
            }
            if (e.type() == type) {
                return e;
            }
        }
    }

    // ---- 2. completion channels -----------------------------------------------------------------

    /** One thread blocked on one channel wakes for whichever of 4 CQs gets a completion (RFC 5040 §5.5). */
    @Test
    void channelWakesForAnyOfFourCqs_5040_5_5() throws Exception {
        try (End server = new End(64 * MSG); End client = new End(64 * MSG)) {
            CompletionChannel ch = server.own(server.dev.createCompletionChannel());
            CompletionQueue[] cqs = new CompletionQueue[4];
            for (int i = 0; i < 4; i++) {
                cqs[i] = server.own(server.dev.createCompletionQueue(16, ch));
                assertSame(ch, cqs[i].channel());
            }
            CompletionQueue ccq = client.own(client.dev.createCompletionQueue(64));
            Connection[] c = connectWithReceives(server, client, 4, i -> cqs[i], ccq, 8);
            WorkCompletion[] w = wcs(4);
            SendRequest s = new SendRequest();
            int[] order = {2, 0, 3, 1, 1, 3};
            for (int k : order) {
                for (CompletionQueue cq : cqs) {
                    cq.requestNotify(false);
                }
                AtomicReference<CompletionQueue> woke = new AtomicReference<>();
                Thread t = new Thread(() -> {
                    try {
                        woke.set(ch.next(30, TimeUnit.SECONDS));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                t.start();
                Thread.sleep(50); // the waiter is asleep before the completion exists
                c[k].queuePair().postSend(s.send(k, client.mr, 0, MSG));
                t.join(40_000);
                assertSame(cqs[k], woke.get(), "the waiter must wake for CQ " + k);
                assertEquals(1, cqs[k].poll(w, 4));
                assertEquals(c[4 + k].queuePair().qpNum(), w[0].qpNum);
                for (int j = 0; j < 4; j++) {
                    assertEquals(0, cqs[j].poll(w, 4), "CQ " + j);
                }
                assertNull(ch.next(50, TimeUnit.MILLISECONDS), "one event per arming");
            }
        }
    }

    /**
     * Every arm raises its event past a provider's batch of unacknowledged events (DiSNI
     * acknowledges 64 at a time), and a CQ closed with events taken and not yet acknowledged
     * closes instead of waiting for them for ever ({@code ibv_destroy_cq} waits for every event it
     * reported), RFC 5040 §5.5.
     */
    @Test
    void channelEventsPastAckBatchThenCloseReturns_5040_5_5() throws Exception {
        int rounds = 70;
        try (End server = new End(rounds * MSG); End client = new End(rounds * MSG)) {
            CompletionChannel ch = server.own(server.dev.createCompletionChannel());
            CompletionQueue scq = server.dev.createCompletionQueue(16, ch);
            CompletionQueue ccq = client.own(client.dev.createCompletionQueue(2 * rounds));
            Connection[] c = connectWithReceives(server, client, 1, i -> scq, ccq, rounds);
            WorkCompletion[] w = wcs(4);
            SendRequest s = new SendRequest();
            for (int k = 0; k < rounds; k++) {
                scq.requestNotify(false);
                c[0].queuePair().postSend(s.send(k, client.mr, 0, MSG));
                assertSame(scq, ch.next(30, TimeUnit.SECONDS), "the event of arm " + k);
                assertEquals(1, scq.poll(w, 4), "the Send of round " + k);
            }
            c[0].close();
            c[1].close(); // the server QP goes before its CQ
            Thread closer = new Thread(scq::close, "cq-closer");
            closer.setDaemon(true);
            closer.start();
            closer.join(60_000);
            assertFalse(closer.isAlive(), "closing a CQ with unacknowledged channel events hung");
        }
    }

    /**
     * A solicited-only arm ignores an unsolicited Send and fires for a Send with Solicited Event
     * (RFC 5040 §6.9; {@code ibv_req_notify_cq(cq, 1)}).
     */
    @Test
    void solicitedOnlyArmIgnoresUnsolicitedSend_5040_6_9() throws Exception {
        try (End server = new End(64 * MSG); End client = new End(64 * MSG)) {
            CompletionChannel ch = server.own(server.dev.createCompletionChannel());
            CompletionQueue scq = server.own(server.dev.createCompletionQueue(16, ch));
            CompletionQueue ccq = client.own(client.dev.createCompletionQueue(16));
            Connection[] c = connectWithReceives(server, client, 1, i -> scq, ccq, 8);
            WorkCompletion[] w = wcs(4);
            SendRequest s = new SendRequest();
            scq.requestNotify(true);
            c[0].queuePair().postSend(s.send(1, client.mr, 0, MSG));
            if (solicitedOnlyHonoured()) {
                assertNull(ch.next(1500, TimeUnit.MILLISECONDS), "an unsolicited Send must not raise a solicited-only event");
            } else {
                // the documented fallback: the arm covers every completion, the waiter wakes
                assertSame(scq, ch.next(30, TimeUnit.SECONDS), "fallback arm: any completion wakes the waiter");
                scq.requestNotify(true);
            }
            assertEquals(1, scq.poll(w, 4), "the unsolicited Send did arrive");
            assertFalse(w[0].solicited);
            s.send(2, client.mr, 0, MSG).solicited = true;
            c[0].queuePair().postSend(s);
            assertSame(scq, ch.next(30, TimeUnit.SECONDS), "a Send with SE raises the event");
            assertEquals(1, scq.poll(w, 4));
            assertTrue(w[0].solicited || !providerName().equals("soft"), "soft reports the SE flag");
        }
    }

    /**
     * Poll–arm–poll under CPU contention never loses a completion: a consumer that sleeps only on
     * the channel (a 5 s timeout without an event fails the test) reaps every Send while
     * spinning threads compete for the CPUs (RFC 5040 §5.5: every completion is reported).
     */
    @Test
    void pollArmPollNeverLosesCompletionUnderContention_5040_5_5() throws Exception {
        final int n = contentionMessages();
        // one message in flight: each completion must be found by a poll or announced by an event,
        // and under contention it often lands between the consumer's arming and its sleep
        final int window = 1;
        try (End server = new End(64 * MSG); End client = new End(64 * MSG)) {
            CompletionChannel ch = server.own(server.dev.createCompletionChannel());
            CompletionQueue scq = server.own(server.dev.createCompletionQueue(128, ch));
            CompletionQueue ccq = client.own(client.dev.createCompletionQueue(128));
            Connection[] c = connectWithReceives(server, client, 1, i -> scq, ccq, 64);
            AtomicInteger consumed = new AtomicInteger();
            AtomicReference<String> lost = new AtomicReference<>();
            CpuHogs spinners = new CpuHogs(3);
            QueuePair sqp = c[1].queuePair();
            Thread consumer = new Thread(() -> {
                WorkCompletion[] w = wcs(16);
                try {
                    scq.requestNotify(false);
                    while (consumed.get() < n) {
                        int got = drain(scq, w, sqp, server.mr);
                        consumed.addAndGet(got);
                        if (consumed.get() >= n) {
                            break;
                        }
                        scq.requestNotify(false);
                        got = drain(scq, w, sqp, server.mr); // completions that raced the arming
                        consumed.addAndGet(got);
                        if (got > 0) {
                            continue; // armed already; the next event may be stale, which is harmless
                        }
                        CompletionQueue e = ch.next(5, TimeUnit.SECONDS);
                        if (e == null) {
                            // the producer waits for this consumer, so a quiet channel means an event was lost
                            int late = drain(scq, w, sqp, server.mr);
                            lost.set(late > 0 ? "a completion was found only after a 5 s timeout: its event was lost ("
                                    + consumed.get() + " of " + n + " consumed)"
                                    : "no event and no completion for 5 s with " + consumed.get() + " of " + n + " consumed");
                            return;
                        }
                    }
                } catch (Exception e) {
                    lost.set(e.toString());
                }
            }, "consumer");
            consumer.start();
            SendRequest s = new SendRequest();
            WorkCompletion[] cw = wcs(16);
            int sent = 0;
            int sendsDone = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(200);
            while (sent < n && lost.get() == null && System.nanoTime() < deadline) {
                if (sent - consumed.get() < window && sent - sendsDone < window) {
                    c[0].queuePair().postSend(s.send(sent, client.mr, 0, MSG));
                    sent++;
                } else {
                    sendsDone += ccq.poll(cw, cw.length);
                    Thread.onSpinWait();
                }
            }
            consumer.join(60_000);
            spinners.close();
            assertNull(lost.get(), lost.get());
            assertEquals(n, consumed.get(), "sent " + sent);
        }
    }

    /** Reaps and reposts (each buffer back to the QP); returns the count. */
    private static int drain(CompletionQueue cq, WorkCompletion[] w, QueuePair qp, MemoryRegion mr) throws Exception {
        int total = 0;
        int n;
        while ((n = cq.poll(w, w.length)) > 0) {
            for (int i = 0; i < n; i++) {
                if (!w[i].isSuccess()) {
                    throw new IllegalStateException("completion failed: " + w[i]);
                }
                qp.postRecv(w[i].wrId, mr, w[i].wrId * MSG, MSG);
            }
            total += n;
        }
        return total;
    }

    /** The callback form runs the handler on the executor for each event. */
    @Test
    void channelCallbackRunsOnExecutor_5040_5_5() throws Exception {
        try (End server = new End(64 * MSG); End client = new End(64 * MSG)) {
            CompletionChannel ch = server.own(server.dev.createCompletionChannel());
            CompletionQueue scq = server.own(server.dev.createCompletionQueue(16, ch));
            CompletionQueue ccq = client.own(client.dev.createCompletionQueue(16));
            Connection[] c = connectWithReceives(server, client, 1, i -> scq, ccq, 8);
            LinkedBlockingQueue<String> ran = new LinkedBlockingQueue<>();
            java.util.concurrent.ExecutorService ex = java.util.concurrent.Executors.newSingleThreadExecutor(
                    r -> new Thread(r, "handler-executor"));
            WorkCompletion[] w = wcs(4);
            scq.requestNotify(false);
            try (AutoCloseable h = ch.listen(cq -> {
                int n = cq.poll(w, 4);
                ran.add(Thread.currentThread().getName() + ":" + n);
            }, ex)) {
                c[0].queuePair().postSend(new SendRequest().send(1, client.mr, 0, MSG));
                assertEquals("handler-executor:1", ran.poll(30, TimeUnit.SECONDS));
            } finally {
                ex.shutdownNow();
            }
        }
    }

    // ---- 3. asynchronous connection setup -------------------------------------------------------

    /**
     * connectAsync/acceptAsync complete off the provider's I/O threads with a usable connection;
     * a cancelled connect releases its QP (posts refused, state ERR) and its socket / cm id, and a
     * later connect from the same device works (RFC 5044 §7.1 setup, RFC 6581 §9).
     */
    @Test
    void connectAsyncCancelReleasesQp_5044_7_1() throws Exception {
        try (End server = new End(4096); End client = new End(4096)) {
            CompletionQueue ccq = client.own(client.dev.createCompletionQueue(16));
            CompletionQueue scq = server.own(server.dev.createCompletionQueue(16));
            AtomicReference<QueuePair> made = new AtomicReference<>();
            CompletableFuture<Connection> f = client.dev.connectionManager().connectAsync(silentAddress(),
                    new QueuePairConfig(client.pd, ccq, ccq, 4, 4).withBeforeConnect(qp -> {
                        made.set(qp);
                        qp.postRecv(7, client.mr, 0, 64);
                    }), ConnectionParameters.builder().build(), Duration.ofSeconds(60));
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (made.get() == null && System.nanoTime() < until) {
                Thread.sleep(10);
            }
            assertNotNull(made.get(), "the QP was never created");
            Thread.sleep(200);
            assertFalse(f.isDone(), "a silent peer cannot have answered");
            assertTrue(f.cancel(true));
            assertThrows(CancellationException.class, f::join);
            QueuePair qp = made.get();
            // well before any setup timer of the provider could end it (soft fails this setup on its
            // own about 3 s after it began; the connect timeout is 60 s)
            until = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
            while (qp.state() != QueuePair.QpState.ERR && System.nanoTime() < until) {
                Thread.sleep(10);
            }
            assertEquals(QueuePair.QpState.ERR, qp.state(), "a cancelled connect releases its QP");
            assertThrows(WorkRequestException.class, () -> qp.postRecv(8, client.mr, 0, 64));

            // the device is intact: an async connect and accept now succeed, completed off I/O threads
            InetSocketAddress at = new InetSocketAddress(bindAddress(), nextPort());
            try (Listener l = server.dev.connectionManager().listen(at, 1)) {
                AtomicReference<String> doneOn = new AtomicReference<>();
                CompletableFuture<Connection> cf = client.dev.connectionManager().connectAsync(l.localAddress(),
                        new QueuePairConfig(client.pd, ccq, ccq, 4, 4), ConnectionParameters.builder().build(), SETUP);
                cf.whenComplete((c, e) -> doneOn.compareAndSet(null, Thread.currentThread().getName()));
                CompletableFuture<Connection> sf = l.next(SETUP).acceptAsync(new QueuePairConfig(server.pd, scq, scq, 4, 4),
                        ConnectionParameters.builder().build());
                Connection sc = server.own(sf.get(60, TimeUnit.SECONDS));
                Connection cc = client.own(cf.get(60, TimeUnit.SECONDS));
                assertTrue(cc.isOpen() && sc.isOpen());
                String t = doneOn.get();
                assertTrue(t == null || t.startsWith("jwarp-setup") || t.equals(Thread.currentThread().getName()),
                        "completed on " + t);
                assertFalse(t != null && (t.contains("reactor") || t.contains("disni-cm")), "completed on I/O thread " + t);
            }
        }
    }

    /** A connect that fails completes the future exceptionally with the blocking call's type. */
    @Test
    void connectAsyncTimeoutIsTyped_5044_7_1() throws Exception {
        try (End client = new End(4096)) {
            CompletionQueue ccq = client.own(client.dev.createCompletionQueue(16));
            CompletableFuture<Connection> f = client.dev.connectionManager().connectAsync(silentAddress(),
                    new QueuePairConfig(client.pd, ccq, ccq, 4, 4), ConnectionParameters.builder().build(),
                    Duration.ofMillis(1500));
            java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> f.get(60, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof RdmaTimeoutException, e.getCause().toString());
        }
    }

    // ---- 4. asynchronous events -----------------------------------------------------------------

    /** ESTABLISHED on connect, PEER_DISCONNECTED and CLOSED when the peer closes (RFC 5040 §5.3 close). */
    @Test
    void eventsEstablishedPeerDisconnectedClosed_5040_5_3() throws Exception {
        try (End server = new End(4096); End client = new End(4096)) {
            LinkedBlockingQueue<AsyncEvent> events = new LinkedBlockingQueue<>();
            server.dev.setEventListener(events::add, Runnable::run);
            CompletionQueue ccq = client.own(client.dev.createCompletionQueue(16));
            CompletionQueue scq = server.own(server.dev.createCompletionQueue(16));
            Connection[] c = connectMany(server, client, 1, i -> new QueuePairConfig(server.pd, scq, scq, 4, 4),
                    i -> new QueuePairConfig(client.pd, ccq, ccq, 4, 4));
            AsyncEvent est = poll(events, AsyncEvent.Type.ESTABLISHED, 10_000);
            assertNotNull(est, "no ESTABLISHED");
            assertEquals(c[1].queuePair().qpNum(), est.qpNum());
            c[0].close();
            AsyncEvent pd = poll(events, AsyncEvent.Type.PEER_DISCONNECTED, 20_000);
            assertNotNull(pd, "no PEER_DISCONNECTED after the peer closed");
            assertSame(c[1], pd.connection());
            assertNotNull(poll(events, AsyncEvent.Type.CLOSED, 20_000), "no CLOSED");
        }
    }

    /** A QP's user context (ibverbs' qp_context), with its index for the messages. */
    record Ctx(String side, int index) {
    }

    /**
     * The per-QP user context (ibverbs' {@code qp_context}): given at creation, returned by
     * {@link QueuePair#context()}, by reference in every completion of the QP on a CQ two QPs share
     * (Send, receive and flushed receive completions, RFC 5040 §5.5 and §6.2.2 flush), and in the
     * QP's ESTABLISHED and PEER_DISCONNECTED events.
     */
    @Test
    void qpContextOnEveryCompletionAndEvent_5040_5_5() throws Exception {
        try (End server = new End(4096); End client = new End(4096)) {
            LinkedBlockingQueue<AsyncEvent> events = new LinkedBlockingQueue<>();
            List<AsyncEvent> all = new java.util.concurrent.CopyOnWriteArrayList<>();
            server.dev.setEventListener(e -> {
                all.add(e);
                events.add(e);
            }, Runnable::run);
            CompletionQueue ccq = client.own(client.dev.createCompletionQueue(32));
            CompletionQueue scq = server.own(server.dev.createCompletionQueue(32));
            Ctx[] sctx = {new Ctx("server", 0), new Ctx("server", 1)};
            Ctx[] cctx = {new Ctx("client", 0), new Ctx("client", 1)};
            Connection[] c = connectMany(server, client, 2, i -> new QueuePairConfig(server.pd, scq, scq, 4, 4)
                    .withContext(sctx[i]).withBeforeConnect(qp -> {
                        for (int k = 0; k < 3; k++) {
                            qp.postRecv(10 * i + k, server.mr, (long) (3 * i + k) * MSG, MSG);
                        }
                    }), i -> new QueuePairConfig(client.pd, ccq, ccq, 4, 4).withContext(cctx[i]));
            for (int i = 0; i < 2; i++) {
                assertSame(cctx[i], c[i].queuePair().context());
                assertSame(sctx[i], c[2 + i].queuePair().context());
                client.buf.putInt(i * MSG, i);
                c[i].queuePair().postSend(new SendRequest().send(100 + i, client.mr, (long) i * MSG, MSG));
            }
            WorkCompletion[] w = wcs(8);
            int sends = 0;
            while (sends < 2) {
                int n = ccq.await(w, w.length, 30, TimeUnit.SECONDS);
                assertTrue(n > 0, "no Send completion within 30 s");
                for (int k = 0; k < n; k++) {
                    assertEquals(WcStatus.SUCCESS, w[k].status, w[k].toString());
                    assertSame(cctx[(int) w[k].wrId - 100], w[k].qpContext, w[k].toString());
                    sends++;
                }
            }
            int recvs = 0;
            while (recvs < 2) {
                int n = scq.await(w, w.length, 30, TimeUnit.SECONDS);
                assertTrue(n > 0, "no receive completion within 30 s");
                for (int k = 0; k < n; k++) {
                    assertEquals(WcStatus.SUCCESS, w[k].status, w[k].toString());
                    Ctx ctx = (Ctx) w[k].qpContext;
                    assertSame(sctx[(int) w[k].wrId / 10], ctx, w[k].toString());
                    assertEquals(c[2 + ctx.index()].queuePair().qpNum(), w[k].qpNum, w[k].toString());
                    assertEquals(ctx.index(), server.buf.getInt((int) w[k].wrId / 10 * 3 * MSG), "the message of " + ctx);
                    recvs++;
                }
            }
            c[1].close(); // server QP 1's two remaining receives flush, each with its QP's context
            int flushed = 0;
            while (flushed < 2) {
                int n = scq.await(w, w.length, 30, TimeUnit.SECONDS);
                assertTrue(n > 0, "no flushed receive within 30 s");
                for (int k = 0; k < n; k++) {
                    assertEquals(WcStatus.WR_FLUSH_ERR, w[k].status, w[k].toString());
                    assertSame(sctx[1], w[k].qpContext, w[k].toString());
                    flushed++;
                }
            }
            AsyncEvent down = poll(events, AsyncEvent.Type.PEER_DISCONNECTED, 20_000);
            assertNotNull(down, "no PEER_DISCONNECTED after the peer closed");
            assertSame(sctx[1], down.qpContext(), down.toString());
            for (int i = 0; i < 2; i++) {
                int qpn = c[2 + i].queuePair().qpNum();
                AsyncEvent est = all.stream().filter(e -> e.type() == AsyncEvent.Type.ESTABLISHED && e.qpNum() == qpn)
                        .findFirst().orElse(null);
                assertNotNull(est, "no ESTABLISHED for server QP " + qpn + ": " + all);
                assertSame(sctx[i], est.qpContext(), est.toString());
            }
        }
    }

    /**
     * A CQ overrun is never silent: CQ_ERROR is raised; on the soft provider the QPs on the CQ go
     * to ERR with QP_FATAL, the CQ keeps the completions that fit before the overrun and the
     * flushed ones never appear (DiSNI raises the kernel's event and changes no QP state itself).
     */
    @Test
    void cqOverrunRaisesEvent_5040_5_5() throws Exception {
        try (End server = new End(64 * MSG); End client = new End(64 * MSG)) {
            LinkedBlockingQueue<AsyncEvent> events = new LinkedBlockingQueue<>();
            server.dev.setEventListener(events::add, Runnable::run);
            CompletionQueue ccq = client.own(client.dev.createCompletionQueue(128));
            CompletionQueue small = server.own(server.dev.createCompletionQueue(4));
            Connection[] c = connectWithReceives(server, client, 1, i -> small, ccq, 64);
            SendRequest s = new SendRequest();
            try {
                for (int i = 0; i < 48; i++) {
                    c[0].queuePair().postSend(s.send(i, client.mr, 0, MSG));
                }
            } catch (WorkRequestException bad) {
                // kernel siw: the receive that found the CQ full ends the stream, so the client may
                // see its QP flushed before it posted all 48; the CQ_ERROR event must still come
                Thread.sleep(500);
                if (c[0].isOpen()) {
                    throw new AssertionError("client QP refused a Send on an open connection: " + bad.getMessage()
                            + "; server events " + events, bad);
                }
            }
            AsyncEvent e = poll(events, AsyncEvent.Type.CQ_ERROR, 30_000);
            assertNotNull(e, "no CQ_ERROR after 48 receives into a CQ of " + small.capacity());
            assertSame(small, e.cq());
            if (overrunFailsQueuePairs()) {
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (c[1].queuePair().state() != QueuePair.QpState.ERR && System.nanoTime() < until) {
                    Thread.sleep(10);
                }
                assertEquals(QueuePair.QpState.ERR, c[1].queuePair().state(), "soft: the QP on an overrun CQ goes to ERR");
                assertNotNull(poll(events, AsyncEvent.Type.QP_FATAL, 10_000), "soft: QP_FATAL for the QP");
                // what the application gets: the completions that fit before the overrun, nothing
                // more; the flushed receives found the CQ full and never appear (as with ibverbs)
                WorkCompletion[] got = new WorkCompletion[small.capacity() + 64];
                for (int i = 0; i < got.length; i++) {
                    got[i] = new WorkCompletion();
                }
                int n = small.poll(got, got.length);
                assertEquals(small.capacity(), n, "the CQ holds the completions that fit, no more");
                for (int i = 0; i < n; i++) {
                    assertEquals(WcStatus.SUCCESS, got[i].status, "before the overrun: " + got[i]);
                    assertEquals(i, got[i].wrId, "in order: " + got[i]);
                }
                assertEquals(0, small.poll(got, got.length), "the flushed receives never enter the CQ");
            }
        }
    }

    static java.util.Set<Thread> channelThreads() {
        java.util.Set<Thread> s = new java.util.HashSet<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals("jwarp-comp-channel") && t.isAlive()) {
                s.add(t);
            }
        }
        return s;
    }

    static void assertEndsWithin(java.util.Set<Thread> threads, long ms, String what) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
        for (Thread t : threads) {
            t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(until - System.nanoTime())));
            assertFalse(t.isAlive(), what + ": the listener thread still runs " + ms + " ms later");
        }
    }

    /**
     * A listener's thread ends when its channel closes, and when the device closes the channel,
     * though the listen handle was never closed: no thread left spinning on a dead channel
     * (RFC 5040 §5.5 completion notification).
     */
    @Test
    void listenerThreadEndsWithChannelOrDevice_5040_5_5() throws Exception {
        try (End e = new End(4096)) {
            java.util.Set<Thread> before = channelThreads();
            CompletionChannel ch = e.dev.createCompletionChannel();
            AutoCloseable handle = ch.listen(cq -> { }, Runnable::run);
            java.util.Set<Thread> mine = channelThreads();
            mine.removeAll(before);
            assertEquals(1, mine.size(), "one listener thread");
            ch.close();
            assertEndsWithin(mine, 2000, "channel closed");
            handle.close();
        }
        End e = new End(4096);
        java.util.Set<Thread> before = channelThreads();
        CompletionChannel ch = e.dev.createCompletionChannel();
        ch.listen(cq -> { }, Runnable::run);
        java.util.Set<Thread> mine = channelThreads();
        mine.removeAll(before);
        assertEquals(1, mine.size(), "one listener thread");
        e.close();
        assertEndsWithin(mine, 3000, "device closed");
    }

    static int asyncEventThreads() {
        int n = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals("jwarp-disni-async-events") && t.isAlive()) {
                n++;
            }
        }
        return n;
    }

    /**
     * A listener cannot be set on a closed device (nothing would ever stop its event thread);
     * removing one (null) stays harmless (RFC 5040 §5.3 asynchronous events).
     */
    @Test
    void eventListenerOnClosedDeviceRefused_5040_5_3() throws Exception {
        int before = asyncEventThreads();
        Device d = provider.open(bindAddress());
        d.close();
        assertThrows(IllegalStateException.class, () -> d.setEventListener(ev -> { }, Runnable::run));
        d.setEventListener(null, null);
        Thread.sleep(200);
        assertTrue(asyncEventThreads() <= before, "an event thread outlives its closed device");
    }

    /** Posting to a CQ without a channel cannot be armed: a clear error, not a silent no-op. */
    @Test
    void requestNotifyWithoutChannelRefused_5040_5_5() throws Exception {
        try (End e = new End(4096)) {
            CompletionQueue cq = e.own(e.dev.createCompletionQueue(4));
            assertNull(cq.channel());
            assertThrows(IllegalStateException.class, () -> cq.requestNotify(false));
        }
    }

    // ---- 5. spinning pollers ------------------------------------------------------------------

    /** Sends per QP of the spin test (fewer under emulation). */
    protected int spinMessages() {
        return contentionMessages() / 4;
    }

    /**
     * Whether the device raises QP_FATAL for the receiver's QP when a receive is too short for its
     * Send (RFC 5041 §7.2). Soft does; see {@link ProviderContractTest#shortReceiveRaisesQpFatal()}.
     */
    protected boolean shortReceiveRaisesQpFatal() {
        return true;
    }

    /** The receiver's QP state after a short receive; see {@link ProviderContractTest#shortReceiveQpState()}. */
    protected QueuePair.QpState shortReceiveQpState() {
        return QueuePair.QpState.ERR;
    }

    /**
     * Middleware's busy-poll loop: four threads post Sends from slices of one shared region over
     * four QPs, one thread spins on the server's CQ ({@link CompletionQueue#spin}, bounded, called
     * again) and reposts each buffer of the shared server region, one spins on the client's CQ and
     * frees send slots. Every message arrives intact, in order per QP, every WR succeeds.
     */
    @Test
    void spinningPollerServesConcurrentPostersOnSharedRegions_5040_5_5() throws Exception {
        final int qps = 4;
        final int depth = 8;
        final int perQp = spinMessages();
        try (End server = new End(qps * depth * MSG); End client = new End(qps * depth * MSG)) {
            CompletionQueue scq = server.own(server.dev.createCompletionQueue(qps * depth * 2));
            CompletionQueue ccq = client.own(client.dev.createCompletionQueue(qps * depth * 2));
            Connection[] c = connectWithReceives(server, client, qps, i -> scq, ccq, depth);
            java.util.concurrent.Semaphore[] credits = new java.util.concurrent.Semaphore[qps];
            java.util.concurrent.Semaphore[] slots = new java.util.concurrent.Semaphore[qps];
            java.util.Map<Integer, Integer> serverIndex = new java.util.HashMap<>();
            java.util.Map<Integer, Integer> clientIndex = new java.util.HashMap<>();
            for (int i = 0; i < qps; i++) {
                credits[i] = new java.util.concurrent.Semaphore(depth); // receives posted at the server
                slots[i] = new java.util.concurrent.Semaphore(depth); // send queue entries free
                clientIndex.put(c[i].queuePair().qpNum(), i);
                serverIndex.put(c[qps + i].queuePair().qpNum(), i);
            }
            AtomicReference<Throwable> failure = new AtomicReference<>();
            AtomicBoolean stop = new AtomicBoolean();
            int[] received = new int[qps];
            int[] sendsDone = new int[qps];
            List<Thread> threads = new ArrayList<>();
            threads.add(new Thread(() -> {
                WorkCompletion[] w = wcs(16);
                try {
                    int total = 0;
                    while (total < qps * perQp && !stop.get()) {
                        int n = scq.spin(w, w.length, 100_000, TimeUnit.MILLISECONDS.toNanos(1));
                        for (int k = 0; k < n; k++) {
                            WorkCompletion wc = w[k];
                            Integer q = serverIndex.get(wc.qpNum);
                            if (q == null || !wc.isSuccess() || wc.opcode != WcOpcode.RECV || wc.byteLength != MSG) {
                                throw new AssertionError("server completion " + wc);
                            }
                            long at = (long) (q * depth + wc.wrId) * MSG;
                            int from = server.buf.getInt((int) at);
                            int seq = server.buf.getInt((int) at + 4);
                            if (from != q || seq != received[q]) {
                                throw new AssertionError("QP " + q + " expected message " + received[q] + ", got " + from
                                        + "/" + seq + " in " + wc);
                            }
                            received[q]++;
                            c[qps + q].queuePair().postRecv(wc.wrId, server.mr, at, MSG);
                            credits[q].release();
                            total++;
                        }
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }, "spin-server"));
            threads.add(new Thread(() -> {
                WorkCompletion[] w = wcs(16);
                try {
                    int total = 0;
                    while (total < qps * perQp && !stop.get()) {
                        int n = ccq.spin(w, w.length, 100_000, TimeUnit.MILLISECONDS.toNanos(1));
                        for (int k = 0; k < n; k++) {
                            WorkCompletion wc = w[k];
                            Integer q = clientIndex.get(wc.qpNum);
                            if (q == null || !wc.isSuccess() || wc.opcode != WcOpcode.SEND) {
                                throw new AssertionError("client completion " + wc);
                            }
                            if (wc.wrId != sendsDone[q]) {
                                throw new AssertionError("QP " + q + " expected Send " + sendsDone[q] + " to complete, got " + wc);
                            }
                            sendsDone[q]++;
                            slots[q].release();
                            total++;
                        }
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }, "spin-client"));
            for (int i = 0; i < qps; i++) {
                final int q = i;
                threads.add(new Thread(() -> {
                    SendRequest s = new SendRequest();
                    try {
                        for (int seq = 0; seq < perQp && !stop.get(); seq++) {
                            while (!credits[q].tryAcquire(100, TimeUnit.MILLISECONDS) || !acquire(slots[q], credits[q])) {
                                if (stop.get()) {
                                    return;
                                }
                            }
                            // this poster's slot of the shared client region: the slot's last Send completed
                            int at = (q * depth + seq % depth) * MSG;
                            client.buf.putInt(at, q);
                            client.buf.putInt(at + 4, seq);
                            c[q].queuePair().postSend(s.send(seq, client.mr, at, MSG));
                        }
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    }
                }, "poster-" + i));
            }
            for (Thread t : threads) {
                t.setDaemon(true);
                t.start();
            }
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            for (Thread t : threads) {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(until - System.nanoTime())));
                if (failure.get() != null) {
                    break;
                }
            }
            stop.set(true);
            for (Thread t : threads) {
                t.join(5_000);
            }
            if (failure.get() != null) {
                throw new AssertionError("spinning middleware failed", failure.get());
            }
            for (int i = 0; i < qps; i++) {
                assertEquals(perQp, received[i], "messages received on QP " + i);
                assertEquals(perQp, sendsDone[i], "Sends completed on QP " + i);
            }
        }
    }

    /** Takes a send slot after a credit was taken; gives the credit back when no slot frees within 100 ms. */
    private static boolean acquire(java.util.concurrent.Semaphore slot, java.util.concurrent.Semaphore credit)
            throws InterruptedException {
        if (slot.tryAcquire(100, TimeUnit.MILLISECONDS)) {
            return true;
        }
        credit.release();
        return false;
    }

    /** What the application sees of a short receive (RFC 5041 §7.2) on both ends and on a healthy neighbour QP. */
    record ShortReceiveOutcome(WcStatus shortRecv, WcStatus laterRecv, WcStatus send, WcStatus peerRecv,
                               QueuePair.QpState receiverQp, QueuePair.QpState senderQp, boolean qpFatal,
                               WcStatus neighbourRecv, WcStatus neighbourSend) {
    }

    /** Completions taken from one CQ by spinning or by awaiting; those not asked for yet are kept. */
    static final class Reaper {
        final CompletionQueue cq;
        final boolean spin;
        final List<WorkCompletion> kept = new ArrayList<>();
        final WorkCompletion[] w = wcs(8);

        Reaper(CompletionQueue cq, boolean spin) {
            this.cq = cq;
            this.spin = spin;
        }

        /** The completion of {@code wrId} on QP {@code qpNum}, or null when none comes within {@code ms}. */
        WorkCompletion take(int qpNum, long wrId, long ms) throws InterruptedException {
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
            while (true) {
                for (int i = 0; i < kept.size(); i++) {
                    WorkCompletion k = kept.get(i);
                    if (k.qpNum == qpNum && k.wrId == wrId) {
                        return kept.remove(i);
                    }
                }
                long left = until - System.nanoTime();
                if (left <= 0) {
                    return null;
                }
                int n = spin ? cq.spin(w, w.length, Long.MAX_VALUE, Math.min(left, TimeUnit.MILLISECONDS.toNanos(5)))
                        : cq.await(w, w.length, Math.min(left, TimeUnit.MILLISECONDS.toNanos(100)), TimeUnit.NANOSECONDS);
                for (int i = 0; i < n; i++) {
                    WorkCompletion k = new WorkCompletion();
                    k.copyFrom(w[i]);
                    kept.add(k);
                }
            }
        }
    }

    /**
     * A receive too short for its Send on QP 0 of two sharing the CQs, every completion taken by
     * {@code spin} or by {@code await}: what the receiver, the sender and the neighbour see.
     */
    ShortReceiveOutcome shortReceiveSeenBy(boolean spin) throws Exception {
        try (End server = new End(8 * MSG); End client = new End(8 * MSG)) {
            LinkedBlockingQueue<AsyncEvent> events = new LinkedBlockingQueue<>();
            server.dev.setEventListener(events::add, Runnable::run);
            CompletionQueue scq = server.own(server.dev.createCompletionQueue(32));
            CompletionQueue ccq = client.own(client.dev.createCompletionQueue(32));
            Connection[] c = connectWithReceives(server, client, 2, i -> scq, ccq, 2); // server QP i: wrId 0, 1
            Reaper sr = new Reaper(scq, spin);
            Reaper cr = new Reaper(ccq, spin);
            QueuePair bad = c[2].queuePair();
            QueuePair sender = c[0].queuePair();
            sender.postRecv(77, client.mr, 4 * MSG, MSG);
            sender.postSend(new SendRequest().send(5, client.mr, 0, 2 * MSG)); // longer than receive 0
            WorkCompletion shortRecv = sr.take(bad.qpNum(), 0, 30_000);
            assertNotNull(shortRecv, "no completion of the short receive within 30 s (spin " + spin + ")");
            WorkCompletion later = sr.take(bad.qpNum(), 1, 30_000);
            assertNotNull(later, "the later receive never completed (spin " + spin + ")");
            WorkCompletion send = cr.take(sender.qpNum(), 5, 30_000);
            assertNotNull(send, "the sender's Send never completed (spin " + spin + ")");
            WorkCompletion peerRecv = cr.take(sender.qpNum(), 77, 5_000);
            AsyncEvent fatal = poll(events, AsyncEvent.Type.QP_FATAL, 5_000);
            if (fatal != null) {
                assertEquals(bad.qpNum(), fatal.qpNum(), fatal.toString());
            }
            c[1].queuePair().postSend(new SendRequest().send(6, client.mr, 0, MSG));
            WorkCompletion nRecv = sr.take(c[3].queuePair().qpNum(), 0, 30_000);
            WorkCompletion nSend = cr.take(c[1].queuePair().qpNum(), 6, 30_000);
            QueuePair.QpState senderState = settle(sender, 5_000);
            ShortReceiveOutcome o = new ShortReceiveOutcome(shortRecv.status, later.status, send.status,
                    peerRecv == null ? null : peerRecv.status, settle(bad, 5_000), senderState, fatal != null,
                    nRecv == null ? null : nRecv.status, nSend == null ? null : nSend.status);
            System.out.println(providerName() + (spin ? " spin" : " await") + " -> " + o);
            return o;
        }
    }

    /** The QP's state once it reached ERR, or after {@code ms} without. */
    static QueuePair.QpState settle(QueuePair qp, long ms) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
        while (qp.state() != QueuePair.QpState.ERR && System.nanoTime() < until) {
            Thread.sleep(10);
        }
        return qp.state();
    }

    /**
     * A data-path failure seen through {@link CompletionQueue#spin} surfaces as through
     * {@link CompletionQueue#await} (RFC 5041 §7.2, RFC 5040 §7): never thrown out of the poll, but
     * the error completion, the later WRs flushed, the receiver's QP in ERR with QP_FATAL, the TERM
     * at the peer, and the neighbour QP on the same CQs unharmed.
     */
    @Test
    void spinSeesDataPathFailureAsAwaitDoes_5041_7_2() throws Exception {
        ShortReceiveOutcome awaited = shortReceiveSeenBy(false);
        ShortReceiveOutcome spun = shortReceiveSeenBy(true);
        assertEquals(awaited, spun, "spin and await disagree");
        assertFalse(awaited.shortRecv() == WcStatus.SUCCESS, awaited.toString());
        assertEquals(WcStatus.WR_FLUSH_ERR, awaited.laterRecv(), awaited.toString());
        assertEquals(shortReceiveQpState(), awaited.receiverQp(), awaited.toString());
        assertEquals(shortReceiveRaisesQpFatal(), awaited.qpFatal(), awaited.toString());
        assertEquals(WcStatus.SUCCESS, awaited.neighbourRecv(), awaited.toString());
        assertEquals(WcStatus.SUCCESS, awaited.neighbourSend(), awaited.toString());
    }

    // ---- 6. single-consumer owners --------------------------------------------------------------

    /** Connections of the single-consumer owner test. */
    static final int OWNED_CONNECTIONS = 6;
    /** Bytes of one Send (ping or pong) of the owner test. */
    static final int OWNED_SEND = 1024;
    /** Bytes of one RDMA Write or Read of the owner test (several FPDUs at an MTU of 1500). */
    static final int OWNED_RDMA = 4096;
    /** One connection's slice of a shared region: four areas of {@link #OWNED_RDMA} bytes. */
    static final int OWNED_SLICE = 4 * OWNED_RDMA;
    /** Areas of a slice: the Send source, the receive sink, the RDMA Write source or target, the RDMA Read sink. */
    static final int AREA_SEND = 0;
    static final int AREA_RECV = OWNED_RDMA;
    static final int AREA_WRITE = 2 * OWNED_RDMA;
    static final int AREA_READ = 3 * OWNED_RDMA;
    /** Kinds of a round's work requests, the low bits of their wrIds (wrId = round * 4 + kind). */
    static final int KIND_SEND = 0;
    static final int KIND_RECV = 1;
    static final int KIND_WRITE = 2;
    static final int KIND_READ = 3;
    /** The longest wait for one completion of the owner test before its thread reports a hang. */
    static final long OWNED_WAIT_SECONDS = 60;

    /** Ping-pong rounds per connection of the owner test (fewer under emulation). */
    protected int ownedRounds() {
        return contentionMessages() / 10;
    }

    /** Spinning threads, one per core unless a count is given, until closed. */
    static final class CpuHogs implements AutoCloseable {
        private final AtomicBoolean stop = new AtomicBoolean();
        private final List<Thread> hogs = new ArrayList<>();

        CpuHogs() {
            this(Runtime.getRuntime().availableProcessors());
        }

        CpuHogs(int count) {
            for (int i = 0; i < count; i++) {
                Thread t = new Thread(() -> {
                    long x = 0;
                    while (!stop.get()) {
                        x += System.nanoTime() & 7;
                    }
                    if (x == 42) {
                        System.out.print("");
                    }
                }, "cpu-hog-" + i);
                t.setDaemon(true);
                t.start();
                hogs.add(t);
            }
        }

        int count() {
            return hogs.size();
        }

        @Override
        public void close() throws InterruptedException {
            stop.set(true);
            for (Thread t : hogs) {
                t.join();
            }
        }
    }

    /** The byte at {@code k} of what connection {@code conn} moves in {@code round} as {@code kind}. */
    static byte ownedByte(int conn, int round, int kind, int k) {
        return (byte) (conn * 73 + round * 31 + kind * 17 + k * 7 + (k >>> 8) + 1);
    }

    /** Fills {@code len} bytes at {@code at} of {@code buf} with the pattern of (conn, round, kind), by absolute index. */
    static void fillOwned(ByteBuffer buf, int at, int len, int conn, int round, int kind) {
        for (int k = 0; k < len; k++) {
            buf.put(at + k, ownedByte(conn, round, kind, k));
        }
    }

    /** Checks {@code len} bytes at {@code at} of {@code buf} against the pattern, byte for byte. */
    static void verifyOwned(ByteBuffer buf, int at, int len, int conn, int round, int kind, String what) {
        for (int k = 0; k < len; k++) {
            byte want = ownedByte(conn, round, kind, k);
            byte got = buf.get(at + k);
            if (got != want) {
                throw new AssertionError("connection " + conn + " round " + round + ": " + what + " differs at byte " + k
                        + " of " + len + " (expected " + want + ", got " + got + ")");
            }
        }
    }

    /**
     * One owner's single-consumer CQ: waits for the completions a round owes, by poll, spin or
     * await by round, each wait bounded; every completion must succeed, be of the QP and of this
     * round or (a receive the peer caused before this owner's last completion came) the next.
     */
    static final class OwnedCq {
        final CompletionQueue cq;
        final QueuePair qp;
        final String who;
        final WorkCompletion[] w = wcs(4);
        /** Kinds of the next round already taken, a bit each. */
        int early;

        OwnedCq(CompletionQueue cq, QueuePair qp, String who) {
            this.cq = cq;
            this.qp = qp;
            this.who = who;
        }

        /** Takes completions until every kind in {@code wanted} (a bit per kind) of {@code round} came. */
        void reap(int round, int wanted, AtomicBoolean stop) throws InterruptedException {
            int seen = early;
            early = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(OWNED_WAIT_SECONDS);
            while (seen != wanted) {
                if (stop.get()) {
                    throw new AssertionError(who + " stopped in round " + round + " with kinds " + seen + " of " + wanted);
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError(who + " hung: round " + round + " got kinds " + seen + " of " + wanted
                            + " within " + OWNED_WAIT_SECONDS + " s");
                }
                int n = switch (round % 3) {
                    case 0 -> cq.poll(w, w.length);
                    case 1 -> cq.spin(w, w.length, 1 << 16, TimeUnit.MILLISECONDS.toNanos(10));
                    default -> cq.await(w, w.length, 100, TimeUnit.MILLISECONDS);
                };
                for (int i = 0; i < n; i++) {
                    WorkCompletion wc = w[i];
                    int kind = (int) (wc.wrId & 3);
                    boolean next = wc.wrId >>> 2 == round + 1 && kind == KIND_RECV && (early & (1 << kind)) == 0;
                    if (!wc.isSuccess() || wc.qpNum != qp.qpNum() || !next && (wc.wrId >>> 2 != round
                            || (seen & (1 << kind)) != 0 || (wanted & (1 << kind)) == 0)) {
                        throw new AssertionError(who + " round " + round + ": unexpected completion " + wc);
                    }
                    WcOpcode op = switch (kind) {
                        case KIND_SEND -> WcOpcode.SEND;
                        case KIND_RECV -> WcOpcode.RECV;
                        case KIND_WRITE -> WcOpcode.RDMA_WRITE;
                        default -> WcOpcode.RDMA_READ;
                    };
                    if (wc.opcode != op || (kind == KIND_RECV && wc.byteLength != OWNED_SEND)) {
                        throw new AssertionError(who + " round " + round + ": expected " + op + ", got " + wc);
                    }
                    if (next) {
                        early |= 1 << kind;
                    } else {
                        seen |= 1 << kind;
                    }
                }
            }
        }
    }

    /**
     * Middleware's thread per connection on single-consumer queues (RFC 5040 §5: Send §5.3, RDMA
     * Write §5.1, RDMA Read §5.2): six connections of one protection domain per end, each end's
     * connections sharing one registered region in disjoint slices; each connection's QPs and CQs
     * are single-consumer, and each is driven by its own thread on each end, which alone posts to
     * its QP and polls its CQ (poll, spin or await by round) while a CPU hog spins on every core.
     * Per round the client writes its slice of the server's region (RDMA Write), sends a ping,
     * takes the server's pong, and reads the written bytes back (RDMA Read); the server checks the
     * ping and the written slice when the ping arrives (a Send completes at the Data Sink after the
     * RDMA Write before it is placed, RFC 5040 §5.5), then answers. Every completion succeeds, every
     * byte is checked, and every wait is bounded: a thread that waits for one completion longer than
     * {@value #OWNED_WAIT_SECONDS} s reports a hang. The receives posted in the hooks on the setup
     * threads keep the contract (the handover through the futures and the thread starts).
     */
    @Test
    void singleConsumerOwnersPerConnectionShareRegionUnderCpuHogs_5040_5() throws Exception {
        final int n = OWNED_CONNECTIONS;
        final int rounds = ownedRounds();
        final boolean exploited = providerName().equals("disni") || providerName().equals("ffm");
        try (End server = new End(n * OWNED_SLICE); End client = new End(n * OWNED_SLICE)) {
            CompletionQueue[] scq = new CompletionQueue[n];
            CompletionQueue[] ccq = new CompletionQueue[n];
            for (int i = 0; i < n; i++) {
                scq[i] = server.own(server.dev.createCompletionQueue(16, null, true));
                ccq[i] = client.own(client.dev.createCompletionQueue(16, null, true));
                assertEquals(exploited, scq[i].singleConsumer(), "server CQ " + i + " single-consumer");
                assertEquals(exploited, ccq[i].singleConsumer(), "client CQ " + i + " single-consumer");
            }
            // round 0's receive of each QP, posted on the setup thread before the connection exists
            Connection[] c = connectMany(server, client, n,
                    i -> new QueuePairConfig(server.pd, scq[i], scq[i], 4, 2, qp -> qp.postRecv(KIND_RECV, server.mr,
                            (long) i * OWNED_SLICE + AREA_RECV, OWNED_SEND)).withSingleConsumer(true),
                    i -> new QueuePairConfig(client.pd, ccq[i], ccq[i], 4, 2, qp -> qp.postRecv(KIND_RECV, client.mr,
                            (long) i * OWNED_SLICE + AREA_RECV, OWNED_SEND)).withSingleConsumer(true));
            for (int i = 0; i < 2 * n; i++) {
                assertEquals(exploited, c[i].queuePair().singleConsumer(), "QP " + i + " single-consumer");
            }
            AtomicReference<Throwable> failure = new AtomicReference<>();
            AtomicBoolean stop = new AtomicBoolean();
            int[] clientRounds = new int[n];
            int[] serverRounds = new int[n];
            List<Thread> owners = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                final int conn = i;
                final int base = i * OWNED_SLICE;
                final long target = server.mr.address() + base + AREA_WRITE;
                final int rkey = server.mr.rkey();
                owners.add(new Thread(() -> {
                    QueuePair qp = c[conn].queuePair();
                    OwnedCq own = new OwnedCq(ccq[conn], qp, "client owner " + conn);
                    SendRequest s = new SendRequest();
                    byte[] zero = new byte[OWNED_RDMA];
                    try {
                        for (int r = 0; r < rounds && !stop.get(); r++) {
                            long id = (long) r << 2;
                            fillOwned(client.buf, base + AREA_WRITE, OWNED_RDMA, conn, r, KIND_WRITE);
                            qp.postSend(s.write(id | KIND_WRITE, client.mr, base + AREA_WRITE, OWNED_RDMA, target, rkey));
                            fillOwned(client.buf, base + AREA_SEND, OWNED_SEND, conn, r, KIND_SEND);
                            qp.postSend(s.send(id | KIND_SEND, client.mr, base + AREA_SEND, OWNED_SEND));
                            own.reap(r, 1 << KIND_WRITE | 1 << KIND_SEND | 1 << KIND_RECV, stop);
                            verifyOwned(client.buf, base + AREA_RECV, OWNED_SEND, conn, r, KIND_RECV, "the pong");
                            // the next round's pong buffer, before the next ping can cause it
                            qp.postRecv(id + 4 | KIND_RECV, client.mr, base + AREA_RECV, OWNED_SEND);
                            client.buf.put(base + AREA_READ, zero); // a Read that places nothing fails the check
                            qp.postSend(s.read(id | KIND_READ, client.mr, base + AREA_READ, OWNED_RDMA, target, rkey));
                            own.reap(r, 1 << KIND_READ, stop);
                            verifyOwned(client.buf, base + AREA_READ, OWNED_RDMA, conn, r, KIND_WRITE,
                                    "the RDMA Read of the written slice");
                            clientRounds[conn]++;
                        }
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                        stop.set(true); // the peer owner stops waiting for this one
                    }
                }, "client-owner-" + i));
                owners.add(new Thread(() -> {
                    QueuePair qp = c[n + conn].queuePair();
                    OwnedCq own = new OwnedCq(scq[conn], qp, "server owner " + conn);
                    SendRequest s = new SendRequest();
                    try {
                        for (int r = 0; r < rounds && !stop.get(); r++) {
                            long id = (long) r << 2;
                            own.reap(r, 1 << KIND_RECV, stop);
                            verifyOwned(server.buf, base + AREA_RECV, OWNED_SEND, conn, r, KIND_SEND, "the ping");
                            verifyOwned(server.buf, base + AREA_WRITE, OWNED_RDMA, conn, r, KIND_WRITE,
                                    "the slice the RDMA Write before the ping placed");
                            qp.postRecv(id + 4 | KIND_RECV, server.mr, base + AREA_RECV, OWNED_SEND);
                            fillOwned(server.buf, base + AREA_SEND, OWNED_SEND, conn, r, KIND_RECV);
                            qp.postSend(s.send(id | KIND_SEND, server.mr, base + AREA_SEND, OWNED_SEND));
                            own.reap(r, 1 << KIND_SEND, stop);
                            serverRounds[conn]++;
                        }
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                        stop.set(true); // the peer owner stops waiting for this one
                    }
                }, "server-owner-" + i));
            }
            int hogCount;
            try (CpuHogs hogs = new CpuHogs()) {
                hogCount = hogs.count();
                for (Thread t : owners) {
                    t.setDaemon(true);
                    t.start();
                }
                // each owner bounds its own waits; this bound only catches a thread stuck inside a call
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(240);
                for (Thread t : owners) {
                    t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(until - System.nanoTime())));
                }
                stop.set(true);
                for (Thread t : owners) {
                    t.join(5_000);
                    if (t.isAlive()) {
                        AssertionError hung = new AssertionError(t.getName() + " hung inside a call of its queues");
                        hung.setStackTrace(t.getStackTrace());
                        failure.compareAndSet(null, hung);
                    }
                }
            }
            if (failure.get() != null) {
                throw new AssertionError("single-consumer owners failed", failure.get());
            }
            for (int i = 0; i < n; i++) {
                assertEquals(rounds, clientRounds[i], "rounds of client owner " + i);
                assertEquals(rounds, serverRounds[i], "rounds of server owner " + i);
            }
            System.out.println(providerName() + ": " + n + " single-consumer connections x " + rounds + " rounds under "
                    + hogCount + " CPU hogs");
        }
    }
}
