package org.jwarp.bench;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.CompletionQueue;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.ConnectionRequest;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.ProtectionDomain;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.Rdma;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaProvider;

/**
 * Both ends of {@code n} RDMA connections (RFC 5040 §5 RDMAP streams) over any provider, inside
 * one JVM, the way perftest runs its server and client on one device: a client side and a server
 * side, each with its own protection domain, one completion queue shared by its queue pairs, a
 * transmit/read-source region ({@code tx}, REMOTE_READ) and a receive/write-sink region
 * ({@code rx}, REMOTE_WRITE). The regions are 8-byte aligned so the last long can be polled
 * (ib_write_lat style). Everything is opened through {@link Rdma#open(String)} only, so the same
 * fixture measures the soft and the DiSNI provider.
 */
final class ProviderFixture implements AutoCloseable {
    static final Duration TIMEOUT = Duration.ofSeconds(Long.getLong("jwarp.bench.timeoutSeconds", 30));

    final RdmaProvider provider;
    final Device device;
    final Listener listener;
    final Side client;
    final Side server;
    final int size;

    /** One side: its PD, CQ, regions and connections. */
    static final class Side {
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final MemoryRegion tx;
        final MemoryRegion rx;
        final Connection[] conns;

        Side(Device device, int n, int size, int depth) throws RdmaException {
            pd = device.allocateProtectionDomain();
            cq = device.createCompletionQueue(Math.max(16, n * depth * 2));
            tx = pd.register(aligned(size), EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ));
            rx = pd.register(aligned(size), EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
            conns = new Connection[n];
        }

        QueuePairConfig qp(int depth) {
            return QueuePairConfig.of(pd, cq, depth);
        }

        void close() {
            for (Connection c : conns) {
                if (c != null) {
                    c.close();
                }
            }
            tx.close();
            rx.close();
            cq.close();
            pd.close();
        }
    }

    /**
     * Opens {@code providerName}, binds a listener to {@code address} (port 0) and connects
     * {@code n} queue pairs of send/recv depth {@code depth}; regions are {@code size} bytes.
     */
    ProviderFixture(String providerName, String address, int n, int size, int depth) throws Exception {
        this.size = size;
        provider = Rdma.open(providerName);
        Side c = null;
        Side s = null;
        Listener l = null;
        try {
            InetAddress addr = InetAddress.getByName(address);
            device = provider.open(addr);
            s = new Side(device, n, size, depth);
            c = new Side(device, n, size, depth);
            l = device.connectionManager().listen(new InetSocketAddress(addr, 0), Math.max(8, Math.min(n, 128)));
            connectAll(device, l, c, s, n, depth);
        } catch (Exception e) {
            if (c != null) {
                c.close();
            }
            if (s != null) {
                s.close();
            }
            if (l != null) {
                l.close();
            }
            provider.close();
            throw e;
        }
        client = c;
        server = s;
        listener = l;
    }

    static ConnectionParameters params() {
        return ConnectionParameters.builder().build();
    }

    private static void connectAll(Device dev, Listener l, Side c, Side s, int n, int depth) throws Exception {
        CompletableFuture<Void> acceptor = CompletableFuture.runAsync(() -> {
            try {
                for (int i = 0; i < n; i++) {
                    ConnectionRequest r = l.next(TIMEOUT);
                    s.conns[i] = r.accept(s.qp(depth), params());
                }
            } catch (Exception e) {
                throw new IllegalStateException("accept failed: " + e, e);
            }
        });
        try {
            for (int i = 0; i < n; i++) {
                c.conns[i] = dev.connectionManager().connect(l.localAddress(), c.qp(depth), params(), TIMEOUT);
            }
        } finally {
            acceptor.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        }
        // Accept order equals connect order (one connect in flight at a time), so conns[i] pair up.
    }

    static ByteBuffer aligned(int size) {
        ByteBuffer b = ByteBuffer.allocateDirect(Math.max(size, 8) + 16).alignedSlice(8);
        return b.slice(0, Math.max(size, 8)).order(ByteOrder.nativeOrder());
    }

    @Override
    public void close() {
        try {
            client.close();
            server.close();
            listener.close();
            device.close();
        } finally {
            provider.close();
        }
    }
}
