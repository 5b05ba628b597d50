package org.jwarp.verbs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The API contract every {@link RdmaProvider} keeps, run unchanged against each one: Send into a
 * posted receive (RFC 5040 §5.3), RDMA Write (§5.1) and Read (§5.2), rejection with private data
 * (RFC 5044 §7.1.1), IRD/ORD as negotiated with a Read beyond the ORD refused locally and the
 * peer's IRD, ORD and private data visible on both sides (RFC 6581 §9.1), and connection-manager
 * error paths that end in exceptions, never in a hang.
 *
 * <p>A subclass names the provider and the local address its devices serve; both ends of every
 * connection live in this JVM on that address. A provider or device that is missing fails the
 * suite in {@link #openProvider()}; nothing is skipped.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 180, unit = TimeUnit.SECONDS)
public abstract class ProviderContractTest {
    /** Bytes each Read of the IRD/ORD test moves. */
    static final int READ_SPAN = 256 << 10;
    static final int REGION = 1 << 20;
    static final Duration SETUP = Duration.ofSeconds(30);
    private static final AtomicInteger PORT = new AtomicInteger(21000 + (int) (ProcessHandle.current().pid() % 500) * 20);

    protected RdmaProvider provider;

    /** The provider name given to {@link Rdma#open(String)}. */
    protected abstract String providerName();

    /** The local address both ends bind to (a device must serve it). */
    protected abstract InetAddress bindAddress() throws Exception;

    /**
     * An address where connection setup gets no answer at all, so only the caller's timeout can
     * end it.
     */
    protected abstract InetSocketAddress silentAddress() throws Exception;

    protected int nextPort() {
        return PORT.incrementAndGet();
    }

    @BeforeAll
    void openProvider() throws Exception {
        provider = Rdma.open(providerName());
        try (Device d = provider.open(bindAddress())) {
            System.out.println(getClass().getSimpleName() + ": " + providerName() + " on " + bindAddress() + " -> "
                    + d.info());
        }
    }

    @AfterAll
    void closeProvider() {
        if (provider != null) {
            provider.close();
        }
    }

    /** One end: a device with a PD, a CQ and one registered region. */
    protected final class Side implements AutoCloseable {
        final Device dev;
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final ByteBuffer buf;
        final MemoryRegion mr;
        final WorkCompletion[] wcs = new WorkCompletion[8];

        Side() throws Exception {
            dev = provider.open(bindAddress());
            pd = dev.allocateProtectionDomain();
            cq = dev.createCompletionQueue(64);
            buf = ByteBuffer.allocateDirect(REGION);
            mr = pd.register(buf, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ));
            for (int i = 0; i < wcs.length; i++) {
                wcs[i] = new WorkCompletion();
            }
        }

        QueuePairConfig qp() {
            return QueuePairConfig.of(pd, cq, 16);
        }

        /** The next completion; fails when none arrives within a minute. */
        WorkCompletion next() throws Exception {
            int n = cq.await(wcs, 1, 60, TimeUnit.SECONDS);
            assertEquals(1, n, "no completion within 60 s");
            return wcs[0];
        }

        @Override
        public void close() {
            mr.close();
            cq.close();
            pd.close();
            dev.close();
        }
    }

    /** Both ends of one connection and what the responder saw in the request. */
    protected record Pair(Side client, Side server, Connection cc, Connection sc, int reqPeerIrd, int reqPeerOrd,
                          byte[] reqPrivateData) implements AutoCloseable {
        @Override
        public void close() {
            cc.close();
            sc.close();
            client.close();
            server.close();
        }
    }

    static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    /** The address and STag of a region, as a ULP would put them into private data. */
    static byte[] keyOf(MemoryRegion mr) {
        return ByteBuffer.allocate(12).putLong(mr.address()).putInt(mr.rkey()).array();
    }

    /** Connects a fresh client to a fresh server accepting with {@code sp}. */
    protected Pair connect(ConnectionParameters cp, ConnectionParameters sp) throws Exception {
        Side server = new Side();
        Side client = new Side();
        InetSocketAddress at = new InetSocketAddress(bindAddress(), nextPort());
        try (Listener l = server.dev.connectionManager().listen(at, 4)) {
            CompletableFuture<Object[]> acc = CompletableFuture.supplyAsync(() -> {
                try {
                    ConnectionRequest r = l.next(SETUP);
                    Object[] seen = {r.peerIrd(), r.peerOrd(), r.privateData()};
                    ConnectionParameters withKey = sp.privateDataLength() > 0 ? sp
                            : sp.toBuilder().privateData(keyOf(server.mr)).build();
                    return new Object[] {r.accept(server.qp(), withKey), seen};
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            Connection cc = client.dev.connectionManager().connect(l.localAddress(), client.qp(), cp, SETUP);
            Object[] res = acc.get(60, TimeUnit.SECONDS);
            Object[] seen = (Object[]) res[1];
            Connection sc = (Connection) res[0];
            System.out.println(providerName() + " client " + cc.info() + "\n" + providerName() + " server " + sc.info());
            return new Pair(client, server, cc, sc, (Integer) seen[0], (Integer) seen[1], (byte[]) seen[2]);
        } catch (Exception e) {
            client.close();
            server.close();
            throw e;
        }
    }

    protected Pair connect() throws Exception {
        return connect(ConnectionParameters.builder().build(), ConnectionParameters.builder().build());
    }

    static long remoteAddress(Connection c) {
        return ByteBuffer.wrap(c.info().peerPrivateData()).getLong(0);
    }

    static int remoteKey(Connection c) {
        return ByteBuffer.wrap(c.info().peerPrivateData()).getInt(8);
    }

    @Test
    @DisplayName("Send lands in the posted receive (RFC 5040 §5.3)")
    void sendLandsInPostedReceive_5040_5_3() throws Exception {
        try (Pair p = connect()) {
            p.server.buf.put(1024, new byte[64]);
            p.sc.queuePair().postRecv(7, p.server.mr, 1024, 64);
            p.client.buf.put(0, ascii("ping-pong"));
            p.cc.queuePair().postSend(new SendRequest().send(1, p.client.mr, 0, 9));
            WorkCompletion s = p.client.next();
            assertEquals(WcStatus.SUCCESS, s.status, s.toString());
            assertEquals(WcOpcode.SEND, s.opcode);
            assertEquals(1, s.wrId);
            WorkCompletion r = p.server.next();
            assertEquals(WcStatus.SUCCESS, r.status, r.toString());
            assertEquals(WcOpcode.RECV, r.opcode);
            assertEquals(7, r.wrId);
            assertEquals(9, r.byteLength);
            byte[] got = new byte[9];
            p.server.buf.get(1024, got);
            assertArrayEquals(ascii("ping-pong"), got);

            // and the other way round: the responder may send once established
            p.cc.queuePair().postRecv(8, p.client.mr, 2048, 64);
            p.server.buf.put(0, ascii("pong"));
            p.sc.queuePair().postSend(new SendRequest().send(2, p.server.mr, 0, 4));
            assertEquals(WcStatus.SUCCESS, p.server.next().status);
            WorkCompletion back = p.client.next();
            assertEquals(WcOpcode.RECV, back.opcode);
            assertEquals(4, back.byteLength);
        }
    }

    @Test
    @DisplayName("RDMA Write places data at the peer's tagged offset (RFC 5040 §5.1)")
    void rdmaWritePlacesDataInPeerRegion_5040_5_1() throws Exception {
        try (Pair p = connect()) {
            for (int i = 0; i < 4096; i++) {
                p.client.buf.put(4096 + i, (byte) (i * 7));
            }
            long raddr = remoteAddress(p.cc);
            assertEquals(p.server.mr.address(), raddr);
            p.cc.queuePair().postSend(new SendRequest().write(2, p.client.mr, 4096, 4096, raddr + 8192, remoteKey(p.cc)));
            WorkCompletion w = p.client.next();
            assertEquals(WcStatus.SUCCESS, w.status, w.toString());
            assertEquals(WcOpcode.RDMA_WRITE, w.opcode);
            // a Send after the Write: its arrival proves the Write was placed (RFC 5040 §5.1 ordering)
            p.sc.queuePair().postRecv(9, p.server.mr, 0, 16);
            p.cc.queuePair().postSend(new SendRequest().send(3, p.client.mr, 0, 1));
            assertEquals(WcStatus.SUCCESS, p.client.next().status);
            assertEquals(WcOpcode.RECV, p.server.next().opcode);
            for (int i = 0; i < 4096; i++) {
                assertEquals((byte) (i * 7), p.server.buf.get(8192 + i), "written byte " + i);
            }
        }
    }

    @Test
    @DisplayName("RDMA Read returns the peer's region (RFC 5040 §5.2)")
    void rdmaReadReturnsPeerRegion_5040_5_2() throws Exception {
        try (Pair p = connect()) {
            byte[] src = new byte[65536];
            for (int i = 0; i < src.length; i++) {
                src[i] = (byte) (i ^ (i >> 8));
            }
            p.server.buf.put(65536, src);
            p.cc.queuePair().postSend(new SendRequest().read(4, p.client.mr, 0, src.length,
                    remoteAddress(p.cc) + 65536, remoteKey(p.cc)));
            WorkCompletion r = p.client.next();
            assertEquals(WcStatus.SUCCESS, r.status, r.toString());
            assertEquals(WcOpcode.RDMA_READ, r.opcode);
            assertEquals(4, r.wrId);
            byte[] got = new byte[src.length];
            p.client.buf.get(0, got);
            assertArrayEquals(src, got);
        }
    }

    @Test
    @DisplayName("Zero-length Send, Write and Read complete; the Send consumes a receive (RFC 5041 §5.2, RFC 5040 §5)")
    void zeroLengthSendWriteReadComplete_5041_5_2() throws Exception {
        try (Pair p = connect()) {
            p.sc.queuePair().postRecv(51, p.server.mr, 0, 64);
            QueuePair qp = p.cc.queuePair();
            long raddr = remoteAddress(p.cc);
            int rkey = remoteKey(p.cc);
            qp.postSend(new SendRequest().send(52, null, 0, 0));
            qp.postSend(new SendRequest().write(53, null, 0, 0, raddr, rkey));
            qp.postSend(new SendRequest().read(54, null, 0, 0, raddr, rkey));
            WcOpcode[] ops = {WcOpcode.SEND, WcOpcode.RDMA_WRITE, WcOpcode.RDMA_READ};
            for (int k = 0; k < 3; k++) {
                WorkCompletion w = p.client.next();
                assertEquals(WcStatus.SUCCESS, w.status, w.toString());
                assertEquals(52 + k, w.wrId, "in posting order");
                assertEquals(ops[k], w.opcode);
            }
            WorkCompletion r = p.server.next();
            assertEquals(WcStatus.SUCCESS, r.status, r.toString());
            assertEquals(51, r.wrId);
            assertEquals(0, r.byteLength);
        }
    }

    @Test
    @DisplayName("A rejection carries the responder's private data (RFC 5044 §7.1.1)")
    void rejectionCarriesPrivateData_5044_7_1_1() throws Exception {
        try (Side server = new Side(); Side client = new Side()) {
            InetSocketAddress at = new InetSocketAddress(bindAddress(), nextPort());
            try (Listener l = server.dev.connectionManager().listen(at, 4)) {
                byte[] why = ascii("go-away:busy");
                CompletableFuture<byte[]> rej = CompletableFuture.supplyAsync(() -> {
                    try {
                        ConnectionRequest r = l.next(SETUP);
                        byte[] pd = r.privateData();
                        r.reject(why);
                        return pd;
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                ConnectionRejectedException e = assertThrows(ConnectionRejectedException.class,
                        () -> client.dev.connectionManager().connect(l.localAddress(), client.qp(),
                                ConnectionParameters.builder().privateData(ascii("may-i")).build(), SETUP));
                System.out.println(providerName() + " rejected: " + e.getMessage());
                assertArrayEquals(why, e.privateData());
                assertArrayEquals(ascii("may-i"), rej.get(60, TimeUnit.SECONDS));
            }
        }
    }

    @Test
    @DisplayName("IRD/ORD as negotiated; ORD Reads may be outstanding at once (RFC 6581 §9.1)")
    void irdOrdAsNegotiatedAndOrdReadsOutstanding_6581_9_1() throws Exception {
        ConnectionParameters cp = ConnectionParameters.builder().ird(4).ord(2).build();
        ConnectionParameters sp = ConnectionParameters.builder().ird(8).ord(6).build();
        try (Pair p = connect(cp, sp)) {
            assertEquals(2, p.cc.info().ord(), "initiator ORD within the responder's IRD");
            assertTrue(p.cc.info().ord() <= p.cc.info().peerIrd(), p.cc.info().toString());
            assertEquals(4, p.sc.info().ord(), "responder ORD lowered to the initiator's IRD 4");
            assertTrue(p.sc.info().ord() <= p.cc.info().ird(), "responder ORD never exceeds initiator IRD");
            assertTrue(p.sc.info().ird() >= p.cc.info().ord(), "responder IRD covers the initiator's ORD");

            long raddr = remoteAddress(p.cc);
            int rkey = remoteKey(p.cc);
            p.server.buf.put(0, ascii("first"));
            p.server.buf.put(READ_SPAN, ascii("second"));
            QueuePair qp = p.cc.queuePair();
            // both are accepted whatever the timing: at most one other Read is outstanding
            qp.postSend(new SendRequest().read(10, p.client.mr, 0, READ_SPAN, raddr, rkey));
            qp.postSend(new SendRequest().read(11, p.client.mr, READ_SPAN, READ_SPAN, raddr + READ_SPAN, rkey));
            for (int k = 0; k < 2; k++) {
                WorkCompletion rd = p.client.next();
                assertEquals(WcStatus.SUCCESS, rd.status, rd.toString());
                assertEquals(WcOpcode.RDMA_READ, rd.opcode);
                assertEquals(10 + k, rd.wrId, "Reads complete in order");
            }
            byte[] b = new byte[6];
            p.client.buf.get(READ_SPAN, b);
            assertArrayEquals(ascii("second"), b);
        }
    }

    @Test
    @DisplayName("A Read beyond the negotiated ORD is refused locally, nothing is sent (RFC 6581 §9.1)")
    void readBeyondOrdRefusedLocally_6581_9_1() throws Exception {
        // ORD 0 makes every Read one beyond the ORD, independent of how fast Reads complete
        ConnectionParameters cp = ConnectionParameters.builder().ird(4).ord(0).peerToPeer(false).build();
        ConnectionParameters sp = ConnectionParameters.builder().ird(8).ord(4).build();
        try (Pair p = connect(cp, sp)) {
            assertEquals(0, p.cc.info().ord(), "ORD 0 as asked");
            assertTrue(p.sc.info().ird() >= 0 && p.sc.info().ord() <= 4, p.sc.info().toString());
            QueuePair qp = p.cc.queuePair();
            WorkRequestException beyond = assertThrows(WorkRequestException.class, () -> qp.postSend(
                    new SendRequest().read(20, p.client.mr, 0, 8, remoteAddress(p.cc), remoteKey(p.cc))));
            assertTrue(beyond.getMessage().contains("ORD"), beyond.getMessage());
            // the QP still works, and the refused Read left no completion: the next one is the Send's
            p.sc.queuePair().postRecv(22, p.server.mr, 0, 64);
            p.cc.queuePair().postSend(new SendRequest().send(21, p.client.mr, 0, 1));
            WorkCompletion s = p.client.next();
            assertEquals(21, s.wrId, s.toString());
            assertEquals(WcStatus.SUCCESS, s.status);
            assertEquals(22, p.server.next().wrId);
        }
    }

    @Test
    @DisplayName("The peer's IRD, ORD and private data are visible on both sides (RFC 6581 §9.1)")
    void peerIrdOrdAndPrivateDataVisibleOnBothSides_6581_9_1() throws Exception {
        byte[] hello = ascii("jwarp-hello");
        byte[] welcome = ascii("welcome\0\0"); // trailing zeros must survive any padding of the transport
        ConnectionParameters cp = ConnectionParameters.builder().ird(4).ord(2).privateData(hello).build();
        ConnectionParameters sp = ConnectionParameters.builder().ird(8).ord(3).privateData(welcome).build();
        try (Pair p = connect(cp, sp)) {
            assertEquals(4, p.reqPeerIrd, "the request shows the initiator's IRD");
            assertEquals(2, p.reqPeerOrd, "the request shows the initiator's ORD");
            assertArrayEquals(hello, p.reqPrivateData);
            assertEquals(4, p.sc.info().peerIrd());
            assertEquals(2, p.sc.info().peerOrd());
            assertArrayEquals(hello, p.sc.info().peerPrivateData());
            assertEquals(2, p.cc.info().peerIrd(), "the responder's IRD: the initiator's ORD 2 granted");
            assertEquals(3, p.cc.info().peerOrd(), "the responder's ORD 3");
            assertArrayEquals(welcome, p.cc.info().peerPrivateData());
        }
    }

    @Test
    @DisplayName("Closing flushes the posted receives on both ends (RFC 5040 §8.2), close never hangs")
    void closeFlushesPostedReceivesOnBothEnds_5040_8_2() throws Exception {
        try (Pair p = connect()) {
            p.sc.queuePair().postRecv(31, p.server.mr, 0, 64);
            p.sc.queuePair().postRecv(32, p.server.mr, 64, 64);
            p.cc.queuePair().postRecv(41, p.client.mr, 0, 64);
            p.cc.close(); // the initiator closes: its own receive flushes, and the responder's stream ends
            WorkCompletion own = p.client.next();
            System.out.println(providerName() + " closer's receive -> " + own);
            assertEquals(41, own.wrId);
            assertEquals(WcStatus.WR_FLUSH_ERR, own.status, own.toString());
            for (long id = 31; id <= 32; id++) {
                WorkCompletion w = p.server.next();
                System.out.println(providerName() + " peer's receive -> " + w);
                assertEquals(id, w.wrId, "flushed in order");
                assertEquals(WcStatus.WR_FLUSH_ERR, w.status, w.toString());
            }
            assertFalse(p.cc.isOpen());
        }
    }

    @Test
    @DisplayName("Connecting where nobody listens fails with an exception, long before the timeout")
    @Timeout(value = 45, unit = TimeUnit.SECONDS)
    void connectWithoutListenerFailsFast() throws Exception {
        try (Side client = new Side()) {
            InetSocketAddress nobody = new InetSocketAddress(bindAddress(), nextPort());
            long t0 = System.nanoTime();
            RdmaException e = assertThrows(RdmaException.class, () -> client.dev.connectionManager()
                    .connect(nobody, client.qp(), ConnectionParameters.builder().build(), Duration.ofSeconds(120)));
            System.out.println(providerName() + " no listener -> " + e + " after "
                    + (System.nanoTime() - t0) / 1_000_000 + " ms");
            assertFalse(e instanceof ConnectionRejectedException, "no listener is not a ULP rejection: " + e);
            assertFalse(e instanceof RdmaTimeoutException, "refused, not timed out: " + e);
        }
    }

    @Test
    @DisplayName("Connecting to a silent address ends with a timeout exception, nothing hangs")
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void connectToSilentAddressTimesOut() throws Exception {
        try (Side client = new Side()) {
            InetSocketAddress silent = silentAddress();
            long t0 = System.nanoTime();
            RdmaException e = assertThrows(RdmaException.class, () -> client.dev.connectionManager()
                    .connect(silent, client.qp(), ConnectionParameters.builder().build(), Duration.ofSeconds(4)));
            System.out.println(providerName() + " silent " + silent + " -> " + e + " after "
                    + (System.nanoTime() - t0) / 1_000_000 + " ms");
            assertTrue(e instanceof RdmaTimeoutException, "expected a timeout: " + e);
            // the device is still usable afterwards
            assertThrows(RdmaTimeoutException.class, () -> {
                try (Listener l = client.dev.connectionManager().listen(
                        new InetSocketAddress(bindAddress(), nextPort()), 1)) {
                    l.next(Duration.ofMillis(200));
                }
            });
        }
    }

    @Test
    @DisplayName("A listener without requests times out with an exception")
    void listenerWithoutRequestsTimesOut() throws Exception {
        try (Side server = new Side();
             Listener l = server.dev.connectionManager().listen(new InetSocketAddress(bindAddress(), nextPort()), 1)) {
            assertThrows(RdmaTimeoutException.class, () -> l.next(Duration.ofMillis(300)));
        }
    }
}
