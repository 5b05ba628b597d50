package org.jwarp.bench;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.Callable;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.ConnectionRequest;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.Rdma;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaProvider;
import org.jwarp.verbs.RdmaTimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The server half of {@link BenchMain}'s cases in a JVM of its own, so that the two ends of a
 * measurement share no JIT, heap, GC or provider: it listens for RDMA connections (RFC 6581
 * connection setup; the connect private data, a {@link Hello}, says what to run and where the
 * client's receive region is; the accept private data, a {@link Reply}, says where this side's
 * regions are) and for TCP connections (a 12-byte header says mode, size and spin), and serves
 * each case until the client closes it. Prints {@code jwarp-bench-peer rdma=PORT tcp=PORT} once
 * it listens; runs until killed.
 */
@Command(name = "BenchPeer", mixinStandardHelpOptions = true,
        description = "Server half of BenchMain's cases in its own JVM (RDMA and TCP).")
public final class BenchPeer implements Callable<Integer> {
    private static final Logger LOG = LoggerFactory.getLogger(BenchPeer.class);

    @Option(names = "--transport", description = "RDMA provider by name: soft, disni, or ffm (with the jwarp-ffm jar "
            + "on the class path, on a JDK 25) (default: ${DEFAULT-VALUE}).")
    String transport = "soft";
    @Option(names = "--address", description = "Address to listen on (default: ${DEFAULT-VALUE}).")
    String address = "127.0.0.1";
    @Option(names = "--rdma-port", description = "RDMA listener port, 0 = any (default: ${DEFAULT-VALUE}).")
    int rdmaPort;
    @Option(names = "--tcp-port", description = "TCP listener port, 0 = any (default: ${DEFAULT-VALUE}).")
    int tcpPort;
    @Option(names = "--tcp-only", description = "Serve the TCP floors only, opening no RDMA provider (no reactor, "
            + "no listener thread in this JVM); prints rdma=0.")
    boolean tcpOnly;

    /**
     * Private data of at least {@code length} bytes that begins with {@code magic}: a big-endian
     * reader just after the magic; else null.
     */
    static ByteBuffer afterMagic(byte[] pd, byte[] magic, int length) {
        ByteBuffer b = ByteBuffer.wrap(pd).order(ByteOrder.BIG_ENDIAN);
        if (pd.length < length || b.getInt() != ByteBuffer.wrap(magic).getInt()) {
            return null;
        }
        return b;
    }

    /**
     * What the client asks for, in the connect private data (big-endian, 43 bytes); {@code readDepth}
     * above 0 asks this side to offer that IRD (and use that ORD), capped by its device, 0 for the
     * parameters' defaults.
     */
    record Hello(ProviderPingPong.Peer mode, boolean spin, int size, int sinkWindow, int n, int index, int depth,
                 long clientRxAddr, int clientRxKey, int readDepth) {
        static final byte[] MAGIC = "JWB2".getBytes(StandardCharsets.US_ASCII);
        static final int LENGTH = 4 + 1 + 1 + 4 * 5 + 8 + 4 + 4;

        byte[] encode() {
            ByteBuffer b = ByteBuffer.allocate(LENGTH).order(ByteOrder.BIG_ENDIAN);
            b.put(MAGIC).put((byte) mode.ordinal()).put((byte) (spin ? 1 : 0)).putInt(size).putInt(sinkWindow)
                    .putInt(n).putInt(index).putInt(depth).putLong(clientRxAddr).putInt(clientRxKey).putInt(readDepth);
            return b.array();
        }

        static Hello decode(byte[] pd) throws RdmaException {
            ByteBuffer b = afterMagic(pd, MAGIC, LENGTH);
            if (b == null) {
                throw new RdmaException("not a benchmark client: " + pd.length + " bytes of private data");
            }
            int m = b.get();
            if (m < 0 || m >= ProviderPingPong.Peer.values().length) {
                throw new RdmaException("unknown peer mode " + m);
            }
            return new Hello(ProviderPingPong.Peer.values()[m], b.get() != 0, b.getInt(), b.getInt(), b.getInt(),
                    b.getInt(), b.getInt(), b.getLong(), b.getInt(), b.getInt());
        }
    }

    /** Where this side's regions are, in the accept private data (big-endian, 28 bytes). */
    record Reply(long rxAddr, int rxKey, long txAddr, int txKey) {
        static final byte[] MAGIC = "JWP1".getBytes(StandardCharsets.US_ASCII);
        static final int LENGTH = 4 + 8 + 4 + 8 + 4;

        byte[] encode() {
            return ByteBuffer.allocate(LENGTH).order(ByteOrder.BIG_ENDIAN).put(MAGIC).putLong(rxAddr).putInt(rxKey)
                    .putLong(txAddr).putInt(txKey).array();
        }

        static Reply decode(byte[] pd) throws RdmaException {
            ByteBuffer b = afterMagic(pd, MAGIC, LENGTH);
            if (b == null) {
                throw new RdmaException("the peer's accept private data is not a benchmark reply");
            }
            return new Reply(b.getLong(), b.getInt(), b.getLong(), b.getInt());
        }
    }

    /** One case's connections, side and loop. */
    private static final class Group {
        final ProviderFixture.Side side;
        PeerSide peer;

        Group(ProviderFixture.Side side) {
            this.side = side;
        }

        boolean done() {
            for (Connection c : side.conns) {
                if (c == null) {
                    return false;
                }
                if (c.isOpen()) {
                    return false;
                }
            }
            return true;
        }

        void close() {
            if (peer != null) {
                peer.close();
            }
            side.close();
        }
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new BenchPeer()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        InetAddress addr = InetAddress.getByName(address);
        if (tcpOnly) {
            try (ServerSocketChannel tcp = ServerSocketChannel.open()) {
                tcp.bind(new InetSocketAddress(addr, tcpPort));
                System.out.println("jwarp-bench-peer rdma=0 tcp=" + ((InetSocketAddress) tcp.getLocalAddress()).getPort());
                System.out.flush();
                acceptTcp(tcp);
            }
            return 0;
        }
        try (RdmaProvider prov = Rdma.open(transport);
             Device dev = prov.open(addr);
             Listener l = dev.connectionManager().listen(new InetSocketAddress(addr, rdmaPort), 128);
             ServerSocketChannel tcp = ServerSocketChannel.open()) {
            tcp.bind(new InetSocketAddress(addr, tcpPort));
            Thread t = new Thread(() -> acceptTcp(tcp), "bench-peer-tcp-accept");
            t.setDaemon(true);
            t.start();
            System.out.println("jwarp-bench-peer rdma=" + ((InetSocketAddress) l.localAddress()).getPort() + " tcp="
                    + ((InetSocketAddress) tcp.getLocalAddress()).getPort());
            System.out.flush();
            serveRdma(dev, l);
        }
        return 0;
    }

    private static void serveRdma(Device dev, Listener l) throws Exception {
        List<Group> groups = new ArrayList<>();
        Group current = null;
        while (true) {
            for (Iterator<Group> it = groups.iterator(); it.hasNext(); ) {
                Group g = it.next();
                if (g != current && g.done()) {
                    g.close();
                    it.remove();
                }
            }
            ConnectionRequest req;
            try {
                req = l.next(Duration.ofMillis(500));
            } catch (RdmaTimeoutException e) {
                continue;
            }
            Hello h;
            try {
                h = Hello.decode(req.privateData());
            } catch (RdmaException e) {
                LOG.warn("rejected: {}", e.getMessage());
                req.reject(new byte[0]);
                continue;
            }
            try {
                if (h.index() == 0) {
                    current = new Group(new ProviderFixture.Side(dev, h.n(), h.size(), h.depth()));
                    groups.add(current);
                }
                Group g = current;
                if (g == null) {
                    req.reject(new byte[0]);
                    continue;
                }
                ProviderFixture.Side side = g.side;
                Reply reply = new Reply(side.rx.address(), side.rx.rkey(), side.tx.address(), side.tx.rkey());
                QueuePairConfig qpc = side.qp(h.depth()).withBeforeConnect(qp ->
                        PeerSide.prePost(h.mode(), qp, h.index(), side, h.size(), h.sinkWindow()));
                // CRC off here: MPA uses CRC when either end asks (RFC 5044 §7.1), so the client decides
                ConnectionParameters.Builder pb = ConnectionParameters.builder().crc(false).privateData(reply.encode());
                if (h.readDepth() > 0) {
                    // perftest's bandwidth tools: both ends offer and use the device's Read depth
                    pb.ird(Math.min(h.readDepth(), dev.info().maxQpRdAtom()))
                            .ord(Math.min(h.readDepth(), dev.info().maxQpInitRdAtom()));
                }
                ConnectionParameters p = pb.build();
                side.conns[h.index()] = req.accept(qpc, p);
                if (h.index() == h.n() - 1) {
                    g.peer = h.mode() == ProviderPingPong.Peer.NONE ? null
                            : new PeerSide(side, h.mode(), h.spin(), h.size(), h.sinkWindow(), h.clientRxAddr(),
                                    h.clientRxKey());
                    current = null;
                }
            } catch (RdmaException | RuntimeException e) {
                LOG.warn("case set-up failed: {}", e.toString());
            }
        }
    }

    private static void acceptTcp(ServerSocketChannel server) {
        while (true) {
            try {
                SocketChannel ch = server.accept();
                ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
                ByteBuffer hdr = ByteBuffer.allocate(12);
                while (hdr.hasRemaining()) {
                    if (ch.read(hdr) < 0) {
                        throw new IOException("closed before the header");
                    }
                }
                TcpBaseline.Mode mode = TcpBaseline.Mode.values()[hdr.getInt(0)];
                int size = hdr.getInt(4);
                boolean spin = hdr.getInt(8) != 0;
                if (spin) {
                    ch.configureBlocking(false);
                }
                Thread t = new Thread(() -> TcpBaseline.serve(ch, mode, size, () -> true), "bench-peer-tcp");
                t.setDaemon(true);
                t.start();
            } catch (IOException | RuntimeException e) {
                if (!server.isOpen()) {
                    return;
                }
                LOG.warn("tcp case set-up failed: {}", e.toString());
            }
        }
    }
}
