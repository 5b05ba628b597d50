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
import org.jwarp.verbs.DeviceInfo;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.ProtectionDomain;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.Rdma;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaProvider;

/**
 * Both ends of {@code n} RDMA connections (RFC 5040 §5 RDMAP streams) over any provider, inside
 * one JVM: a client side and a server side, each with its own protection domain, one completion
 * queue shared by its queue pairs, a transmit/read-source region ({@code tx}, REMOTE_READ) and a
 * receive/write-sink region ({@code rx}, REMOTE_WRITE). The regions are 8-byte aligned and a
 * multiple of 8 bytes long so the word holding the last byte can be read with a volatile load
 * (ib_write_lat's polling). With {@code separate} the two sides open the provider twice: two
 * provider instances, two devices, and for the soft provider two reactor threads, as two
 * processes would have. Everything is opened through {@link Rdma#open(String)} only, so the same
 * fixture measures the soft and the DiSNI provider.
 */
final class ProviderFixture implements AutoCloseable {
    static final Duration TIMEOUT = Duration.ofSeconds(Long.getLong("jwarp.bench.timeoutSeconds", 30));

    final RdmaProvider provider;
    final Device device;
    /** The server side's provider and device: the same objects unless opened separately. */
    final RdmaProvider serverProvider;
    final Device serverDevice;
    final boolean crc;
    /**
     * The outbound RDMA Read depth (RFC 6581 §9.1 ORD) the client's first connection settled on:
     * the Reads it has in flight at once, more wait in its send queue.
     */
    final int ord;
    final Listener listener;
    final Side client;
    /** The server side, or null when a {@link BenchPeer} JVM holds it. */
    final Side server;
    /** The server's receive/write-sink and transmit/read-source regions as the client addresses them. */
    final long peerRxAddr;
    final int peerRxKey;
    final long peerTxAddr;
    final int peerTxKey;
    final int size;

    /** One side: its PD, CQ, regions and connections. */
    static final class Side {
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final MemoryRegion tx;
        final MemoryRegion rx;
        final Connection[] conns;
        /**
         * Whether the device is iWARP, where a Send that finds no posted receive ends the stream
         * (RFC 5041 §7.2): perftest's ib_send_bw then keeps its sender within the receiver's
         * receives by credits; on RoCE it relies on RNR retry instead.
         */
        final boolean iwarp;

        Side(Device device, int n, int size, int depth) throws RdmaException {
            iwarp = device.info().transport() == DeviceInfo.Transport.IWARP;
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
        this(providerName, address, n, size, depth, false, true);
    }

    /**
     * As above; {@code separate} opens a second provider instance and device for the server side,
     * {@code crc} is the MPA CRC both sides ask for (RFC 5044 §7.1: off only when both say so).
     */
    ProviderFixture(String providerName, String address, int n, int size, int depth, boolean separate, boolean crc)
            throws Exception {
        this(providerName, address, n, size, depth, separate, crc, 0);
    }

    /**
     * As above; {@code clientOrd} above 0 is the ORD the client asks for (RFC 6581 §9.1), else the
     * default {@link ConnectionParameters#DEFAULT_IRD_ORD}.
     */
    ProviderFixture(String providerName, String address, int n, int size, int depth, boolean separate, boolean crc,
                    int clientOrd) throws Exception {
        this.size = size;
        this.crc = crc;
        provider = Rdma.open(providerName);
        RdmaProvider sp = null;
        Device sd = null;
        Device cd = null;
        Side c = null;
        Side s = null;
        Listener l = null;
        try {
            InetAddress addr = InetAddress.getByName(address);
            cd = provider.open(addr);
            sp = separate ? Rdma.open(providerName) : provider;
            sd = separate ? sp.open(addr) : cd;
            s = new Side(sd, n, size, depth);
            c = new Side(cd, n, size, depth);
            l = sd.connectionManager().listen(new InetSocketAddress(addr, 0), Math.max(8, Math.min(n, 128)));
            connectAll(cd, l, c, s, n, depth, crc, clientOrd);
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
            if (sd != null && sd != cd) {
                sd.close();
            }
            if (cd != null) {
                cd.close();
            }
            if (sp != null && sp != provider) {
                sp.close();
            }
            provider.close();
            throw e;
        }
        device = cd;
        serverProvider = sp;
        serverDevice = sd;
        client = c;
        server = s;
        listener = l;
        peerRxAddr = s.rx.address();
        peerRxKey = s.rx.rkey();
        peerTxAddr = s.tx.address();
        peerTxKey = s.tx.rkey();
        ord = settledOrd(c);
    }

    /** The client half only; the server half runs in a {@link BenchPeer} JVM at {@code peer}. */
    private ProviderFixture(RdmaProvider provider, Device device, Side client, int size, boolean crc,
                            BenchPeer.Reply reply) {
        this.provider = provider;
        this.device = device;
        this.serverProvider = provider;
        this.serverDevice = device;
        this.listener = null;
        this.client = client;
        this.server = null;
        this.size = size;
        this.crc = crc;
        peerRxAddr = reply.rxAddr();
        peerRxKey = reply.rxKey();
        peerTxAddr = reply.txAddr();
        peerTxKey = reply.txKey();
        ord = settledOrd(client);
    }

    /** The ORD the first connection settled on (the parameters' default without connections). */
    private static int settledOrd(Side s) {
        return s.conns.length > 0 && s.conns[0] != null ? s.conns[0].info().ord() : ConnectionParameters.DEFAULT_IRD_ORD;
    }

    /**
     * Connects {@code n} queue pairs to a {@link BenchPeer} at {@code peer}; the connect private
     * data tells it what to run ({@code mode}, wait, size, window) and where the client's receive
     * region is, its accept private data where its regions are. Read depths: the parameters'
     * defaults (IRD = ORD = {@link ConnectionParameters#DEFAULT_IRD_ORD}).
     */
    static ProviderFixture remote(String providerName, String address, InetSocketAddress peer, int n, int size,
                                  int depth, boolean crc, ProviderPingPong.Peer mode, boolean spin, int sinkWindow)
            throws Exception {
        return remote(providerName, address, peer, n, size, depth, crc, mode, spin, sinkWindow, false);
    }

    /**
     * As above; {@code deviceReadDepth} asks for the device's maximum Read depths on both ends
     * (IRD = {@code max_qp_rd_atom}, ORD = {@code max_qp_init_rd_atom}), as perftest's bandwidth
     * tools do (their outstanding Reads default to the device maximum and go into rdma_cm's
     * responder_resources and initiator_depth on both sides).
     */
    static ProviderFixture remote(String providerName, String address, InetSocketAddress peer, int n, int size,
                                  int depth, boolean crc, ProviderPingPong.Peer mode, boolean spin, int sinkWindow,
                                  boolean deviceReadDepth)
            throws Exception {
        return remote(providerName, address, peer, n, size, depth, crc, mode, spin, sinkWindow, deviceReadDepth, 0);
    }

    /** As above; {@code clientOrd} above 0 is the ORD the client asks for and the IRD the peer offers. */
    static ProviderFixture remote(String providerName, String address, InetSocketAddress peer, int n, int size,
                                  int depth, boolean crc, ProviderPingPong.Peer mode, boolean spin, int sinkWindow,
                                  boolean deviceReadDepth, int clientOrd)
            throws Exception {
        RdmaProvider p = Rdma.open(providerName);
        Device d = null;
        Side c = null;
        try {
            d = p.open(InetAddress.getByName(address));
            c = new Side(d, n, size, depth);
            BenchPeer.Reply reply = null;
            int readDepth = deviceReadDepth ? d.info().maxQpInitRdAtom() : 0;
            for (int i = 0; i < n; i++) {
                // a deeper Read window: the peer offers that IRD (and ORD), as for the device's depth
                BenchPeer.Hello h = new BenchPeer.Hello(mode, spin, size, sinkWindow, n, i, depth,
                        c.rx.address(), c.rx.rkey(), clientOrd > 0 ? Math.max(readDepth, clientOrd) : readDepth);
                ConnectionParameters.Builder b = clientParams(crc, clientOrd).toBuilder().privateData(h.encode());
                if (deviceReadDepth) {
                    b.ird(d.info().maxQpRdAtom()).ord(readDepth);
                }
                ConnectionParameters cp = b.build();
                c.conns[i] = d.connectionManager().connect(peer, c.qp(depth), cp, TIMEOUT);
                if (reply == null) {
                    reply = BenchPeer.Reply.decode(c.conns[i].info().peerPrivateData());
                }
            }
            if (reply == null) {
                throw new IllegalArgumentException("no connection to the peer");
            }
            return new ProviderFixture(p, d, c, size, crc, reply);
        } catch (Exception e) {
            if (c != null) {
                c.close();
            }
            if (d != null) {
                d.close();
            }
            p.close();
            throw e;
        }
    }

    static ConnectionParameters params(boolean crc) {
        return ConnectionParameters.builder().crc(crc).build();
    }

    /** The client's parameters: {@code ord} above 0 is the ORD asked for (a Read window deeper than the default ORD). */
    static ConnectionParameters clientParams(boolean crc, int ord) {
        return ord > 0 ? ConnectionParameters.builder().crc(crc).ord(ord).build() : params(crc);
    }

    private static void connectAll(Device dev, Listener l, Side c, Side s, int n, int depth, boolean crc,
                                   int clientOrd) throws Exception {
        CompletableFuture<Void> acceptor = CompletableFuture.runAsync(() -> {
            try {
                for (int i = 0; i < n; i++) {
                    ConnectionRequest r = l.next(TIMEOUT);
                    s.conns[i] = r.accept(s.qp(depth), clientOrd > 0
                            ? ConnectionParameters.builder().crc(crc).ird(clientOrd).build() : params(crc));
                }
            } catch (Exception e) {
                throw new IllegalStateException("accept failed: " + e, e);
            }
        });
        try {
            for (int i = 0; i < n; i++) {
                c.conns[i] = dev.connectionManager().connect(l.localAddress(), c.qp(depth), clientParams(crc, clientOrd),
                        TIMEOUT);
            }
        } finally {
            acceptor.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        }
        // Accept order equals connect order (one connect in flight at a time), so conns[i] pair up.
    }

    /** A direct buffer of at least {@code size} bytes, 8-byte aligned, its length a multiple of 8. */
    static ByteBuffer aligned(int size) {
        int len = (Math.max(size, 8) + 7) & ~7;
        ByteBuffer b = ByteBuffer.allocateDirect(len + 16).alignedSlice(8);
        return b.slice(0, len).order(ByteOrder.nativeOrder());
    }

    @Override
    public void close() {
        try {
            client.close();
            if (server != null) {
                server.close();
            }
            if (listener != null) {
                listener.close();
            }
            if (serverDevice != device) {
                serverDevice.close();
            }
            device.close();
        } finally {
            if (serverProvider != provider) {
                serverProvider.close();
            }
            provider.close();
        }
    }
}
