package org.jwarp.ffm.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.QueuePair.QpState;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.jwarp.verbs.WorkRequestException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A loopback connection through rdma_cm and {@code java.lang.foreign} on the kernel's siw0 and
 * rxe0 (guest only, JDK 25): Send into a posted receive (RFC 5040 §5.3), RDMA Write (§5.1),
 * RDMA Read (§5.2), a chain with an unsignalled WR, the shared post-time checks, and round trips of
 * each that allocate nothing once warm.
 */
@Tag("device")
class FfmConnectionOnDevicesTest {
    private static final long TIMEOUT_MS = 20_000;
    private static final int REGION = 64 * 1024;

    /** Both ends of one loopback connection, on one thread. */
    private static final class Loopback implements AutoCloseable {
        final FfmCmChannel serverChannel = FfmCmChannel.create();
        final FfmCmChannel clientChannel = FfmCmChannel.create();
        final FfmCmId listener = FfmCmId.create(serverChannel);
        final FfmCmId client = FfmCmId.create(clientChannel);
        final FfmContext clientDevice;
        final FfmContext serverDevice;
        final FfmCq clientCq;
        final FfmCq serverCq;
        final FfmQp clientQp;
        final FfmQp serverQp;
        final MemoryRegion clientMr;
        final MemoryRegion serverMr;
        FfmCmId server;

        Loopback(String address, int port) throws RdmaException {
            InetSocketAddress at = new InetSocketAddress(InetAddress.ofLiteral(address), port);
            listener.listen(at, 4);
            client.resolve(at, 5_000);
            clientDevice = FfmContext.adopt(client.verbs());
            FfmPd cpd = clientDevice.allocatePd();
            clientCq = clientDevice.createCq(256);
            clientQp = FfmQp.create(client, cpd, clientCq, clientCq, null, 16, 16, 2, 2, 64);
            clientMr = cpd.register(ByteBuffer.allocateDirect(REGION), EnumSet.allOf(Access.class));
            assertEquals(QpState.INIT, clientQp.state());
            client.connect(4, 4);

            FfmCmChannel.Event request = serverChannel.expect(RdmaCm.CONNECT_REQUEST, null, TIMEOUT_MS);
            server = FfmCmId.requested(serverChannel, request);
            serverDevice = FfmContext.adopt(server.verbs());
            FfmPd spd = serverDevice.allocatePd();
            serverCq = serverDevice.createCq(256);
            serverQp = FfmQp.create(server, spd, serverCq, serverCq, null, 16, 16, 2, 2, 64);
            serverMr = spd.register(ByteBuffer.allocateDirect(REGION), EnumSet.allOf(Access.class));
            server.accept(4, 4);
            clientChannel.expect(RdmaCm.ESTABLISHED, client.id, TIMEOUT_MS);
            clientQp.established(4);
            serverChannel.expect(RdmaCm.ESTABLISHED, server.id, TIMEOUT_MS);
            serverQp.established(4);
        }

        @Override
        public void close() throws RdmaException {
            try {
                // The passive side's id answers the disconnection (over the IB CM of rxe, destroying it sends the
                // DREP that the initiator's DISCONNECTED waits for; siw's initiator sees DISCONNECTED either way).
                client.disconnect();
                serverChannel.expect(RdmaCm.DISCONNECTED, server.id, TIMEOUT_MS);
                server.close();
                clientChannel.expect(RdmaCm.DISCONNECTED, client.id, TIMEOUT_MS);
            } finally {
                server.close();
                client.close();
                listener.close();
                serverDevice.close();
                clientDevice.close();
                serverChannel.close();
                clientChannel.close();
            }
        }
    }

    private static WorkCompletion[] wcs(int n) {
        WorkCompletion[] w = new WorkCompletion[n];
        for (int i = 0; i < n; i++) {
            w[i] = new WorkCompletion();
        }
        return w;
    }

    /** Polls until one completion (spinning: the loop the zero-allocation claim is about). */
    private static WorkCompletion one(FfmCq cq, WorkCompletion[] out) {
        long deadline = System.nanoTime() + TIMEOUT_MS * 1_000_000L;
        while (true) {
            int n = cq.poll(out, 1);
            if (n == 1) {
                return out[0];
            }
            if ((System.nanoTime() - deadline) > 0) {
                fail("no completion within " + TIMEOUT_MS + " ms on " + cq);
            }
        }
    }

    @ParameterizedTest
    @CsvSource({"10.77.0.1, 7471", "10.78.0.1, 7472"})
    void sendWriteAndReadMoveTheBytes(String address, int port) throws RdmaException {
        try (Loopback c = new Loopback(address, port)) {
            WorkCompletion[] cw = wcs(4);
            WorkCompletion[] sw = wcs(4);
            ByteBuffer cbuf = c.clientMr.buffer();
            ByteBuffer sbuf = c.serverMr.buffer();
            for (int i = 0; i < 1024; i++) {
                cbuf.put(i, (byte) (i * 7 + 1));
            }
            // Send into a posted receive
            c.serverQp.postRecv(70, c.serverMr, 4096, 256);
            c.clientQp.postSend(new SendRequest().send(11, c.clientMr, 0, 100));
            WorkCompletion s = one(c.clientCq, cw);
            assertEquals(WcStatus.SUCCESS, s.status, s.toString());
            assertEquals(11, s.wrId);
            assertEquals(WcOpcode.SEND, s.opcode);
            WorkCompletion r = one(c.serverCq, sw);
            assertEquals(WcStatus.SUCCESS, r.status, r.toString());
            assertEquals(70, r.wrId);
            assertEquals(WcOpcode.RECV, r.opcode);
            assertEquals(100, r.byteLength);
            assertEquals(c.serverQp.qpNum(), r.qpNum);
            assertEquals(cbuf.slice(0, 100), sbuf.slice(4096, 100));

            // RDMA Write into the server's region
            c.clientQp.postSend(new SendRequest().write(12, c.clientMr, 0, 512, c.serverMr.address() + 8192, c.serverMr.rkey()));
            WorkCompletion w = one(c.clientCq, cw);
            assertEquals(WcStatus.SUCCESS, w.status, w.toString());
            assertEquals(12, w.wrId);
            assertEquals(WcOpcode.RDMA_WRITE, w.opcode);
            assertEquals(cbuf.slice(0, 512), sbuf.slice(8192, 512));

            // RDMA Read back from it
            for (int i = 0; i < 300; i++) {
                sbuf.put(16384 + i, (byte) (255 - i));
            }
            c.clientQp.postSend(new SendRequest().read(13, c.clientMr, 32768, 300, c.serverMr.address() + 16384,
                    c.serverMr.rkey()));
            WorkCompletion rd = one(c.clientCq, cw);
            assertEquals(WcStatus.SUCCESS, rd.status, rd.toString());
            assertEquals(13, rd.wrId);
            assertEquals(WcOpcode.RDMA_READ, rd.opcode);
            assertEquals(300, rd.byteLength);
            assertEquals(sbuf.slice(16384, 300), cbuf.slice(32768, 300));

            // A chain in one post: an unsignalled Write, then a signalled Send; one completion retires both
            long calls = c.clientQp.postCalls();
            c.serverQp.postRecv(71, c.serverMr, 4096, 256);
            SendRequest first = new SendRequest().write(14, c.clientMr, 1024, 64, c.serverMr.address() + 20000,
                    c.serverMr.rkey());
            first.signaled = false;
            first.next = new SendRequest().send(15, c.clientMr, 0, 8);
            c.clientQp.postSend(first);
            assertEquals(calls + 1, c.clientQp.postCalls(), "one downcall for the chain");
            WorkCompletion chained = one(c.clientCq, cw);
            assertEquals(15, chained.wrId, chained.toString());
            assertEquals(71, one(c.serverCq, sw).wrId);
            assertEquals(cbuf.slice(1024, 64), sbuf.slice(20000, 64));
            assertEquals(0, c.clientCq.poll(cw, 4), "the unsignalled Write completes nothing");
        }
    }

    @ParameterizedTest
    @CsvSource({"10.77.0.1, 7479", "10.78.0.1, 7480"})
    void readsPostedBeforeASendCompleteWithTheirOwnWrIds(String address, int port) throws RdmaException {
        // siw completes a Send once transmitted and a Read once its response is placed, so the Send
        // below may complete first; the Reads must still come back with their own wrIds.
        try (Loopback c = new Loopback(address, port)) {
            WorkCompletion[] cw = wcs(4);
            c.serverQp.postRecv(72, c.serverMr, 0, 256);
            SendRequest first = new SendRequest().read(21, c.clientMr, 0, 16384, c.serverMr.address() + 16384,
                    c.serverMr.rkey());
            first.next = new SendRequest().read(22, c.clientMr, 16384, 16384, c.serverMr.address() + 32768,
                    c.serverMr.rkey());
            first.next.next = new SendRequest().send(23, c.clientMr, 49152, 8);
            c.clientQp.postSend(first);
            long[] ids = new long[3];
            WcOpcode[] ops = new WcOpcode[3];
            for (int i = 0; i < 3; i++) {
                WorkCompletion wc = one(c.clientCq, cw);
                assertEquals(WcStatus.SUCCESS, wc.status, wc.toString());
                ids[i] = wc.wrId;
                ops[i] = wc.opcode;
            }
            assertEquals(72, one(c.serverCq, wcs(1)).wrId);
            long[] sorted = ids.clone();
            Arrays.sort(sorted);
            assertEquals("[21, 22, 23]", Arrays.toString(sorted), "wrIds in completion order " + Arrays.toString(ids)
                    + ", opcodes " + Arrays.toString(ops));
        }
    }

    @ParameterizedTest
    @CsvSource({"10.77.0.1, 7473", "10.78.0.1, 7474"})
    void refusedWorkRequestsAreTheSharedChecks(String address, int port) throws RdmaException {
        try (Loopback c = new Loopback(address, port)) {
            // more SGEs than granted: the shared RFC 5040 §7 check names num_sge, nothing reaches the device
            SendRequest wide = new SendRequest();
            wide.wrId = 20;
            for (int i = 0; i <= c.clientQp.caps().maxSendSge(); i++) {
                wide.sgl.add(c.clientMr, i * 16L, 16);
            }
            long calls = c.clientQp.postCalls();
            WorkRequestException e = assertThrows(WorkRequestException.class, () -> c.clientQp.postSend(wide));
            assertTrue(e.getMessage().contains("num_sge"), e.getMessage());
            assertEquals(calls, c.clientQp.postCalls(), "a refused WR is not posted");
            // the send queue fills up: signalled WRs that have not been polled hold their slots
            int depth = c.clientQp.caps().maxSendWr();
            SendRequest wr = new SendRequest();
            for (int i = 0; i < depth; i++) {
                c.clientQp.postSend(wr.write(100 + i, c.clientMr, 0, 8, c.serverMr.address(), c.serverMr.rkey()));
            }
            WorkRequestException full = assertThrows(WorkRequestException.class,
                    () -> c.clientQp.postSend(wr.write(999, c.clientMr, 0, 8, c.serverMr.address(), c.serverMr.rkey())));
            assertTrue(full.getMessage().contains("send queue of QP " + c.clientQp.qpNum() + " is full"), full.getMessage());
            WorkCompletion[] cw = wcs(depth);
            int got = 0;
            long deadline = System.nanoTime() + TIMEOUT_MS * 1_000_000L;
            while (got < depth && System.nanoTime() - deadline < 0) {
                int n = c.clientCq.poll(cw, depth);
                for (int i = 0; i < n; i++) {
                    assertEquals(100 + got + i, cw[i].wrId, cw[i].toString());
                }
                got += n;
            }
            assertEquals(depth, got);
            c.clientQp.postSend(wr.write(1000, c.clientMr, 0, 8, c.serverMr.address(), c.serverMr.rkey()));
            assertEquals(1000, one(c.clientCq, cw).wrId);
        }
    }

    @ParameterizedTest
    @CsvSource({"10.77.0.1, 7477", "10.78.0.1, 7478"})
    void aRejectedRequestEndsInRejectedAndAnUnexpectedEventIsNamed(String address, int port) throws RdmaException {
        InetSocketAddress at = new InetSocketAddress(InetAddress.ofLiteral(address), port);
        try (FfmCmChannel serverChannel = FfmCmChannel.create(); FfmCmChannel clientChannel = FfmCmChannel.create();
                FfmCmId listener = FfmCmId.create(serverChannel); FfmCmId client = FfmCmId.create(clientChannel)) {
            listener.listen(at, 4);
            client.resolve(at, 5_000);
            try (FfmContext dev = FfmContext.adopt(client.verbs())) {
                FfmPd pd = dev.allocatePd();
                FfmCq cq = dev.createCq(16);
                FfmQp.create(client, pd, cq, cq, null, 4, 4, 1, 1, 0);
                client.connect(4, 4);
                try (FfmCmId request = FfmCmId.requested(serverChannel,
                        serverChannel.expect(RdmaCm.CONNECT_REQUEST, null, TIMEOUT_MS))) {
                    request.reject();
                    RdmaException e = assertThrows(RdmaException.class,
                            () -> clientChannel.expect(RdmaCm.ESTABLISHED, client.id, TIMEOUT_MS));
                    assertTrue(e.getMessage().startsWith("rdma_cm: REJECTED (status ")
                            && e.getMessage().endsWith(" where ESTABLISHED was expected"), e.getMessage());
                }
                client.close(); // its QP before the CQ and PD the context closes
            }
        }
    }

    /** One operation of a round-trip measurement. */
    private interface RoundTrip {
        void run(Loopback c, WorkCompletion[] cw, WorkCompletion[] sw) throws WorkRequestException;
    }

    @ParameterizedTest
    @CsvSource({"10.77.0.1, 7475", "10.78.0.1, 7476"})
    void roundTripsAllocateNothingOnceWarm(String address, int port) throws RdmaException {
        try (Loopback c = new Loopback(address, port)) {
            SendRequest write = new SendRequest().write(1, c.clientMr, 0, 64, c.serverMr.address(), c.serverMr.rkey());
            SendRequest read = new SendRequest().read(2, c.clientMr, 4096, 64, c.serverMr.address() + 4096, c.serverMr.rkey());
            SendRequest send = new SendRequest().send(3, c.clientMr, 0, 64);
            assertAllocationFree(c, "RDMA Write (RFC 5040 §5.1): post_send + poll_cq", (l, cw, sw) -> {
                l.clientQp.postSend(write);
                succeeded(one(l.clientCq, cw));
            });
            assertAllocationFree(c, "RDMA Read (RFC 5040 §5.2): post_send + poll_cq", (l, cw, sw) -> {
                l.clientQp.postSend(read);
                succeeded(one(l.clientCq, cw));
            });
            assertAllocationFree(c, "Send into a posted receive (RFC 5040 §5.3): post_recv + post_send + both polls",
                    (l, cw, sw) -> {
                        l.serverQp.postRecv(4, l.serverMr, 0, 64);
                        l.clientQp.postSend(send);
                        succeeded(one(l.clientCq, cw));
                        succeeded(one(l.serverCq, sw));
                    });
        }
    }

    /**
     * {@code await} polls, arms, polls and sleeps on the CQ's own completion channel (RFC 5040 §5.5
     * completion notification), allocating nothing once warm: the measured thread posts a receive
     * and awaits it while another thread sends into it a millisecond later, so the await finds the
     * CQ empty and sleeps. The CQs then close with events taken and not all acknowledged
     * (acknowledged 64 at a time), which {@code ibv_destroy_cq} would otherwise wait for. Both
     * waits: the Java steps, and with {@code oneCall} the whole sequence in one downcall
     * ({@code jw_cq_await} of jwarp's native library, {@link FfmNativeWait}).
     */
    @ParameterizedTest
    @CsvSource({"10.77.0.1, 7481, false", "10.78.0.1, 7482, false", "10.77.0.1, 7501, true", "10.78.0.1, 7502, true"})
    void awaitSleepsOnTheChannelAndAllocatesNothing_5040_5_5(String address, int port, boolean oneCall) throws Exception {
        int perRound = 500;
        int warm = 4;
        long[] rounds = new long[3];
        String lib = oneCall ? NativeWaitLibrary.path().toString() : null;
        try (Loopback c = NativeWaitLibrary.with(lib, () -> new Loopback(address, port))) {
            String expected = oneCall ? "one downcall (jw_cq_await of " + lib + ")"
                    : "Java steps (poll, arm, poll, poll(2), ibv_get_cq_event)";
            assertEquals(expected, c.serverCq.waitSequence());
            assertEquals(expected, c.clientCq.waitSequence());
            SendRequest send = new SendRequest().send(5, c.clientMr, 0, 64);
            AtomicLong posted = new AtomicLong();
            AtomicReference<Throwable> senderFailed = new AtomicReference<>();
            long total = (long) perRound * (warm + rounds.length);
            Thread sender = new Thread(() -> {
                WorkCompletion[] cw = wcs(4);
                long deadline = System.nanoTime() + 10 * TIMEOUT_MS * 1_000_000L;
                try {
                    for (long sent = 0; sent < total; sent++) {
                        while (posted.get() <= sent) {
                            if (System.nanoTime() - deadline > 0) {
                                throw new IllegalStateException("the awaiting thread stopped at " + sent);
                            }
                            Thread.onSpinWait();
                        }
                        LockSupport.parkNanos(1_000_000L); // the receiver is asleep by now
                        c.clientQp.postSend(send);
                        succeeded(awaited(c.clientCq, cw));
                    }
                } catch (Throwable t) {
                    senderFailed.set(t);
                }
            }, "sender");
            sender.setDaemon(true);
            sender.start();
            com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            WorkCompletion[] sw = wcs(4);
            int mostUnacked = 0;
            for (int r = 0; r < warm + rounds.length; r++) {
                long before = threads.getCurrentThreadAllocatedBytes();
                for (int i = 0; i < perRound && senderFailed.get() == null; i++) {
                    c.serverQp.postRecv(6, c.serverMr, 0, 64);
                    posted.incrementAndGet();
                    succeeded(awaited(c.serverCq, sw));
                    mostUnacked = Math.max(mostUnacked, c.serverCq.awaitUnacknowledged());
                }
                if (r >= warm) {
                    rounds[r - warm] = threads.getCurrentThreadAllocatedBytes() - before;
                }
            }
            sender.join(TIMEOUT_MS);
            assertNull(senderFailed.get(), "the sending thread failed");
            assertEquals(0, Arrays.stream(rounds).min().getAsLong(), "bytes allocated by " + perRound
                    + " receives awaited (poll, arm, poll, poll(2), ibv_get_cq_event), per round: " + Arrays.toString(rounds));
            if (oneCall) {
                // jw_cq_await counts the events it takes in the CQ's unacknowledged count (acknowledged 64 at a time)
                assertTrue(mostUnacked > 0, "jw_cq_await never took an event of the CQ's channel");
            } else {
                assertTrue(c.serverCq.awaitEvents() > 0, "await never slept on the CQ's channel");
            }
        }
    }

    /**
     * Two threads await one CQ (RFC 5040 §5.5 completion notification) with a busy thread on every
     * core: both armed it and sleep on its channel, one after the other; the first Send's event
     * wakes the first and disarms the CQ, so the second must arm again before it sleeps, or the
     * second Send raises no event and it sleeps through its whole 100 ms slice with the completion
     * waiting. Each round measures the second Send's wait, from its post to the second awaiter's return.
     */
    @ParameterizedTest
    @CsvSource({"10.77.0.1, 7495"})
    void twoAwaitersOfOneCqLoseNoWakeUpUnderLoad_5040_5_5(String address, int port) throws Exception {
        int cores = Runtime.getRuntime().availableProcessors();
        java.util.concurrent.atomic.AtomicBoolean hogging = new java.util.concurrent.atomic.AtomicBoolean(true);
        Thread[] hogs = new Thread[cores];
        for (int i = 0; i < cores; i++) {
            hogs[i] = Thread.ofPlatform().daemon().name("hog-" + i).start(() -> {
                while (hogging.get()) {
                    Thread.onSpinWait();
                }
            });
        }
        long[] waits = new long[7];
        try (Loopback c = new Loopback(address, port)) {
            WorkCompletion[] cw = wcs(4);
            SendRequest send = new SendRequest().send(7, c.clientMr, 0, 64);
            for (int r = 0; r < waits.length; r++) {
                c.serverQp.postRecv(8, c.serverMr, 0, 64);
                c.serverQp.postRecv(9, c.serverMr, 256, 64);
                java.util.concurrent.BlockingQueue<Long> returned = new java.util.concurrent.LinkedBlockingQueue<>();
                Thread[] awaiters = new Thread[2];
                for (int i = 0; i < awaiters.length; i++) {
                    awaiters[i] = Thread.ofPlatform().daemon().name("awaiter-" + i).start(() -> {
                        WorkCompletion[] sw = wcs(1);
                        try {
                            int n = c.serverCq.await(sw, 1, TIMEOUT_MS, java.util.concurrent.TimeUnit.MILLISECONDS);
                            returned.add(n == 1 && sw[0].status == WcStatus.SUCCESS ? System.nanoTime() : -1L);
                        } catch (Throwable t) {
                            returned.add(-2L);
                        }
                    });
                }
                long deadline = System.nanoTime() + TIMEOUT_MS * 1_000_000L;
                while (!(inCqSleep(awaiters[0]) && inCqSleep(awaiters[1]))) {
                    assertTrue(System.nanoTime() - deadline < 0, "the awaiters never reached the CQ's sleep");
                    LockSupport.parkNanos(1_000_000L);
                }
                c.clientQp.postSend(send);
                succeeded(awaited(c.clientCq, cw));
                Long first = returned.poll(TIMEOUT_MS, java.util.concurrent.TimeUnit.MILLISECONDS);
                assertTrue(first != null && first > 0, "the first awaiter: " + first);
                long posted = System.nanoTime();
                c.clientQp.postSend(send);
                succeeded(awaited(c.clientCq, cw));
                Long second = returned.poll(TIMEOUT_MS, java.util.concurrent.TimeUnit.MILLISECONDS);
                assertTrue(second != null && second > 0, "the second awaiter: " + second);
                waits[r] = (second - posted) / 1_000;
                for (Thread a : awaiters) {
                    a.join(TIMEOUT_MS);
                }
            }
        } finally {
            hogging.set(false);
        }
        long[] sorted = waits.clone();
        Arrays.sort(sorted);
        assertTrue(sorted[sorted.length / 2] < 50_000, "the second awaiter's wait for the second Send, µs per round: "
                + Arrays.toString(waits) + " (a sleep on a disarmed CQ lasts its 100 ms slice)");
    }

    /**
     * A QP made and closed on a CQ that another thread awaits in one downcall ({@code jw_cq_await},
     * which holds the CQ's monitor for each step of up to 100 ms), then a poll of that CQ from a
     * third thread, are not held up by the await: the test holds the awaiter inside its first step
     * ({@link FfmCq#stepHook}, the monitor held), QPs come and go under a lock of their own, and the
     * poll, blocked on the monitor during the step, goes before the awaiter's next step (without the
     * hand-off the awaiter takes the monitor again at once). Ordering, not timing.
     */
    @ParameterizedTest
    @CsvSource({"10.77.0.1, 7505", "10.78.0.1, 7506"})
    void queuePairsComeAndGoAndPollsGetInWhileAnotherThreadAwaitsTheCq(String address, int port) throws Exception {
        String lib = NativeWaitLibrary.path().toString();
        try (FfmCmChannel ch = FfmCmChannel.create()) {
            FfmCmId id = FfmCmId.create(ch);
            FfmContext device = null;
            try {
                id.resolve(new InetSocketAddress(InetAddress.ofLiteral(address), port), 5_000);
                device = FfmContext.adopt(id.verbs());
                FfmContext dev = device;
                FfmPd pd = device.allocatePd();
                FfmCq cq = NativeWaitLibrary.with(lib, () -> dev.createCq(16));
                assertEquals("one downcall (jw_cq_await of " + lib + ")", cq.waitSequence());
                Semaphore inFirstStep = new Semaphore(0);
                Semaphore endFirstStep = new Semaphore(0);
                Thread[] poller = new Thread[1]; // blocked on the CQ's monitor until it is in, then never again
                List<Boolean> polledAtStep = new CopyOnWriteArrayList<>();
                cq.stepHook = () -> {
                    Thread p = poller[0];
                    polledAtStep.add(p != null && p.getState() != Thread.State.BLOCKED); // the poll has been in
                    if (polledAtStep.size() == 1) {
                        inFirstStep.release();
                        endFirstStep.acquireUninterruptibly(); // the step holds the monitor until the test lets it go
                    }
                };
                BlockingQueue<Object> returned = new LinkedBlockingQueue<>();
                Thread awaiter = Thread.ofPlatform().daemon().name("awaiter").start(() -> {
                    try {
                        returned.add(cq.await(wcs(1), 1, 60, TimeUnit.SECONDS));
                    } catch (Throwable t) {
                        returned.add(t);
                    }
                });
                CompletableFuture<Void> qpMadeAndClosed = null;
                try {
                    assertTrue(inFirstStep.tryAcquire(TIMEOUT_MS, TimeUnit.MILLISECONDS), "the awaiter never reached its step");
                    qpMadeAndClosed = CompletableFuture.runAsync(() -> {
                        try {
                            FfmQp.create(id, pd, cq, cq, null, 4, 4, 1, 1, 0).close();
                        } catch (RdmaException e) {
                            throw new IllegalStateException(e);
                        }
                    });
                    try {
                        qpMadeAndClosed.get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
                    } catch (TimeoutException e) {
                        fail("creating and closing a QP on the CQ waited for the await step holding its monitor");
                    }
                    AtomicInteger got = new AtomicInteger(-1);
                    WorkCompletion[] out = wcs(1);
                    poller[0] = Thread.ofPlatform().daemon().name("poller").start(() -> {
                        got.set(cq.poll(out, 1));
                    });
                    long deadline = System.nanoTime() + TIMEOUT_MS * 1_000_000L;
                    while (poller[0].getState() != Thread.State.BLOCKED) { // counted in the hand-off, blocked on the monitor
                        assertTrue(System.nanoTime() - deadline < 0, "the poller never blocked on the CQ: " + poller[0].getState());
                        Thread.onSpinWait();
                    }
                    endFirstStep.release(); // the step's downcall runs now (nothing arrives: its full slice)
                    poller[0].join(TIMEOUT_MS);
                    assertEquals(0, got.get(), "the poll of an empty CQ");
                    while (polledAtStep.size() < 2) {
                        assertTrue(System.nanoTime() - deadline < 0, "the awaiter never took its second step");
                        Thread.sleep(1);
                    }
                    assertEquals(List.of(false, true), List.copyOf(polledAtStep).subList(0, 2), // a copy: the awaiter goes on adding
                            "whether the poll had been in at the start of each await step (it must go before the second)");
                    assertNull(returned.peek(), "the await (60 s, nothing arrives) returned early");
                } finally {
                    endFirstStep.release();
                    if (qpMadeAndClosed != null) {
                        qpMadeAndClosed.handle((v, t) -> null).get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
                    }
                    cq.close(); // ends the await at once
                    assertEquals(0, returned.poll(TIMEOUT_MS, TimeUnit.MILLISECONDS));
                    awaiter.join(TIMEOUT_MS);
                }
            } finally {
                id.close();
                if (device != null) {
                    device.close();
                }
            }
        }
    }

    /** Whether {@code t} is inside {@code type}'s {@code method} now. */
    private static boolean inFrame(Thread t, Class<?> type, String method) {
        for (StackTraceElement e : t.getStackTrace()) {
            if (e.getClassName().equals(type.getName()) && e.getMethodName().equals(method)) {
                return true;
            }
        }
        return false;
    }

    /** Whether {@code t} is inside the CQ's sleep (blocked on its monitor or in its poll(2)). */
    private static boolean inCqSleep(Thread t) {
        return inFrame(t, FfmCqWait.class, "sleep");
    }

    /**
     * The device's reader asks every established connection's channel for its events; with none
     * waiting, the answer is null and nothing is allocated (no arena, no exception, no captured errno).
     */
    @ParameterizedTest
    @CsvSource({"10.77.0.1, 7483", "10.78.0.1, 7484"})
    void anEmptyCmChannelIsAskedWithoutAllocating(String address, int port) throws RdmaException {
        try (Loopback c = new Loopback(address, port)) {
            com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            long[] rounds = new long[3];
            for (int r = 0; r < 6 + rounds.length; r++) {
                long before = threads.getCurrentThreadAllocatedBytes();
                for (int i = 0; i < 2_000; i++) {
                    assertNull(c.clientChannel.tryNext(), "an event on an idle established connection");
                }
                if (r >= 6) {
                    rounds[r - 6] = threads.getCurrentThreadAllocatedBytes() - before;
                }
            }
            assertEquals(0, Arrays.stream(rounds).min().getAsLong(),
                    "bytes allocated by 2,000 empty reads of an rdma_cm channel, per round: " + Arrays.toString(rounds));
        }
    }

    /**
     * A protection domain closed while a QP made in it still receives from its shared receive
     * queue destroys the QP first: ibv_destroy_srq refuses (EBUSY) while a QP is attached, and
     * the SRQ would leak.
     */
    @ParameterizedTest
    @CsvSource({"10.77.0.1, 7485", "10.78.0.1, 7486"})
    void closingADomainClosesItsQueuePairsBeforeItsSharedReceiveQueues(String address, int port) throws RdmaException {
        try (FfmCmChannel ch = FfmCmChannel.create()) {
            FfmCmId id = FfmCmId.create(ch);
            FfmContext device = null;
            try {
                id.resolve(new InetSocketAddress(InetAddress.ofLiteral(address), port), 5_000);
                device = FfmContext.adopt(id.verbs());
                FfmPd pd = device.allocatePd();
                FfmCq cq = device.createCq(16);
                FfmSrq srq = (FfmSrq) pd.createSharedReceiveQueue(16, 1);
                FfmQp qp = FfmQp.create(id, pd, cq, cq, srq, 16, 16, 1, 1, 0);
                pd.close();
                assertTrue(qp.isClosed(), "the QP outlived its protection domain and kept the SRQ busy");
            } finally {
                id.close();
                if (device != null) {
                    device.close();
                }
            }
        }
    }

    /** Awaits one completion. */
    private static WorkCompletion awaited(FfmCq cq, WorkCompletion[] out) {
        try {
            if (cq.await(out, 1, TIMEOUT_MS, java.util.concurrent.TimeUnit.MILLISECONDS) != 1) {
                fail("no completion within " + TIMEOUT_MS + " ms on " + cq);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail("interrupted");
        }
        return out[0];
    }

    /** Warms {@code op} by count, then measures rounds: a per-operation allocation shows in every one. */
    private static void assertAllocationFree(Loopback c, String what, RoundTrip op) throws WorkRequestException {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        WorkCompletion[] cw = wcs(4);
        WorkCompletion[] sw = wcs(4);
        for (int i = 0; i < 6; i++) {
            repeat(c, op, cw, sw, 2_000);
        }
        long[] rounds = new long[3];
        for (int r = 0; r < rounds.length; r++) {
            long before = threads.getCurrentThreadAllocatedBytes();
            repeat(c, op, cw, sw, 2_000);
            rounds[r] = threads.getCurrentThreadAllocatedBytes() - before;
        }
        assertEquals(0, Arrays.stream(rounds).min().getAsLong(),
                "bytes allocated by 2,000 round trips of " + what + ", per round: " + Arrays.toString(rounds));
    }

    private static void repeat(Loopback c, RoundTrip op, WorkCompletion[] cw, WorkCompletion[] sw, int n)
            throws WorkRequestException {
        for (int i = 0; i < n; i++) {
            op.run(c, cw, sw);
        }
    }

    private static void succeeded(WorkCompletion wc) {
        if (wc.status != WcStatus.SUCCESS) {
            fail(wc.toString());
        }
    }
}
