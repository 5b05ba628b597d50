package org.jwarp.cli;

import java.io.PrintStream;
import java.lang.invoke.VarHandle;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import org.HdrHistogram.Histogram;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.CompletionQueue;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionInfo;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.ProtectionDomain;
import org.jwarp.verbs.QueuePair;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.Rdma;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaProvider;
import org.jwarp.ground.RtrType;
import org.jwarp.verbs.SendOpcode;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WorkCompletion;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code jwarp client HOST}: the active side of a perftest-style test. It connects with RFC 6581
 * parameters, tells the server its own receive area (address and STag) in the connect private
 * data, learns the server buffer's from the accept private data, and measures with perftest's
 * semantics (RFC 5040 §4): send latency is a Send ping-pong round trip (ib_send_lat); write
 * latency is a Write ping-pong round trip in which each side RDMA-Writes into the other's buffer
 * and polls the last byte of its own, with no Send (ib_write_lat); read latency is one RDMA Read
 * from post to completion (ib_read_lat); bandwidth keeps a window of operations outstanding
 * (ib_*_bw). Latency goes into an HdrHistogram; one line per measurement (or JSON with
 * {@code --json}).
 */
@Command(name = "client", mixinStandardHelpOptions = true,
        description = "Connect to a jwarp server and measure send/write/read latency and bandwidth.")
public final class ClientCommand implements Callable<Integer> {
    /** First payload byte of a bandwidth-phase Send: the server answers with a zero-length credit. */
    static final byte CREDIT_TAG = 'B';
    /** First payload byte of a latency-phase Send: the server echoes it. */
    static final byte ECHO_TAG = 'L';
    /**
     * First payload byte of the Send that starts a write-latency phase ({@link #WRITE_START_LENGTH}
     * bytes: tag, 3 zero bytes, size and iterations as big-endian ints). The server clears the
     * last byte of its buffer, answers with a zero-length Send, then answers each Write whose last
     * byte carries the iteration number with a Write of the same number into the client's area.
     */
    static final byte WRITE_TAG = 'W';
    static final int WRITE_START_LENGTH = 12;
    /** Round-trip text for the table headers. */
    static final String SEMANTICS = "send: Send ping-pong RTT; write: Write ping-pong RTT, each side polls the last "
            + "byte (ib_write_lat); read: one Read, post to completion; bw: a window outstanding";

    @Parameters(index = "0", description = "Server host name or address.")
    String host;
    @Option(names = "--port", description = "TCP port (default: ${DEFAULT-VALUE}).")
    int port = 7471;
    @Option(names = "--size", description = "Message size in bytes (default: ${DEFAULT-VALUE}).")
    int size = 64;
    @Option(names = "--iters", description = "Operations per measurement (default: ${DEFAULT-VALUE}).")
    int iters = 10000;
    @Option(names = "--op", description = "send, write or read (default: ${DEFAULT-VALUE}).")
    String op = "send";
    @Option(names = "--window", description = "Outstanding operations in the bandwidth run (default: ${DEFAULT-VALUE}).")
    int window = 16;
    @Option(names = "--p2p", description = "Use the RFC 6581 peer-to-peer model (the initiator sends an RTR first).")
    boolean p2p;
    @Option(names = "--rtr", split = ",", description = "RTR types to offer: write, read, send (default: write,read).")
    Set<String> rtr = Set.of("write", "read");
    @Option(names = "--ird", description = "Inbound RDMA Read depth offered (default: ${DEFAULT-VALUE}).")
    int ird = 16;
    @Option(names = "--ord", description = "Outbound RDMA Read depth wanted (default: ${DEFAULT-VALUE}).")
    int ord = 16;
    @Option(names = "--provider", description = "Provider name (default: ${DEFAULT-VALUE}).")
    String provider = Rdma.DEFAULT_PROVIDER;
    @Option(names = "--timeout", description = "Connect timeout in ms (default: ${DEFAULT-VALUE}).")
    long timeoutMs = 10000;
    @Option(names = "--json", description = "Print one JSON object instead of text.")
    boolean json;

    @Override
    public Integer call() throws Exception {
        SendOpcode opcode = parseOp(op);
        if (size < 0 || iters < 1 || window < 1) {
            throw new IllegalArgumentException("--size >= 0, --iters >= 1 and --window >= 1 required");
        }
        ConnectionParameters params = ConnectionParameters.builder().ird(ird).ord(ord).peerToPeer(p2p)
                .rtrTypes(p2p ? parseRtr(rtr) : Set.of()).build();
        try (RdmaProvider prov = Rdma.open(provider);
             Device dev = prov.open(InetAddress.getLoopbackAddress());
             Workload w = Workload.connect(dev, new InetSocketAddress(host, port), params, size, window,
                     Duration.ofMillis(timeoutMs))) {
            Progress progress = new Progress(System.err);
            Histogram h = w.latency(opcode, size, iters, progress);
            double bw = w.bandwidth(opcode, size, iters, window, progress);
            progress.done();
            Map<String, Object> out = Json.object();
            out.put("connection", describeJson(w.connection().info()));
            out.put("result", resultJson(op, size, iters, h, bw));
            if (json) {
                System.out.println(Json.write(out));
            } else {
                System.out.println("connected: " + describe(w.connection()));
                System.out.println(header() + "   (" + SEMANTICS + ")");
                System.out.println(row(op, size, iters, h, bw));
            }
        }
        return 0;
    }

    static SendOpcode parseOp(String op) {
        return switch (op.toLowerCase(Locale.ROOT)) {
            case "send" -> SendOpcode.SEND;
            case "write" -> SendOpcode.RDMA_WRITE;
            case "read" -> SendOpcode.RDMA_READ;
            default -> throw new IllegalArgumentException("--op: '" + op + "' is not send, write or read");
        };
    }

    static Set<RtrType> parseRtr(Set<String> names) {
        EnumSet<RtrType> s = EnumSet.noneOf(RtrType.class);
        for (String n : names) {
            switch (n.toLowerCase(Locale.ROOT)) {
                case "write" -> s.add(RtrType.WRITE);
                case "read" -> s.add(RtrType.READ);
                case "send" -> s.add(RtrType.SEND);
                default -> throw new IllegalArgumentException("--rtr: '" + n + "' is not write, read or send (RFC 6581 §9.2)");
            }
        }
        return s;
    }

    static String describe(Connection c) {
        ConnectionInfo i = c.info();
        return i.local() + " <-> " + i.remote() + " mpa rev " + i.mpaRevision() + ", " + (i.peerToPeer()
                ? "peer-to-peer, rtr " + (i.rtr() == null ? "none" : i.rtr().name().toLowerCase(Locale.ROOT))
                : "client-server") + ", crc " + (i.crc() ? "on" : "off") + ", ird " + i.ird() + " ord " + i.ord()
                + " (peer ird " + i.peerIrd() + " ord " + i.peerOrd() + ")";
    }

    static Map<String, Object> describeJson(ConnectionInfo i) {
        Map<String, Object> m = Json.object();
        m.put("local", String.valueOf(i.local()));
        m.put("remote", String.valueOf(i.remote()));
        m.put("mpaRevision", i.mpaRevision());
        m.put("peerToPeer", i.peerToPeer());
        m.put("rtr", i.rtr() == null ? null : i.rtr().name().toLowerCase(Locale.ROOT));
        m.put("crc", i.crc());
        m.put("ird", i.ird());
        m.put("ord", i.ord());
        m.put("peerIrd", i.peerIrd());
        m.put("peerOrd", i.peerOrd());
        m.put("peerPrivateData", Json.hex(i.peerPrivateData()));
        return m;
    }

    static String header() {
        return String.format(Locale.ROOT, "%-6s %8s %8s %9s %9s %9s %9s %11s", "op", "bytes", "iters", "p50[us]",
                "p99[us]", "p99.9[us]", "max[us]", "bw[MB/s]");
    }

    static String row(String op, int size, int iters, Histogram h, double bytesPerSec) {
        return String.format(Locale.ROOT, "%-6s %8d %8d %9.2f %9.2f %9.2f %9.2f %11.1f", op, size, iters,
                h.getValueAtPercentile(50) / 1e3, h.getValueAtPercentile(99) / 1e3, h.getValueAtPercentile(99.9) / 1e3,
                h.getMaxValue() / 1e3, bytesPerSec / 1e6);
    }

    static Map<String, Object> resultJson(String op, int size, int iters, Histogram h, double bytesPerSec) {
        Map<String, Object> m = Json.object();
        m.put("op", op);
        m.put("bytes", size);
        m.put("iters", iters);
        m.put("p50Us", h.getValueAtPercentile(50) / 1e3);
        m.put("p99Us", h.getValueAtPercentile(99) / 1e3);
        m.put("p999Us", h.getValueAtPercentile(99.9) / 1e3);
        m.put("maxUs", h.getMaxValue() / 1e3);
        m.put("bandwidthMBps", bytesPerSec / 1e6);
        m.put("messagesPerSecond", size > 0 ? bytesPerSec / size : 0.0);
        m.put("latency", switch (op) {
            case "send" -> "Send ping-pong round trip";
            case "write" -> "Write ping-pong round trip, last byte polled";
            default -> "Read post to completion";
        });
        return m;
    }

    /**
     * Client request header in the connect private data: what the server must size, and the
     * client's receive area for the server's write-latency Writes (absent in a 12-byte header).
     */
    record Hello(int bufferSize, int window, long address, int rkey) {
        static final byte[] MAGIC = "JWC1".getBytes(StandardCharsets.US_ASCII);
        static final int LENGTH = 12;
        static final int LENGTH_WITH_AREA = 24;

        Hello(int bufferSize, int window) {
            this(bufferSize, window, 0, 0);
        }

        boolean hasArea() {
            return address != 0 || rkey != 0;
        }

        byte[] encode() {
            ByteBuffer b = ByteBuffer.allocate(LENGTH_WITH_AREA).order(ByteOrder.BIG_ENDIAN);
            b.put(MAGIC).putInt(bufferSize).putInt(window).putLong(address).putInt(rkey);
            return b.array();
        }

        static Hello decode(byte[] pd) {
            if (pd.length < LENGTH) {
                return null;
            }
            ByteBuffer b = ByteBuffer.wrap(pd).order(ByteOrder.BIG_ENDIAN);
            for (byte m : MAGIC) {
                if (b.get() != m) {
                    return null;
                }
            }
            int size = b.getInt();
            int window = b.getInt();
            if (pd.length < LENGTH_WITH_AREA) {
                return new Hello(size, window);
            }
            return new Hello(size, window, b.getLong(), b.getInt());
        }
    }

    /** The server buffer a client writes and reads, from the accept private data. */
    record RemoteBuffer(long address, int rkey, int length) {
        static final byte[] MAGIC = "JWS1".getBytes(StandardCharsets.US_ASCII);
        static final int LENGTH = 20;

        static byte[] encode(long address, int rkey, int length) {
            ByteBuffer b = ByteBuffer.allocate(LENGTH).order(ByteOrder.BIG_ENDIAN);
            b.put(MAGIC).putLong(address).putInt(rkey).putInt(length);
            return b.array();
        }

        static RemoteBuffer decode(byte[] pd) throws RdmaException {
            if (pd.length < LENGTH) {
                throw new RdmaException("server private data too short for a buffer descriptor: " + pd.length + " bytes");
            }
            ByteBuffer b = ByteBuffer.wrap(pd).order(ByteOrder.BIG_ENDIAN);
            for (byte m : MAGIC) {
                if (b.get() != m) {
                    throw new RdmaException("server private data is not a jwarp buffer descriptor");
                }
            }
            return new RemoteBuffer(b.getLong(), b.getInt(), b.getInt());
        }
    }

    /** A rate-limited progress line on stderr (carriage return on a terminal, lines otherwise). */
    static final class Progress {
        private final PrintStream err;
        private final boolean tty = System.console() != null;
        private final long intervalNanos;
        private long last;
        private boolean dirty;

        Progress(PrintStream err) {
            this.err = err;
            this.intervalNanos = tty ? 100_000_000L : 1_000_000_000L;
        }

        void update(String phase, long done, long total) {
            long now = System.nanoTime();
            if (done != total && now - last < intervalNanos) {
                return;
            }
            last = now;
            String line = String.format(Locale.ROOT, "  %-22s %8d/%d", phase, done, total);
            if (tty) {
                err.print("\r" + line);
                dirty = true;
            } else {
                err.println(line);
            }
            err.flush();
        }

        void done() {
            if (dirty) {
                err.print("\r" + " ".repeat(48) + "\r");
                err.flush();
                dirty = false;
            }
        }
    }

    /**
     * The active side of the workload on one connection (used by {@code client} and {@code demo}):
     * one local region, laid out as [send area | receive area], plus the remote buffer.
     */
    static final class Workload implements AutoCloseable {
        private static final long RECV = 1L << 40;
        private static final long AWAIT_MS = 10_000;

        private final ProtectionDomain pd;
        private final CompletionQueue cq;
        private final MemoryRegion mr;
        private final Connection conn;
        private final RemoteBuffer remote;
        private final int bufSize;
        private final int window;
        private final WorkCompletion[] wcs = new WorkCompletion[64];
        private final SendRequest wr = new SendRequest();
        private long nextId;

        private Workload(ProtectionDomain pd, CompletionQueue cq, MemoryRegion mr, Connection conn,
                         RemoteBuffer remote, int bufSize, int window) {
            this.pd = pd;
            this.cq = cq;
            this.mr = mr;
            this.conn = conn;
            this.remote = remote;
            this.bufSize = bufSize;
            this.window = window;
            for (int i = 0; i < wcs.length; i++) {
                wcs[i] = new WorkCompletion();
            }
        }

        static Workload connect(Device dev, InetSocketAddress server, ConnectionParameters params, int bufSize,
                                int window, Duration timeout) throws RdmaException {
            ProtectionDomain pd = dev.allocateProtectionDomain();
            CompletionQueue cq = null;
            MemoryRegion mr = null;
            try {
                cq = dev.createCompletionQueue(4 * window + 16);
                int slot = Math.max(16, bufSize);
                mr = pd.register(ByteBuffer.allocateDirect(slot * (window + 1)),
                        EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
                ByteBuffer b = mr.buffer();
                for (int i = 0; i < b.capacity(); i++) {
                    b.put(i, (byte) i);
                }
                // the receive area (after the send slot) takes the server's write-latency Writes
                Hello hello = new Hello(bufSize, window, mr.address() + slot, mr.rkey());
                ConnectionParameters p = params.toBuilder().privateData(hello.encode()).build();
                QueuePairConfig qpc = new QueuePairConfig(pd, cq, cq, window + 4, window + 4);
                Connection c;
                try {
                    c = dev.connectionManager().connect(server, qpc, p, timeout);
                } catch (RdmaException e) {
                    if (UserError.isUnreachable(e)) {
                        throw UserError.connectFailed(server, e);
                    }
                    throw e;
                }
                RemoteBuffer rb;
                try {
                    rb = RemoteBuffer.decode(c.info().peerPrivateData());
                } catch (RdmaException e) {
                    c.close();
                    throw e;
                }
                return new Workload(pd, cq, mr, c, rb, bufSize, window);
            } catch (RdmaException | RuntimeException e) {
                if (mr != null) {
                    mr.close();
                }
                if (cq != null) {
                    cq.close();
                }
                pd.close();
                throw e;
            }
        }

        Connection connection() {
            return conn;
        }

        /** The last byte of the receive area's first {@code size} bytes (where the server's Writes land). */
        byte receivedLastByte(int size) {
            VarHandle.acquireFence();
            return mr.buffer().get(slotSize() + size - 1);
        }

        private int slotSize() {
            return Math.max(16, bufSize);
        }

        /**
         * Latency of {@code iters} operations of {@code size} bytes, in nanoseconds, with perftest's
         * semantics: a Send ping-pong round trip, a Write ping-pong round trip (each side polls the
         * last byte of its buffer), or one Read from post to completion.
         */
        Histogram latency(SendOpcode op, int size, int iters, Progress progress) throws RdmaException,
                InterruptedException {
            checkSize(size);
            if (op == SendOpcode.RDMA_WRITE) {
                return writeLatency(size, iters, progress);
            }
            Histogram h = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
            QueuePair qp = conn.queuePair();
            String phase = name(op) + " latency";
            int recvOff = slotSize();
            if (op == SendOpcode.SEND) {
                qp.postRecv(RECV, mr, recvOff, slotSize());
                if (size > 0) {
                    mr.buffer().put(0, ECHO_TAG);
                }
            }
            for (int i = 0; i < iters; i++) {
                long t0 = System.nanoTime();
                post(op, size);
                int pending = op == SendOpcode.SEND ? 2 : 1;
                while (pending > 0) {
                    int n = reap();
                    for (int k = 0; k < n; k++) {
                        pending--;
                        if (wcs[k].opcode == WcOpcode.RECV) {
                            if (wcs[k].byteLength != size) {
                                throw new RdmaException("echo of " + wcs[k].byteLength + " bytes, expected " + size);
                            }
                            if (i + 1 < iters) {
                                qp.postRecv(RECV, mr, recvOff, slotSize());
                            }
                        }
                    }
                }
                h.recordValue(Math.min(System.nanoTime() - t0, h.getHighestTrackableValue()));
                if (progress != null) {
                    progress.update(phase, i + 1, iters);
                }
            }
            return h;
        }

        /**
         * ib_write_lat: tells the server to start (a {@link #WRITE_TAG} Send, answered with a
         * zero-length Send once it is ready), then for each iteration writes {@code size} bytes
         * whose last byte is the iteration number into the server's buffer and spins until the
         * server's Write puts the same number into the last byte of our receive area. No Send and
         * no receive completion is involved in an iteration; every 8th Write (and the last) is
         * signaled and its completion reaped, which bounds the send queue.
         */
        private Histogram writeLatency(int size, int iters, Progress progress) throws RdmaException,
                InterruptedException {
            if (size < 1) {
                throw new IllegalArgumentException("--size: write latency needs at least 1 byte (the polled byte)");
            }
            Histogram h = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
            QueuePair qp = conn.queuePair();
            ByteBuffer b = mr.buffer();
            int recvOff = slotSize();
            int mine = recvOff + size - 1;
            b.put(mine, (byte) 0);
            qp.postRecv(RECV, mr, recvOff, slotSize());
            ByteBuffer start = mr.buffer().order(ByteOrder.BIG_ENDIAN);
            start.put(0, WRITE_TAG).put(1, (byte) 0).put(2, (byte) 0).put(3, (byte) 0).putInt(4, size).putInt(8, iters);
            wr.send(++nextId, mr, 0, WRITE_START_LENGTH);
            qp.postSend(wr);
            // the start Send's completion and the server's ready Send: nothing else is outstanding
            for (int pending = 2; pending > 0; ) {
                pending -= reap();
            }
            int every = Math.max(1, Math.min(8, window));
            for (int i = 1; i <= iters; i++) {
                byte v = (byte) i;
                b.put(size - 1, v);
                long t0 = System.nanoTime();
                wr.write(++nextId, mr, 0, size, remote.address(), remote.rkey());
                wr.signaled = i % every == 0 || i == iters;
                qp.postSend(wr);
                long deadline = 0;
                int spins = 0;
                while (true) {
                    VarHandle.acquireFence();
                    if (b.get(mine) == v) {
                        break;
                    }
                    Thread.onSpinWait();
                    if ((++spins & 0xFFFF) == 0) {
                        long now = System.nanoTime();
                        if (deadline == 0) {
                            deadline = now + TimeUnit.MILLISECONDS.toNanos(AWAIT_MS);
                        } else if (now > deadline) {
                            throw new RdmaException("write latency: no Write from the server for iteration " + i
                                    + " within " + AWAIT_MS + " ms");
                        }
                    }
                }
                h.recordValue(Math.min(System.nanoTime() - t0, h.getHighestTrackableValue()));
                if (wr.signaled) {
                    reap();
                }
                if (progress != null) {
                    progress.update("write latency", i, iters);
                }
            }
            return h;
        }

        /** Bytes per second of {@code iters} operations with up to {@code win} outstanding. */
        double bandwidth(SendOpcode op, int size, int iters, int win, Progress progress) throws RdmaException,
                InterruptedException {
            checkSize(size);
            int w = Math.min(win, window);
            if (op == SendOpcode.RDMA_READ) {
                w = Math.max(1, Math.min(w, conn.info().ord()));
            }
            QueuePair qp = conn.queuePair();
            String phase = name(op) + " bandwidth";
            int credits = w;
            int recvOff = slotSize();
            if (op == SendOpcode.SEND) {
                if (size < 1) {
                    throw new IllegalArgumentException("--size: send bandwidth needs at least 1 byte for the credit tag");
                }
                mr.buffer().put(0, CREDIT_TAG);
                for (int i = 0; i < w; i++) {
                    qp.postRecv(RECV, mr, recvOff, 16);
                }
            }
            int posted = 0;
            int done = 0;
            int outstanding = 0;
            long t0 = System.nanoTime();
            while (done < iters) {
                while (posted < iters && outstanding < w && (op != SendOpcode.SEND || credits > 0)) {
                    post(op, size);
                    posted++;
                    outstanding++;
                    if (op == SendOpcode.SEND) {
                        credits--;
                    }
                }
                int n = reap();
                for (int k = 0; k < n; k++) {
                    if (wcs[k].opcode == WcOpcode.RECV) {
                        credits++;
                        done++;
                        if (posted < iters) {
                            qp.postRecv(RECV, mr, recvOff, 16);
                        }
                    } else {
                        outstanding--;
                        if (op != SendOpcode.SEND) {
                            done++;
                        }
                    }
                }
                if (progress != null) {
                    progress.update(phase, done, iters);
                }
            }
            // a Send's local completion can trail its credit; drain those
            while (outstanding > 0) {
                int n = reap();
                for (int k = 0; k < n; k++) {
                    if (wcs[k].opcode != WcOpcode.RECV) {
                        outstanding--;
                    }
                }
            }
            double secs = (System.nanoTime() - t0) / 1e9;
            return (double) size * iters / secs;
        }

        private void checkSize(int size) {
            if (size > bufSize || size > remote.length()) {
                throw new IllegalArgumentException("--size: " + size + " exceeds the negotiated buffer "
                        + Math.min(bufSize, remote.length()));
            }
        }

        private void post(SendOpcode op, int size) throws RdmaException {
            long id = ++nextId;
            switch (op) {
                case SEND -> wr.send(id, mr, 0, size);
                case RDMA_WRITE -> wr.write(id, mr, 0, size, remote.address(), remote.rkey());
                case RDMA_READ -> wr.read(id, mr, 0, size, remote.address(), remote.rkey());
                default -> throw new IllegalArgumentException("unsupported op " + op);
            }
            if (size == 0) {
                wr.local = null;
            }
            conn.queuePair().postSend(wr);
        }

        private int reap() throws RdmaException, InterruptedException {
            int n = cq.await(wcs, wcs.length, AWAIT_MS, TimeUnit.MILLISECONDS);
            if (n == 0) {
                throw new RdmaException("no completion within " + AWAIT_MS + " ms on " + conn.queuePair());
            }
            for (int k = 0; k < n; k++) {
                if (!wcs[k].isSuccess()) {
                    throw new RdmaException("work request failed: " + wcs[k]);
                }
            }
            return n;
        }

        @Override
        public void close() {
            conn.close();
            mr.close();
            cq.close();
            pd.close();
        }
    }

    static String name(SendOpcode op) {
        return switch (op) {
            case SEND, SEND_WITH_INVALIDATE -> "send";
            case RDMA_WRITE -> "write";
            case RDMA_READ -> "read";
        };
    }
}
