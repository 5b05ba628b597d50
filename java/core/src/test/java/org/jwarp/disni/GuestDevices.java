package org.jwarp.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.CompletionQueue;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.ProtectionDomain;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.RdmaProvider;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;

/**
 * The devices of the DiSNI device suites ({@link DisniDeviceTest}, {@link DisniWorkQueueDeviceTest}):
 * siw0 (iWARP, RFC 5040/5041/5044 with the RFC 6581 setup in the kernel) and rxe0 (RoCE) on the
 * guest's 10.77.0.1 and 10.78.0.1 (override with {@code -Djwarp.it.devices=addr,addr}), and one end
 * on either. A device that is missing fails the case that opens it; nothing is skipped.
 */
final class GuestDevices {
    private GuestDevices() {
    }

    static final Duration SETUP = Duration.ofSeconds(30);

    /**
     * Connects {@code client} to {@code server} listening at {@code at}, both QPs of {@code depth}
     * WRs; the server's accept carries its region's address and STag ({@link Side#key()}) as private
     * data. Returns {client connection, server connection}.
     */
    static Connection[] connect(Side server, Side client, InetSocketAddress at, int depth) throws Exception {
        try (Listener l = server.dev.connectionManager().listen(at, 4)) {
            CompletableFuture<Connection> acc = CompletableFuture.supplyAsync(() -> {
                try {
                    return l.next(SETUP).accept(server.qp(depth),
                            ConnectionParameters.builder().privateData(server.key()).build());
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            Connection cc = client.dev.connectionManager().connect(l.localAddress(), client.qp(depth),
                    ConnectionParameters.builder().build(), SETUP);
            return new Connection[] {cc, acc.get(60, TimeUnit.SECONDS)};
        }
    }

    /** The device addresses the suites' cases run on, one case each. */
    static Stream<String> addresses() {
        return Stream.of(System.getProperty("jwarp.it.devices", "10.77.0.1,10.78.0.1").split(","));
    }

    /**
     * One end: the device at an address with a PD, a 64-entry CQ and a registered region (64 KiB
     * unless given), named in what it prints.
     */
    static final class Side implements AutoCloseable {
        final String name;
        final Device dev;
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final ByteBuffer buf;
        final MemoryRegion mr;
        final WorkCompletion[] wcs = {new WorkCompletion()};

        Side(RdmaProvider provider, String addr) throws Exception {
            this(addr, provider, InetAddress.getByName(addr), 1 << 16);
        }

        Side(String name, RdmaProvider provider, InetAddress at, int regionBytes) throws Exception {
            this.name = name;
            dev = provider.open(at);
            pd = dev.allocateProtectionDomain();
            cq = dev.createCompletionQueue(64);
            buf = ByteBuffer.allocateDirect(regionBytes).order(ByteOrder.nativeOrder());
            mr = pd.register(buf, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ));
        }

        /** A QP on this end's PD and CQ with {@code depth} send and receive WRs. */
        QueuePairConfig qp(int depth) {
            return QueuePairConfig.of(pd, cq, depth);
        }

        /** The next completion; fails when none arrives within a minute. */
        WorkCompletion next() throws Exception {
            assertEquals(1, cq.await(wcs, 1, 60, TimeUnit.SECONDS), "no completion within 60 s");
            return wcs[0];
        }

        /** The next completion, printed and required successful; {@code what} names it in failures. */
        WorkCompletion next(String what) throws Exception {
            int n = cq.await(wcs, 1, 60, TimeUnit.SECONDS);
            assertEquals(1, n, name + ": no completion for " + what + " within 60 s");
            System.out.println(name + " " + what + " -> " + wcs[0]);
            assertEquals(WcStatus.SUCCESS, wcs[0].status, name + " " + what + ": " + wcs[0]);
            return wcs[0];
        }

        /** The region's address and STag, as a ULP puts them into private data. */
        byte[] key() {
            return ByteBuffer.allocate(12).putLong(mr.address()).putInt(mr.rkey()).array();
        }

        @Override
        public void close() {
            mr.close();
            cq.close();
            pd.close();
            dev.close();
        }
    }
}
