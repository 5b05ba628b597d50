package org.jwarp.cli;

import java.io.PrintStream;
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

import org.HdrHistogram.Histogram;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionInfo;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.Rdma;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaProvider;
import org.jwarp.ground.RtrType;
import org.jwarp.verbs.SendOpcode;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
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
        description = "Connect to a jwarp server and measure send/write/read latency and bandwidth.",
        footer = {"", "Which option applies to which --op (an option that does not apply exits 2):",
                "  option             send  write  read",
                "  --sge N            yes   yes    yes, up to the device's maxSgeRd (siw: 1)",
                "  --post-list N      yes   yes    yes   (WRs per post call in the bandwidth run)",
                "  --inline-size N    yes   yes    no",
                "  --verify           yes   yes    yes   (send: echoed bytes; write: read back; read: server pattern)",
                "  --srq              yes   yes    yes   (receives from a shared receive queue)",
                "  --events           yes   yes    yes   (sleep on a completion channel)",
                "  --bind/--device    yes   yes    yes"})
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

    /** The benchmarks' bandwidth window (BenchMain --window). */
    static final int DEFAULT_WINDOW = 32;
    /** Warm-up operations before the latency is recorded. */
    static final int DEFAULT_WARMUP = 10_000;
    /** Timed bandwidth passes, the median reported (BenchMain --bw-passes). */
    static final int DEFAULT_PASSES = 5;

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
    @Option(names = "--window", description = "Outstanding operations in the bandwidth run, as scripts/bench's "
            + "(default: ${DEFAULT-VALUE}).")
    int window = DEFAULT_WINDOW;
    @Option(names = "--signal-every", description = "Bandwidth run: signal every n-th operation (perftest's --cq-mod); "
            + "0 = a quarter of the window for send and write, every read, as scripts/bench (default: ${DEFAULT-VALUE}).")
    int signalEvery;
    @Option(names = "--warmup", description = "Operations run before the latency is recorded, as scripts/bench's "
            + "--warmup-iters (above 4 KiB fewer: N*4096/size, at least 200), then batches of N/10 until the JIT "
            + "finished no compilation for 0.5 s (at most 20 s); the bandwidth run first makes unrecorded passes "
            + "of an eighth of a timed pass until N operations (at most 1 GiB) have run, then until the JIT is "
            + "quiet likewise; 0: no warm-up (default: ${DEFAULT-VALUE}).")
    int warmup = DEFAULT_WARMUP;
    @Option(names = "--passes", description = "The bandwidth run's --iters operations as this many timed passes "
            + "of iters/N (at most --iters passes); the median pass is reported, min and max beside it, as "
            + "scripts/bench's --bw-passes; 1: one pass, as ib_*_bw (default: ${DEFAULT-VALUE}).")
    int passes = DEFAULT_PASSES;
    @Mixin
    ConnectionOptions setup = new ConnectionOptions();
    @Option(names = "--timeout", description = "Connect timeout in ms (default: ${DEFAULT-VALUE}).")
    long timeoutMs = 10000;
    @Option(names = "--json", description = "Print one JSON object instead of text.")
    boolean json;
    @Option(names = "--sge", description = "SGEs each message is gathered from / scattered into (default: ${DEFAULT-VALUE}).")
    int sge = 1;
    @Option(names = "--post-list", description = "WRs chained into one post call in the bandwidth run (default: ${DEFAULT-VALUE}).")
    int postList = 1;
    @Option(names = "--inline-size", description = "Inline bytes asked for; messages up to it go inline (send, write; default: ${DEFAULT-VALUE}).")
    int inlineSize;
    @Option(names = "--verify", description = "Check payload bytes end to end; a mismatch fails the run.")
    boolean verify;
    @Option(names = "--srq", description = "Take the receive buffers from a shared receive queue (ibv_srq) "
            + "instead of the QP's own receive queue.")
    boolean srq;
    @Option(names = "--events", description = "Sleep on a completion channel (poll, arm, poll, sleep) instead of "
            + "the CQ's await.")
    boolean events;
    @Option(names = "--bind", description = "Local address whose device is used (default: the source address the kernel routes from to HOST).")
    String bind;
    @Option(names = "--device", description = "Device name the bound address must belong to (see `jwarp devices`).")
    String device;

    @Override
    public Integer call() throws Exception {
        SendOpcode opcode = parseOp(op);
        if (size < 0 || iters < 1 || window < 1 || warmup < 0 || signalEvery < 0 || passes < 1) {
            throw new IllegalArgumentException("--size >= 0, --iters >= 1, --window >= 1, --warmup >= 0, "
                    + "--signal-every >= 0 and --passes >= 1 required");
        }
        WorkSettings ws = new WorkSettings(sge, postList, inlineSize, verify, srq, events);
        if (opcode == SendOpcode.RDMA_READ && inlineSize > 0) {
            throw new IllegalArgumentException("--inline-size does not apply to --op read (an RDMA Read carries no "
                    + "local payload)");
        }
        ConnectionParameters params = setup.builder().rtrTypes(setup.p2p ? parseRtr(setup.rtr) : Set.of()).build();
        InetSocketAddress server = new InetSocketAddress(host, port);
        InetAddress local = bind != null ? InetAddress.getByName(bind) : routeSource(server);
        try (RdmaProvider prov = Rdma.open(setup.provider);
             Device dev = openDevice(prov, local, device);
             Workload w = Workload.connect(dev, server, params, size, window, Duration.ofMillis(timeoutMs), ws)) {
            if (opcode == SendOpcode.RDMA_READ && sge > w.connection().queuePair().caps().maxSgeRd()) {
                throw new IllegalArgumentException("--sge " + sge + ": an RDMA Read sink takes at most "
                        + w.connection().queuePair().caps().maxSgeRd() + " SGEs on " + dev.info().name() + " (maxSgeRd)");
            }
            Progress progress = new Progress(System.err);
            Histogram h = w.latency(opcode, size, warmupOps(warmup, size), iters, progress);
            Workload.Bandwidth bw = w.bandwidth(opcode, size, iters, window, signalEvery,
                    WindowedPosts.warmupOps(warmup, size), passes, progress);
            progress.done();
            Map<String, Object> out = Json.object();
            Map<String, Object> settings = Json.object();
            settings.put("window", window); // op, size and iters are in "result"
            settings.put("signalEvery", signalEvery);
            settings.put("warmup", warmupOps(warmup, size));
            ws.putJson(settings);
            settings.put("provider", setup.provider);
            settings.put("device", dev.info().name());
            settings.put("bind", local.getHostAddress());
            settings.put("p2p", setup.p2p);
            out.put("settings", settings);
            out.put("connection", describeJson(w.connection().info()));
            Map<String, Object> result = resultJson(op, size, iters, h, bw.median());
            result.put("bandwidthMBpsMin", bw.min() / 1e6);
            result.put("bandwidthMBpsMax", bw.max() / 1e6);
            result.put("bandwidthPasses", bw.passes());
            result.put("bandwidthOpsPerPass", bw.opsPerPass());
            // this JVM's JIT time inside the recorded phases (scripts/bench's jit_ms_while_measuring)
            result.put("latencyJitMs", w.lastLatencyJitMillis);
            result.put("bandwidthJitMs", bw.jitMillis());
            out.put("result", result);
            if (json) {
                System.out.println(Json.write(out));
            } else {
                System.out.println("connected: " + describe(w.connection()) + " via " + dev.info().name()
                        + " (window " + window + ", warm-up " + warmupOps(warmup, size) + " ops, sge " + sge
                        + ", post-list " + postList + ", inline " + inlineSize
                        + (verify ? ", payload verified" : "") + ")");
                System.out.println(header() + "   (" + SEMANTICS + ")");
                System.out.println(row(op, size, iters, h, bw.median()));
                System.out.println(String.format(Locale.ROOT, "bw: median of %d passes of %d ops, min %.1f, max %.1f MB/s",
                        bw.passes(), bw.opsPerPass(), bw.min() / 1e6, bw.max() / 1e6));
            }
        }
        return 0;
    }

    /** Latency warm-up operations for {@code size} bytes: {@code n} up to 4 KiB, else n*4096/size but at least 200 (and at most n). */
    static int warmupOps(int n, int size) {
        return size <= 4096 ? n : Math.min(n, Math.max(200, (int) ((long) n * 4096 / size)));
    }

    /**
     * The source address the kernel routes from towards {@code server} (a connected UDP socket
     * sends nothing); loopback only when the server is local.
     */
    static InetAddress routeSource(InetSocketAddress server) throws java.io.IOException {
        if (server.isUnresolved()) {
            throw new IllegalArgumentException("cannot resolve " + server.getHostString());
        }
        try (java.net.DatagramSocket s = new java.net.DatagramSocket()) {
            s.connect(server.getAddress(), server.getPort());
            InetAddress a = s.getLocalAddress();
            return a == null || a.isAnyLocalAddress() ? InetAddress.getLoopbackAddress() : a;
        }
    }

    /** Opens the device serving {@code local}; with {@code name}, it must be that device. */
    static Device openDevice(RdmaProvider prov, InetAddress local, String name) throws RdmaException {
        if (name != null && prov.devices().stream().noneMatch(d -> d.name().equals(name))) {
            throw new IllegalArgumentException("--device " + name + ": no such device of provider " + prov.name()
                    + " (have: " + prov.devices().stream().map(d -> d.name()).toList() + ")");
        }
        Device dev = prov.open(local);
        if (name != null && !dev.info().name().equals(name)) {
            String got = dev.info().name();
            dev.close();
            throw new IllegalArgumentException("--device " + name + ": address " + local.getHostAddress()
                    + " belongs to " + got + "; pass --bind with an address of " + name);
        }
        return dev;
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

    static String name(SendOpcode op) {
        return switch (op) {
            case SEND, SEND_WITH_INVALIDATE -> "send";
            case RDMA_WRITE -> "write";
            case RDMA_READ -> "read";
        };
    }
}
