package org.jwarp.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.GarbageCollectorMXBean;
import java.net.InetSocketAddress;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import org.HdrHistogram.Histogram;
import org.jwarp.cli.JitQuiet;
import org.jwarp.cli.Json;
import org.jwarp.cli.WindowedPosts;
import org.jwarp.verbs.ConnectionParameters;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Fixed-iteration latency and bandwidth runner with perftest's semantics (RFC 5040 §4.3 Send,
 * RDMA Write, RDMA Read; see {@link ProviderPingPong}) and its TCP floors ({@link TcpBaseline}).
 * One invocation is one fork: it runs every (op, size, QP count) case of one transport and wait
 * mode, each after a warm-up that lasts until the JIT has been quiet for a while, records each
 * operation into an HdrHistogram, writes the histogram as a {@code .hgrm} file and prints one JSON
 * object per case (also appended to {@code --out}). {@code scripts/bench} interleaves such forks
 * of the soft provider and of TCP and compares them per run.
 *
 * <pre>
 * java -cp benchmarks.jar org.jwarp.bench.BenchMain --transport soft --wait await \
 *      --ops send,write,read --sizes 64,4096 -n 20000 --hgrm-dir target/bench/hgrm
 * java -cp benchmarks.jar org.jwarp.bench.BenchMain --transport tcp --wait spin --ops pingpong,fetch
 * </pre>
 *
 * Latency records carry the round trip in µs ({@code rtt_*}; a Read's is post to completion);
 * perftest's ib_send_lat and ib_write_lat print half a round trip. Bandwidth records carry MB/s
 * (10^6 bytes per second) and messages per second.
 */
@Command(name = "BenchMain", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Latency and bandwidth with perftest's semantics for one transport and wait mode (one fork).")
public final class BenchMain implements Callable<Integer> {
    @Option(names = "--transport", description = "soft, disni, ffm (jwarp providers, opened by name; ffm needs the "
            + "jwarp-ffm jar on the class path and a JDK 25) or tcp (the floor) (default: ${DEFAULT-VALUE}).")
    String transport = "soft";
    @Option(names = "--address", description = "Address both ends use (default: ${DEFAULT-VALUE}).")
    String address = "127.0.0.1";
    @Option(names = "--ops", split = ",", description = "RDMA: send, write, read (latency), send-bw, write-bw, read-bw; "
            + "tcp: pingpong, fetch (latency), stream (bandwidth) (default: ${DEFAULT-VALUE}).")
    List<String> ops = List.of("send", "write", "read");
    @Option(names = "--sizes", split = ",", description = "Message sizes in bytes (default: ${DEFAULT-VALUE}).")
    List<Integer> sizes = List.of(64);
    @Option(names = "--wait", description = "spin (busy-poll CQs; TCP: non-blocking busy retry) or await "
            + "(block in CompletionQueue.await; TCP: blocking sockets) (default: ${DEFAULT-VALUE}).")
    String wait = "spin";
    @Option(names = {"-n", "--iters"}, description = "Latency iterations up to 4 KiB; larger sizes get n*4096/size, "
            + "at least 200 (default: ${DEFAULT-VALUE}).")
    int iters = 10000;
    @Option(names = "--bw-bytes", description = "Bytes per bandwidth case (default: ${DEFAULT-VALUE}).")
    long bwBytes = 256L << 20;
    @Option(names = "--bw-passes", description = "Timed passes per bandwidth case; the median pass is reported (default: ${DEFAULT-VALUE}).")
    int bwPasses = 5;
    @Option(names = "--bw-max-msgs", description = "At most this many messages per bandwidth case (default: ${DEFAULT-VALUE}).")
    int bwMaxMsgs = 200_000;
    @Option(names = "--window", description = "Outstanding Writes and Sends in bandwidth cases (default: ${DEFAULT-VALUE}).")
    int window = 32;
    @Option(names = "--read-window", description = "Outstanding Reads in read-bw; 0 = the --window, as jwarp client; above "
            + "the parameters' default ORD (" + ConnectionParameters.DEFAULT_IRD_ORD + ") the client asks for that ORD; "
            + "the window is what the settled ORD allows (default: ${DEFAULT-VALUE}).")
    int readWindow;
    @Option(names = "--signal-every", description = "Write/Read bandwidth: signal every n-th operation, like perftest's "
            + "--cq-mod; 0 = window/4 for Writes, 1 for Reads (default: ${DEFAULT-VALUE}).")
    int signalEvery;
    @Option(names = "--perftest-bw", description = "Bandwidth cases as perftest's ib_write_bw / ib_send_bw / "
            + "ib_read_bw run them by default: -n operations in one pass (--bw-passes), window 128 (tx depth), every "
            + "100th request signaled and every one above 8 KiB (CQ moderation), Reads at the device's maximum depth "
            + "on both ends, Sends within the peer's 512 receives by its RDMA-Written receive count on iWARP devices "
            + "(perftest's credits there; elsewhere it relies on RNR retry, and so do we); MB/s over first post to "
            + "last completion. Warm-up: --warmup-iters operations of 64 B, then passes of n/8 at the full size until "
            + "neither JVM finished a compilation for --warmup-quiet seconds (at most --warmup-max).")
    boolean perftestBw;
    @Option(names = "--qps", split = ",", description = "Send ping-pong over this many queue pairs, round robin (default: ${DEFAULT-VALUE}).")
    List<Integer> qps = List.of(1);
    @Option(names = "--crc", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "MPA CRC32c on both sides (RFC 5044 §7.1) (default: on).")
    boolean crc = true;
    @Option(names = "--peer", description = "HOST:RDMA_PORT:TCP_PORT of a BenchPeer JVM that runs the server half; "
            + "without it both halves run in this JVM.")
    String peer;
    @Option(names = "--same-provider", description = "Both sides on one provider instance "
            + "(default for disni and ffm; soft opens two, each with its own reactor).")
    boolean sameProvider;
    @Option(names = "--warmup-min", description = "Warm-up seconds at least (default: ${DEFAULT-VALUE}).")
    double warmupMin = 1.0;
    @Option(names = "--warmup-max", description = "Warm-up seconds at most, even if the JIT is still busy (default: ${DEFAULT-VALUE}).")
    double warmupMax = 20.0;
    @Option(names = "--warmup-quiet", description = "Seconds without a finished JIT compilation (on either JVM) that end the warm-up, also after --warmup-iters (default: ${DEFAULT-VALUE}).")
    double warmupQuiet = 0.5;
    @Option(names = "--warmup-iters", description = "Fixed warm-up operation count instead (for strace's per-message count).")
    int warmupIters = -1;
    @Option(names = "--hgrm-dir", description = "Write one HdrHistogram .hgrm file (µs) per latency case here.")
    Path hgrmDir;
    @Option(names = "--out", description = "Append the JSON lines to this file.")
    Path out;
    @Option(names = "--run", description = "Run number recorded in each line and file name (default: ${DEFAULT-VALUE}).")
    int run = 1;
    @Option(names = "--label", description = "Free label recorded in each line, e.g. the device (default: none).")
    String label = "";
    @Option(names = "--repeat", description = "Runs of all cases in this JVM (run numbers --run, --run+1, ...), so one "
            + "client JVM serves every case and run (default: ${DEFAULT-VALUE}).")
    int repeat = 1;
    @Option(names = "--between", description = "Shell command run before each case in odd runs and after it in even "
            + "runs ({op}, {size}, {run} replaced), e.g. the perftest counterpart, so the two alternate case by case.")
    String between;
    @Option(names = "--cases-from-stdin", description = "Run the cases named on standard input, one 'OP SIZE RUN' "
            + "line each (or 'OP SIZE RUN N': N operations instead of -n's), until its end, each case's JSON line on standard output when it is done, instead of "
            + "--ops, --sizes and --repeat: a script then decides the order of this JVM's cases among other tools'.")
    boolean casesFromStdin;
    @Option(names = "--peer-jit-log", description = "The peer JVM's -XX:+PrintCompilation output: its lines "
            + "added while a case measures are recorded as peer_compiles_while_measuring (the peer's JIT quiet check).")
    Path peerJitLog;
    @Option(names = "--peer-pid", description = "Process id of the peer JVM on this host: its CPU time while a latency "
            + "case measures (/proc/PID/task/*/schedstat) is recorded beside this JVM's as CPU-seconds per operation.")
    long peerPid = -1;

    private boolean spin;

    public static void main(String[] args) {
        System.exit(new CommandLine(new BenchMain()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        spin = switch (wait.toLowerCase(Locale.ROOT)) {
            case "spin" -> true;
            case "await" -> false;
            default -> throw new CommandLine.ParameterException(new CommandLine(this), "--wait: spin or await");
        };
        if (hgrmDir != null) {
            Files.createDirectories(hgrmDir);
        }
        if (casesFromStdin) {
            return casesFromStdin();
        }
        int first = run;
        for (int rep = 0; rep < repeat; rep++) {
        run = first + rep;
        for (int q : qps) {
            for (String op : ops) {
                for (int size : sizes) {
                    if (q > 1 && !op.equals("send")) {
                        continue;
                    }
                    boolean counterpartFirst = run % 2 == 1;
                    if (counterpartFirst) {
                        runBetween(op, size);
                    }
                    recordCase(op, size, q);
                    if (!counterpartFirst) {
                        runBetween(op, size);
                    }
                }
            }
        }
        }
        return failures == 0 ? 0 : 1;
    }

    /**
     * Runs one case and prints its JSON line (also appended to {@code --out}); a failed case is
     * recorded as an "error" line and counted, and the caller goes on with the next.
     */
    private void recordCase(String op, int size, int q) throws IOException {
        Map<String, Object> r;
        try {
            r = runCase(op.trim().toLowerCase(Locale.ROOT), size, q);
        } catch (Exception e) {
            r = caseRow(op, size, q);
            r.put("error", String.valueOf(e));
            failures++;
        }
        String line = Json.write(r);
        System.out.println(line);
        System.out.flush();
        if (out != null) {
            Files.writeString(out, line + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        }
    }

    /** Operations of the current case when its stdin line names them, else 0 (-n's). */
    private int caseIters;

    /**
     * {@code --cases-from-stdin}: one case per "OP SIZE RUN [N]" line (each QP count of {@code --qps}),
     * until the end of standard input. A malformed line is a usage error, not a case.
     */
    private int casesFromStdin() throws IOException {
        java.io.BufferedReader in = new java.io.BufferedReader(
                new java.io.InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String l = in.readLine(); l != null; l = in.readLine()) {
            String[] t = l.trim().split("\\s+");
            if (t.length == 1 && t[0].isEmpty()) {
                continue;
            }
            if (t.length < 3 || t.length > 4 || !t[1].matches("[0-9]{1,9}") || !t[2].matches("[0-9]{1,9}")
                    || t.length == 4 && !t[3].matches("[1-9][0-9]{0,8}")) {
                throw new CommandLine.ParameterException(new CommandLine(this),
                        "--cases-from-stdin: a line is 'OP SIZE RUN' or 'OP SIZE RUN N', not '" + l + "'");
            }
            run = Integer.parseInt(t[2]);
            caseIters = t.length == 4 ? Integer.parseInt(t[3]) : 0;
            for (int q : qps) {
                if (q > 1 && !t[0].equals("send")) {
                    continue;
                }
                recordCase(t[0], Integer.parseInt(t[1]), q);
            }
        }
        return failures == 0 ? 0 : 1;
    }

    /** Runs {@code --between} for this case (its output goes where this JVM's goes); a failure counts. */
    private void runBetween(String op, int size) throws IOException, InterruptedException {
        if (between == null) {
            return;
        }
        String cmd = between.replace("{op}", op).replace("{size}", Integer.toString(size))
                .replace("{run}", Integer.toString(run));
        Process p = new ProcessBuilder("/bin/bash", "-c", cmd).inheritIO().start();
        if (p.waitFor() != 0) {
            System.err.println("BenchMain: --between failed (exit " + p.exitValue() + "): " + cmd);
            failures++;
        }
    }

    /** Lines of the peer's PrintCompilation log so far (each is one compilation event), or -1. */
    private long peerCompiles() {
        if (peerJitLog == null) {
            return -1;
        }
        try (java.util.stream.Stream<String> lines = Files.lines(peerJitLog, StandardCharsets.ISO_8859_1)) {
            return lines.count();
        } catch (IOException | java.io.UncheckedIOException e) {
            return -1;
        }
    }

    private int failures;

    /** Field {@code i} (1: RDMA port, 2: TCP port) of {@code --peer HOST:RDMA_PORT:TCP_PORT}. */
    private InetSocketAddress peerAddress(int i) {
        String[] p = peer.split(":");
        if (p.length != 3) {
            throw new IllegalArgumentException("--peer: HOST:RDMA_PORT:TCP_PORT, not '" + peer + "'");
        }
        return new InetSocketAddress(p[0], Integer.parseInt(p[i]));
    }

    private int latencyIters(int size) {
        if (caseIters > 0) {
            return caseIters;
        }
        return size <= 4096 ? iters : Math.max(200, (int) ((long) iters * 4096 / size));
    }

    private int bwMsgs(int size) {
        return (int) Math.max(64, Math.min(bwMaxMsgs, bwBytes / Math.max(1, size)));
    }

    /** A measured operation: one latency sample, or one whole bandwidth pass returning nanoseconds. */
    @FunctionalInterface
    interface Step {
        long run() throws Exception;
    }

    /** The fields that name a case, first in its JSON line whether it ran or failed. */
    private Map<String, Object> caseRow(String op, int size, int q) {
        Map<String, Object> r = Json.object();
        r.put("run", run);
        r.put("label", label);
        r.put("transport", transport);
        r.put("op", op);
        r.put("size", size);
        r.put("wait", transport.equals("tcp") ? (spin ? "spin" : "block") : wait);
        r.put("qps", q);
        return r;
    }

    private Map<String, Object> runCase(String op, int size, int q) throws Exception {
        boolean tcp = transport.equals("tcp");
        boolean bw = op.endsWith("-bw") || op.equals("stream");
        Map<String, Object> r = caseRow(op, size, q);
        r.put("crc", !tcp && crc);
        r.put("load1", load1());
        r.put("java", System.getProperty("java.version"));
        if (tcp) {
            TcpBaseline.Mode mode = switch (op) {
                case "pingpong" -> TcpBaseline.Mode.ECHO;
                case "fetch" -> TcpBaseline.Mode.FETCH;
                case "stream" -> TcpBaseline.Mode.SINK;
                default -> throw new IllegalArgumentException("--ops for tcp: pingpong, fetch or stream, not '" + op + "'");
            };
            r.put("peer", peer == null ? "same JVM" : "own JVM");
            try (TcpBaseline t = peer == null ? new TcpBaseline(size, mode, spin)
                    : new TcpBaseline(peerAddress(2), size, mode, spin)) {
                if (bw) {
                    int n = bwMsgs(size);
                    measureBandwidth(r, size, n, () -> t.stream(Math.max(1, n / 8)), () -> t.stream(n));
                } else {
                    Step s = mode == TcpBaseline.Mode.ECHO ? t::pingPong : t::fetch;
                    measureLatency(r, op, size, q, s);
                }
            }
            return r;
        }
        boolean perftest = bw && perftestBw;
        int pn = caseIters > 0 ? caseIters : iters;
        ProviderPingPong.Peer peerMode = switch (op) {
            case "send" -> ProviderPingPong.Peer.ECHO;
            case "write" -> ProviderPingPong.Peer.WRITE_POLL;
            case "send-bw" -> perftest ? ProviderPingPong.Peer.CREDIT_WRITE : ProviderPingPong.Peer.SEND_SINK;
            case "read", "write-bw", "read-bw" -> ProviderPingPong.Peer.NONE;
            default -> throw new IllegalArgumentException("--ops for soft/disni: send, write, read, send-bw, write-bw, "
                    + "read-bw, not '" + op + "'");
        };
        // perftest: the send queue holds its tx depth, the peer's receive queue its receive depth
        int sink = perftest ? ProviderPingPong.perftestRxDepth(pn) : window;
        int depth = perftest ? Math.max(ProviderPingPong.perftestTxDepth(pn), sink) + 16 : bw ? 2 * window + 16 : 16;
        boolean separate = !sameProvider && !transport.equals("disni") && !transport.equals("ffm");
        r.put("peer", peer != null ? "own JVM" : separate ? "same JVM, own provider" : "same JVM, same provider");
        int qpDepth = q > 1 ? 4 : depth;
        // a Read window deeper than the parameters' default ORD asks the peer for that IRD
        boolean readBw = op.equals("read-bw") && !perftest;
        int readDepth = readWindow > 0 ? readWindow : window;
        int readOrd = readBw && readDepth > ConnectionParameters.DEFAULT_IRD_ORD ? readDepth : 0;
        if (readBw) {
            qpDepth = Math.max(qpDepth, readDepth + 16);
        }
        boolean sp = spin;
        try (ProviderFixture f = peer != null
                ? ProviderFixture.remote(transport, address, peerAddress(1), q, size, qpDepth, crc, peerMode, sp, sink,
                        perftest, readOrd)
                : new ProviderFixture(transport, address, q, size, qpDepth, separate, crc, readOrd);
             ProviderPingPong p = new ProviderPingPong(f, spin ? ProviderPingPong.Wait.SPIN : ProviderPingPong.Wait.AWAIT,
                     peerMode, sink)) {
            r.put("crc", f.client.conns[0].info().crc());
            if (perftest) {
                ProviderPingPong.BwOp b = ProviderPingPong.BwOp.valueOf(op.substring(0, op.length() - 3).toUpperCase(Locale.ROOT));
                r.put("semantics", "perftest");
                r.put("window", ProviderPingPong.perftestTxDepth(pn));
                r.put("signal_every", ProviderPingPong.perftestCqMod(size, pn));
                if (b == ProviderPingPong.BwOp.READ) {
                    r.put("ord", f.ord);
                    r.put("device_max_ord", f.device.info().maxQpInitRdAtom());
                }
                if (b == ProviderPingPong.BwOp.SEND) {
                    r.put("rx_depth", sink);
                    r.put("credit_every", f.client.iwarp ? Math.max(1, sink / 3) : 0);
                }
                measurePerftestBandwidth(r, size, pn, (m, len) -> p.bandwidthPerftest(b, m, len));
            } else if (bw) {
                ProviderPingPong.BwOp b = ProviderPingPong.BwOp.valueOf(op.substring(0, op.length() - 3).toUpperCase(Locale.ROOT));
                int n = bwMsgs(size);
                int w = b == ProviderPingPong.BwOp.READ ? Math.max(1, Math.min(readDepth, f.ord)) : window;
                r.put("window", w);
                measureBandwidth(r, size, n, () -> p.bandwidth(b, Math.max(1, n / 8), w, signalEvery), () -> {
                    long t = p.bandwidth(b, n, w, signalEvery);
                    r.put("n", p.lastCount());
                    return t;
                });
            } else {
                Step s = switch (op) {
                    case "send" -> p::sendRtt;
                    case "write" -> p::writeRtt;
                    default -> p::readRtt;
                };
                if (op.equals("write")) {
                    r.put("poll", "memory (last byte), both sides spin");
                }
                measureLatency(r, op, size, q, s);
            }
        }
        return r;
    }

    private void measureLatency(Map<String, Object> r, String op, int size, int q, Step step) throws Exception {
        int n = latencyIters(size);
        warm(r, step, Math.max(1, Math.min(1000, n / 10)));
        Histogram h = new Histogram(3_600_000_000_000L, 3);
        long jit0 = jitMillis();
        long gc0 = gcCount();
        long pc0 = peerCompiles();
        long cpu0 = ownCpuNanos();
        long peerCpu0 = peerCpuNanos();
        insnMarker();
        long wall0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            long s = System.nanoTime();
            step.run();
            h.recordValue(System.nanoTime() - s);
        }
        long wall1 = System.nanoTime();
        insnMarker();
        cpuPerOp(r, n, wall1 - wall0, ownCpuNanos() - cpu0, peerCpu0 < 0 ? -1 : peerCpuNanos() - peerCpu0);
        long jit1 = jitMillis();
        long gc1 = gcCount();
        long pc1 = peerCompiles();
        if (pc0 >= 0 && pc1 >= 0) {
            r.put("peer_compiles_while_measuring", pc1 - pc0);
        }
        r.put("n", n);
        r.put("jit_ms_while_measuring", jit1 - jit0);
        r.put("gc_while_measuring", gc1 - gc0);
        r.put("rtt_min_us", h.getMinValue() / 1e3);
        r.put("rtt_p50_us", h.getValueAtPercentile(50) / 1e3);
        r.put("rtt_p90_us", h.getValueAtPercentile(90) / 1e3);
        r.put("rtt_p99_us", h.getValueAtPercentile(99) / 1e3);
        r.put("rtt_p999_us", h.getValueAtPercentile(99.9) / 1e3);
        r.put("rtt_max_us", h.getMaxValue() / 1e3);
        r.put("rtt_mean_us", h.getMean() / 1e3);
        if (hgrmDir != null) {
            String wait = String.valueOf(r.get("wait"));
            String name = String.format(Locale.ROOT, "%s%s-%s-%s-%dB%s%s-run%d.hgrm", label.isEmpty() ? "" : label + "-",
                    transport, op, wait, size, q > 1 ? "-" + q + "qp" : "", Boolean.FALSE.equals(r.get("crc"))
                            && !transport.equals("tcp") ? "-nocrc" : "", run);
            Path file = hgrmDir.resolve(name);
            try (PrintStream ps = new PrintStream(Files.newOutputStream(file), false, StandardCharsets.UTF_8)) {
                h.outputPercentileDistribution(ps, 1000.0);
            }
            r.put("hgrm", file.toString());
        }
    }

    /**
     * {@code -Djwarp.bench.insnMarker=PROGRAM} (scripts/bench-insn): runs PROGRAM, the guest instruction
     * counter's marker, right before and right after a latency case's measured loop, so that the counts
     * between the two marks are the loop's (plus the marker's own fork and exec, which two run lengths
     * cancel). Without the property nothing runs.
     */
    private static void insnMarker() throws IOException, InterruptedException {
        if (INSN_MARKER == null) {
            return;
        }
        int rc = new ProcessBuilder(INSN_MARKER).inheritIO().start().waitFor();
        if (rc != 0) {
            throw new IOException("instruction marker " + INSN_MARKER + " exited with " + rc);
        }
    }

    private static final String INSN_MARKER = System.getProperty("jwarp.bench.insnMarker");

    /**
     * CPU per operation while a latency case measured: this JVM's (every thread: provider reactors
     * included), the peer's ({@code --peer-pid}; -1 without), their sum, and the cores they kept
     * busy on average (CPU time over wall time), so a spin that wins by burning a core says so.
     */
    private static void cpuPerOp(Map<String, Object> r, int n, long wallNanos, long ownNanos, long peerNanos) {
        if (ownNanos < 0) {
            return;
        }
        r.put("cpu_us_per_op_client", ownNanos / 1e3 / n);
        if (peerNanos >= 0) {
            r.put("cpu_us_per_op_peer", peerNanos / 1e3 / n);
            r.put("cpu_us_per_op", (ownNanos + peerNanos) / 1e3 / n);
            r.put("cpu_cores_busy", (double) (ownNanos + peerNanos) / wallNanos);
        } else {
            r.put("cpu_cores_busy", (double) ownNanos / wallNanos);
        }
    }

    /** This JVM's CPU time, every thread (ns), or -1 when the JVM does not report it. */
    private static long ownCpuNanos() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime();
        }
        return -1;
    }

    /**
     * The peer JVM's CPU time (ns): the sum over its threads of the time on a CPU that
     * /proc/PID/task/TID/schedstat reports in nanoseconds (a thread that ended meanwhile is not
     * counted), or -1.
     */
    private long peerCpuNanos() {
        if (peerPid <= 0) {
            return -1;
        }
        long sum = 0;
        try (java.nio.file.DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc", Long.toString(peerPid), "task"))) {
            for (Path t : tasks) {
                try {
                    String st = Files.readString(t.resolve("schedstat"), StandardCharsets.US_ASCII);
                    sum += Long.parseLong(st.substring(0, st.indexOf(' ')));
                } catch (IOException e) {
                    // the thread ended between the listing and the read
                }
            }
            return sum;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    private void measureBandwidth(Map<String, Object> r, int size, int n, Step warmStep, Step measure)
            throws Exception {
        int fixed = warmupIters;
        if (fixed > 0) {
            // a bandwidth step is a whole pass of n/8 operations: as many as make the operation count
            // (at most 1 GiB), the warm-up jwarp client --warmup runs
            int pass = Math.max(1, n / 8);
            warmupIters = (WindowedPosts.warmupOps(fixed, size) + pass - 1) / pass;
        }
        quietBatch = 1; // so is each step of the JIT-quiet check
        try {
            warm(r, warmStep, 1);
        } finally {
            warmupIters = fixed;
            quietBatch = 1000;
        }
        long jit0 = jitMillis();
        long gc0 = gcCount();
        r.put("n", n);
        double[] mbps = new double[bwPasses];
        double secs = 0;
        int count = n;
        for (int i = 0; i < bwPasses; i++) {
            long nanos = measure.run();
            count = ((Number) r.get("n")).intValue();
            secs += nanos / 1e9;
            mbps[i] = (double) size * count / (nanos / 1e9) / 1e6;
        }
        passes(r, size, mbps, secs, jit0, gc0);
    }

    /** The JIT/GC fields and the median, min and max of the passes' MB/s. */
    private void passes(Map<String, Object> r, int size, double[] mbps, double secs, long jit0, long gc0) {
        r.put("jit_ms_while_measuring", jitMillis() - jit0);
        r.put("gc_while_measuring", gcCount() - gc0);
        r.put("passes", mbps.length);
        r.put("seconds", secs);
        double[] sorted = mbps.clone();
        java.util.Arrays.sort(sorted);
        double median = sorted[sorted.length / 2];
        r.put("mb_per_s", median);
        r.put("mb_per_s_min", sorted[0]);
        r.put("mb_per_s_max", sorted[sorted.length - 1]);
        r.put("msgs_per_s", median * 1e6 / Math.max(1, size));
    }

    /** One perftest-style bandwidth pass of {@code n} operations of {@code len} bytes; returns nanoseconds. */
    @FunctionalInterface
    interface Pass {
        long run(int n, int len) throws Exception;
    }

    /** Warm-up operations {@link #measurePerftestBandwidth} has run in this JVM, by operation. */
    private final Map<String, Long> bwWarmOps = new java.util.HashMap<>();

    /** Bytes per operation of the cheap warm-up passes (the code path does not depend on the length). */
    private static final int WARM_LEN = 64;

    /**
     * {@code --perftest-bw}: the warm-up (64 B passes of {@code n} operations, by count with
     * {@code --warmup-iters} counted per operation over this JVM's cases, then passes of n/8 operations at the full size until
     * neither JVM finished a compilation for {@code --warmup-quiet} seconds ({@link #jitQuiet}); by time otherwise, then one pass at the full size), then {@code --bw-passes} passes of {@code n}
     * operations of {@code size} bytes, the median reported as MB/s (10^6 bytes per second, bytes =
     * {@code n * size}, over first post to last completion, perftest's "BW average").
     */
    private void measurePerftestBandwidth(Map<String, Object> r, int size, int n, Pass pass) throws Exception {
        long t0 = System.nanoTime();
        int len = Math.min(size, WARM_LEN);
        long ops = 0;
        boolean quiet;
        int tail = Math.min(n, Math.max(ProviderPingPong.PERFTEST_TX_DEPTH, n / 8));
        String op = String.valueOf(r.get("op"));
        // the count is per JVM and operation: a later case of the same operation runs code this JVM
        // has compiled already, so it only repeats the quiet check (its fixture is new, its code not)
        long before = bwWarmOps.getOrDefault(op, 0L);
        if (warmupIters >= 0) {
            while (before + ops < warmupIters) {
                pass.run(n, len);
                ops += n;
            }
            // then the JIT quiet check at the measured size: passes of n/8 (at least 128) operations
            // until neither JVM finished a compilation for --warmup-quiet seconds
            JitQuiet q = jitQuiet(0);
            do {
                pass.run(tail, size);
                ops += tail;
            } while (!q.settled());
            quiet = q.quiet();
        } else {
            JitQuiet q = jitQuiet(warmupMin);
            do {
                pass.run(n, len);
                ops += n;
            } while (!q.settled());
            quiet = q.quiet();
            pass.run(tail, size);
            ops += tail;
        }
        r.put("warmup_ms", (System.nanoTime() - t0) / 1_000_000);
        r.put("warmup_ops", before + ops);
        r.put("warmup_ops_this_case", ops);
        r.put("warmup_jit_quiet", quiet);
        bwWarmOps.put(op, before + ops);
        long jit0 = jitMillis();
        long gc0 = gcCount();
        long pc0 = peerCompiles();
        double[] mbps = new double[bwPasses];
        double secs = 0;
        for (int i = 0; i < bwPasses; i++) {
            long nanos = pass.run(n, size);
            secs += nanos / 1e9;
            mbps[i] = (double) size * n / (nanos / 1e9) / 1e6;
        }
        long pc1 = peerCompiles();
        if (pc0 >= 0 && pc1 >= 0) {
            r.put("peer_compiles_while_measuring", pc1 - pc0);
        }
        r.put("n", n);
        passes(r, size, mbps, secs, jit0, gc0);
    }

    /**
     * The JIT-quiet check of a warm-up: settled once neither this JVM (its total compilation time)
     * nor the peer ({@code --peer-jit-log}) finished a compilation for {@code --warmup-quiet}
     * seconds, no earlier than {@code minSeconds} after the start, or after {@code --warmup-max}
     * seconds. One quiet batch is not enough: a compilation in progress counts only when it
     * finishes, and C2 on a large method runs for hundreds of milliseconds, so a short batch
     * looked quiet while the compiler worked (a fresh JVM's 1 MiB write-bw measured 280-838 ms of
     * JIT in a 0.4-0.8 s measurement after a one-pass check). Both counts only grow (-1 when
     * absent), so their sum changes exactly when either does.
     */
    private JitQuiet jitQuiet(double minSeconds) {
        return new JitQuiet(() -> jitMillis() + peerCompiles(), System::nanoTime, (long) (warmupQuiet * 1e9),
                (long) (minSeconds * 1e9), (long) (warmupMax * 1e9));
    }

    /** Steps per batch of the JIT-quiet check after a warm-up by count (1,000 operations; 1 bandwidth pass). */
    private int quietBatch = 1000;

    /**
     * Runs {@code step} in batches until at least {@code --warmup-min} seconds have passed and the
     * JIT compiled nothing for {@code --warmup-quiet} seconds (or {@code --warmup-max} is reached);
     * with {@code --warmup-iters}, exactly that many steps, then {@link #jitQuiet}.
     */
    private void warm(Map<String, Object> r, Step step, int batch) throws Exception {
        long t0 = System.nanoTime();
        long ops = 0;
        boolean quiet = true;
        if (warmupIters >= 0) {
            for (int i = 0; i < warmupIters; i++) {
                step.run();
            }
            ops = warmupIters;
            // then the JIT-quiet check: more batches of 1,000 operations (1 bandwidth pass) until
            // neither JVM finished a compilation for --warmup-quiet seconds
            quiet = false;
            if (warmupIters > 0) {
                JitQuiet q = jitQuiet(0);
                do {
                    for (int i = 0; i < quietBatch; i++) {
                        step.run();
                    }
                    ops += quietBatch;
                } while (!q.settled());
                quiet = q.quiet();
            }
        } else {
            JitQuiet q = jitQuiet(warmupMin);
            do {
                for (int i = 0; i < batch; i++) {
                    step.run();
                }
                ops += batch;
            } while (!q.settled());
            quiet = q.quiet();
        }
        r.put("warmup_ms", (System.nanoTime() - t0) / 1_000_000);
        r.put("warmup_ops", ops);
        r.put("warmup_jit_quiet", quiet);
    }

    /** Total JIT compilation time so far; a non-zero difference means the JIT ran while we measured. */
    private static long jitMillis() {
        java.lang.management.CompilationMXBean c = ManagementFactory.getCompilationMXBean();
        return c != null && c.isCompilationTimeMonitoringSupported() ? c.getTotalCompilationTime() : -1;
    }

    private static long gcCount() {
        long n = 0;
        for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) {
            n += Math.max(0, b.getCollectionCount());
        }
        return n;
    }

    /** The one-minute load average (Linux), or -1. */
    private static double load1() {
        try {
            String s = Files.readString(Path.of("/proc/loadavg"));
            return Double.parseDouble(s.substring(0, s.indexOf(' ')));
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
