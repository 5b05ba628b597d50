package org.jwarp.disni;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.CompletionQueue;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.ConnectionRejectedException;
import org.jwarp.verbs.ConnectionRequest;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.DeviceInfo;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.ProtectionDomain;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.Rdma;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaProvider;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.jwarp.verbs.WorkRequestException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The DiSNI provider on real devices: siw0 (iWARP, RFC 5040/5041/5044 with RFC 6581 setup in the
 * kernel) and rxe0 (RoCE). Run inside the guest (devices on 10.77.0.1 and 10.78.0.1, override with
 * {@code -Djwarp.it.devices=addr,addr}); fails when a device is missing rather than skipping.
 */
@Tag("device")
class DisniDeviceTest {
    static final AtomicInteger PORT = new AtomicInteger(20000 + (int) (ProcessHandle.current().pid() % 1000) * 10);
    static RdmaProvider provider;

    static Stream<String> addresses() {
        return Stream.of(System.getProperty("jwarp.it.devices", "10.77.0.1,10.78.0.1").split(","));
    }

    @BeforeAll
    static void open() throws Exception {
        provider = Rdma.open("disni");
    }

    @AfterAll
    static void close() {
        if (provider != null) {
            provider.close();
        }
    }

    /** One device with a PD, a CQ and a registered 64 KiB region. */
    static final class Side implements AutoCloseable {
        final Device dev;
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final MemoryRegion mr;
        final ByteBuffer buf;
        final WorkCompletion[] wcs = new WorkCompletion[16];

        Side(String addr) throws Exception {
            dev = provider.open(InetAddress.getByName(addr));
            pd = dev.allocateProtectionDomain();
            cq = dev.createCompletionQueue(64);
            buf = ByteBuffer.allocateDirect(65536).order(ByteOrder.nativeOrder());
            mr = pd.register(buf, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ));
            for (int i = 0; i < wcs.length; i++) {
                wcs[i] = new WorkCompletion();
            }
        }

        QueuePairConfig qp() {
            return QueuePairConfig.of(pd, cq, 16);
        }

        WorkCompletion next() throws Exception {
            int n = cq.await(wcs, 1, 20, TimeUnit.SECONDS);
            assertEquals(1, n, "no completion within 20 s");
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

    static byte[] keyOf(MemoryRegion mr) {
        return ByteBuffer.allocate(12).putLong(mr.address()).putInt(mr.rkey()).array();
    }

    @ParameterizedTest
    @MethodSource("addresses")
    void deviceIsPresentWithReadLimits(String addr) throws Exception {
        List<String> names = new ArrayList<>();
        for (DeviceInfo d : provider.devices()) {
            names.add(d.name());
        }
        try (Side s = new Side(addr)) {
            DeviceInfo i = s.dev.info();
            System.out.println("device for " + addr + ": " + i + " (all: " + names + ")");
            assertTrue(names.contains(i.name()), names.toString());
            assertTrue(i.maxQpRdAtom() > 0 && i.maxQpInitRdAtom() > 0, i.toString());
            if (addr.startsWith("10.77.")) {
                assertEquals(DeviceInfo.Transport.IWARP, i.transport());
            } else if (addr.startsWith("10.78.")) {
                assertEquals(DeviceInfo.Transport.ROCE, i.transport());
            }
        }
    }

    @ParameterizedTest
    @MethodSource("addresses")
    void sendRecvWriteReadAndNegotiatedIrdOrd_6581_9_1(String addr) throws Exception {
        try (Side server = new Side(addr); Side client = new Side(addr)) {
            InetSocketAddress at = new InetSocketAddress(addr, PORT.incrementAndGet());
            try (Listener l = server.dev.connectionManager().listen(at, 4)) {
                CompletableFuture<Object[]> acc = CompletableFuture.supplyAsync(() -> {
                    try {
                        ConnectionRequest r = l.next(Duration.ofSeconds(30));
                        int[] peer = {r.peerIrd(), r.peerOrd()};
                        byte[] reqPd = r.privateData();
                        server.mr.buffer().put(0, new byte[0]);
                        Connection c = r.accept(server.qp(), ConnectionParameters.builder().ird(8).ord(3)
                                .privateData(keyOf(server.mr)).build());
                        return new Object[] {c, peer, reqPd};
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                });
                byte[] hello = "jwarp-hello".getBytes(StandardCharsets.US_ASCII);
                Connection cc = client.dev.connectionManager().connect(at, client.qp(),
                        ConnectionParameters.builder().ird(4).ord(2).privateData(hello).build(), Duration.ofSeconds(30));
                Object[] res = acc.get(40, TimeUnit.SECONDS);
                Connection sc = (Connection) res[0];
                int[] peer = (int[]) res[1];
                System.out.println(addr + " client " + cc.info() + "\n" + addr + " server " + sc.info()
                        + " request peer IRD/ORD " + peer[0] + "/" + peer[1]);
                assertArrayEquals(hello, (byte[]) res[2], "request private data");
                assertEquals(4, peer[0], "initiator IRD as the responder sees it");
                assertEquals(2, peer[1], "initiator ORD as the responder sees it");
                assertEquals(2, cc.info().ord(), "initiator ORD within responder IRD");
                assertTrue(cc.info().ord() <= cc.info().peerIrd() || cc.info().peerIrd() < 0);
                assertEquals(3, sc.info().ord(), "responder ORD never exceeds initiator IRD (4)");
                ByteBuffer key = ByteBuffer.wrap(cc.info().peerPrivateData());
                long raddr = key.getLong();
                int rkey = key.getInt();
                assertEquals(server.mr.address(), raddr);
                assertEquals(server.mr.rkey(), rkey);

                // Send / Recv
                server.buf.put(1024, new byte[64]);
                sc.queuePair().postRecv(7, server.mr, 1024, 64);
                client.buf.put(0, "ping".getBytes(StandardCharsets.US_ASCII));
                SendRequest wr = new SendRequest();
                cc.queuePair().postSend(wr.send(1, client.mr, 0, 4));
                WorkCompletion sw = client.next();
                assertEquals(WcStatus.SUCCESS, sw.status, sw.toString());
                assertEquals(WcOpcode.SEND, sw.opcode);
                WorkCompletion rw = server.next();
                assertEquals(WcStatus.SUCCESS, rw.status, rw.toString());
                assertEquals(WcOpcode.RECV, rw.opcode);
                assertEquals(7, rw.wrId);
                assertEquals(4, rw.byteLength);
                byte[] got = new byte[4];
                server.buf.get(1024, got);
                assertEquals("ping", new String(got, StandardCharsets.US_ASCII));

                // RDMA Write into the server's region
                for (int i = 0; i < 256; i++) {
                    client.buf.put(4096 + i, (byte) i);
                }
                cc.queuePair().postSend(wr.write(2, client.mr, 4096, 256, raddr + 8192, rkey));
                WorkCompletion ww = client.next();
                assertEquals(WcStatus.SUCCESS, ww.status, ww.toString());
                assertEquals(WcOpcode.RDMA_WRITE, ww.opcode);
                for (int i = 0; i < 256; i++) {
                    assertEquals((byte) i, server.buf.get(8192 + i), "written byte " + i);
                }

                // RDMA Read back; ORD = 2 Reads may be outstanding, the third is refused locally
                server.buf.put(12288, "read-me!".getBytes(StandardCharsets.US_ASCII));
                cc.queuePair().postSend(wr.read(3, client.mr, 16384, 8, raddr + 12288, rkey));
                cc.queuePair().postSend(wr.read(4, client.mr, 16392, 8, raddr + 12288, rkey));
                WorkRequestException beyond = assertThrows(WorkRequestException.class,
                        () -> cc.queuePair().postSend(new SendRequest().read(5, client.mr, 16400, 8, raddr, rkey)));
                assertTrue(beyond.getMessage().contains("ORD"), beyond.getMessage());
                for (int k = 0; k < 2; k++) {
                    WorkCompletion rd = client.next();
                    assertEquals(WcStatus.SUCCESS, rd.status, rd.toString());
                    assertEquals(WcOpcode.RDMA_READ, rd.opcode);
                }
                byte[] back = new byte[8];
                client.buf.get(16384, back);
                assertEquals("read-me!", new String(back, StandardCharsets.US_ASCII));
                client.buf.get(16392, back);
                assertEquals("read-me!", new String(back, StandardCharsets.US_ASCII));
                // with the Reads retired, a Read is accepted again
                cc.queuePair().postSend(wr.read(6, client.mr, 16400, 8, raddr + 12288, rkey));
                assertEquals(WcStatus.SUCCESS, client.next().status);

                cc.close();
                sc.close();
                assertFalse(cc.isOpen());
            }
        }
    }

    @ParameterizedTest
    @MethodSource("addresses")
    void rejectionCarriesPrivateData(String addr) throws Exception {
        try (Side server = new Side(addr); Side client = new Side(addr)) {
            InetSocketAddress at = new InetSocketAddress(addr, PORT.incrementAndGet());
            try (Listener l = server.dev.connectionManager().listen(at, 4)) {
                byte[] why = "go-away:busy".getBytes(StandardCharsets.US_ASCII);
                CompletableFuture<Void> rej = CompletableFuture.runAsync(() -> {
                    try {
                        l.next(Duration.ofSeconds(30)).reject(why);
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                });
                ConnectionRejectedException e = assertThrows(ConnectionRejectedException.class,
                        () -> client.dev.connectionManager().connect(at, client.qp(),
                                ConnectionParameters.builder().build(), Duration.ofSeconds(30)));
                System.out.println(addr + " rejected: " + e.getMessage() + " pd="
                        + new String(e.privateData(), StandardCharsets.US_ASCII));
                assertArrayEquals(why, e.privateData());
                rej.get(30, TimeUnit.SECONDS);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("addresses")
    void cmErrorsBecomeExceptions(String addr) throws Exception {
        try (Side client = new Side(addr)) {
            InetSocketAddress nobody = new InetSocketAddress(addr, PORT.incrementAndGet());
            long t0 = System.nanoTime();
            RdmaException e = assertThrows(RdmaException.class, () -> client.dev.connectionManager()
                    .connect(nobody, client.qp(), ConnectionParameters.builder().build(), Duration.ofSeconds(20)));
            System.out.println(addr + " no listener -> " + e + " after " + (System.nanoTime() - t0) / 1_000_000 + " ms");
            assertFalse(e instanceof ConnectionRejectedException, "no listener is not a ULP rejection: " + e);
            String prefix = addr.substring(0, addr.lastIndexOf('.') + 1);
            InetSocketAddress unreachable = new InetSocketAddress(prefix + "99", 4791);
            t0 = System.nanoTime();
            RdmaException u = assertThrows(RdmaException.class, () -> client.dev.connectionManager()
                    .connect(unreachable, client.qp(), ConnectionParameters.builder().build(), Duration.ofSeconds(8)));
            System.out.println(addr + " unreachable -> " + u + " after " + (System.nanoTime() - t0) / 1_000_000 + " ms");
        }
    }

    @ParameterizedTest
    @MethodSource("addresses")
    void bundledLibraryCameFromTheJarCache(String addr) throws ExecutionException {
        assertTrue(DisniRuntime.get().libraryPath().isPresent(), "libdisni must come from the bundled copy");
        assertTrue(addr.length() > 0);
    }
}
