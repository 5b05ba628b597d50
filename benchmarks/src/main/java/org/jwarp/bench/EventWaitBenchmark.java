package org.jwarp.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.jwarp.verbs.Access;
import org.jwarp.verbs.CompletionChannel;
import org.jwarp.verbs.CompletionQueue;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.ProtectionDomain;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.Rdma;
import org.jwarp.verbs.RdmaProvider;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Event-driven waiting on the soft provider, defaults against {@code -Djwarp.soft.pollSpinMicros=0}
 * (receive polling off). A middleware-shaped request–response workload over loopback: {@code
 * --conns} connections, one client thread each that sends an 8-byte request Send, awaits the
 * server's reply Send ({@code CompletionQueue.await}) and then RDMA-Reads a {@code --value}-byte
 * value from one server region shared by every connection; {@code --server-threads} server
 * threads sleep on completion channels (the poll–arm–poll rule) and answer each request with a
 * Send. One operation is request, reply and Read; its latency runs from the request's post to the
 * Read's completion.
 *
 * <p>The driver forks {@code --runs} pairs of JVMs, defaults and spin0 alternating (odd runs
 * defaults first), each warming up for {@code --warmup} operations before it measures {@code
 * --ops}; it prints each fork's throughput, p50/p99/max and operations over 10 ms per 100,000,
 * then per-run ratios defaults ÷ spin0 with min/median/max, and the load average at each fork.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar org.jwarp.bench.EventWaitBenchmark --runs 3
 * </pre>
 */
@Command(name = "EventWaitBenchmark", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Send/Read request-response over completion channels: soft defaults vs pollSpinMicros=0.")
public final class EventWaitBenchmark implements Callable<Integer> {
    @Option(names = "--runs", description = "Pairs of forks (default: ${DEFAULT-VALUE}).")
    int runs = 3;
    @Option(names = "--conns", description = "Connections, one client thread each (default: ${DEFAULT-VALUE}).")
    int conns = 8;
    @Option(names = "--server-threads", description = "Server threads, one completion channel each (default: ${DEFAULT-VALUE}).")
    int serverThreads = 2;
    @Option(names = "--ops", description = "Measured operations per fork (default: ${DEFAULT-VALUE}).")
    int ops = 100_000;
    @Option(names = "--warmup", description = "Warm-up operations per fork (default: ${DEFAULT-VALUE}).")
    int warmup = 20_000;
    @Option(names = "--value", description = "Bytes of the value each operation Reads (default: ${DEFAULT-VALUE}).")
    int value = 64;
    @Option(names = "--worker", description = "Run one fork here with this JVM's jwarp.soft.* properties and print its result line.")
    boolean worker;
    @Option(names = "--out", description = "Also write the summary to this file.")
    Path out;

    static final long STALL_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final int KEYS = 256;
    private static final int REQ = 8;
    private static final long TIMEOUT_SECONDS = 30;

    public static void main(String[] args) {
        System.exit(new CommandLine(new EventWaitBenchmark()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        return worker ? work() : drive();
    }

    // --- one fork ------------------------------------------------------------------------------

    private int work() throws Exception {
        String host = InetAddress.getLoopbackAddress().getHostAddress();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        try (RdmaProvider sp = Rdma.open("soft");
             RdmaProvider cp = Rdma.open("soft");
             Device server = sp.open(InetAddress.getByName(host));
             Device client = cp.open(InetAddress.getByName(host))) {
            EnumSet<Access> remoteRead = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ);
            ProtectionDomain spd = server.allocateProtectionDomain();
            MemoryRegion values = spd.register(ByteBuffer.allocateDirect(KEYS * value), remoteRead);
            for (int k = 0; k < KEYS; k++) {
                values.buffer().putLong(k * value, valueOf(k));
            }
            CompletionChannel[] channels = new CompletionChannel[serverThreads];
            for (int i = 0; i < serverThreads; i++) {
                channels[i] = server.createCompletionChannel();
            }
            ProtectionDomain cpd = client.allocateProtectionDomain();
            Listener listener = server.connectionManager().listen(new InetSocketAddress(host, 0), conns);
            ServerConn[] sc = new ServerConn[conns];
            ClientConn[] cc = new ClientConn[conns];
            for (int i = 0; i < conns; i++) {
                int idx = i;
                CompletionQueue scq = server.createCompletionQueue(64, channels[i % serverThreads]);
                CompletableFuture<Connection> acc = CompletableFuture.supplyAsync(() -> {
                    try {
                        return listener.next(Duration.ofSeconds(TIMEOUT_SECONDS))
                                .accept(QueuePairConfig.of(spd, scq, 16), ConnectionParameters.builder().build());
                    } catch (Exception e) {
                        throw new IllegalStateException("accept " + idx, e);
                    }
                });
                CompletionQueue ccq = client.createCompletionQueue(64);
                Connection c = client.connectionManager().connect(listener.localAddress(), QueuePairConfig.of(cpd, ccq, 16),
                        ConnectionParameters.builder().build(), Duration.ofSeconds(TIMEOUT_SECONDS));
                sc[i] = new ServerConn(acc.get(TIMEOUT_SECONDS, TimeUnit.SECONDS), scq, spd);
                cc[i] = new ClientConn(c, ccq, cpd, values.address(), values.rkey());
            }
            for (ServerConn s : sc) {
                s.cq.requestNotify(false);
            }
            List<Thread> servers = new ArrayList<>();
            for (int t = 0; t < serverThreads; t++) {
                CompletionChannel ch = channels[t];
                Thread th = new Thread(() -> serve(ch, sc, stop, failure), "server-" + t);
                th.setDaemon(true);
                th.start();
                servers.add(th);
            }
            // warm-up by operation count (the JIT is slow on a shared machine), then the measured run
            AtomicLong warmLeft = new AtomicLong(warmup);
            CyclicBarrier measured = new CyclicBarrier(conns + 1);
            int per = Math.max(1, ops / conns);
            long[][] lat = new long[conns][per];
            List<Thread> clients = new ArrayList<>();
            for (int i = 0; i < conns; i++) {
                ClientConn c = cc[i];
                long[] mine = lat[i];
                Thread th = new Thread(() -> {
                    try {
                        while (warmLeft.getAndDecrement() > 0 && failure.get() == null) {
                            c.op(-1, mine);
                        }
                        measured.await(5, TimeUnit.MINUTES);
                        for (int k = 0; k < per && failure.get() == null; k++) {
                            c.op(k, mine);
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                        measured.reset();
                    }
                }, "client-" + i);
                th.start();
                clients.add(th);
            }
            measured.await(5, TimeUnit.MINUTES);
            long t0 = System.nanoTime();
            for (Thread th : clients) {
                th.join();
            }
            long wall = System.nanoTime() - t0;
            stop.set(true);
            for (Thread th : servers) {
                th.join(2_000);
            }
            if (failure.get() != null) {
                failure.get().printStackTrace();
                return 1;
            }
            long[] all = new long[conns * per];
            int n = 0;
            long stalls = 0;
            for (long[] a : lat) {
                for (long v : a) {
                    all[n++] = v;
                    if (v > STALL_NANOS) {
                        stalls++;
                    }
                }
            }
            Arrays.sort(all);
            System.out.printf(Locale.ROOT, "RESULT ops=%d secs=%.3f opsps=%.0f p50us=%.1f p99us=%.1f maxus=%.1f stalls10ms=%d%n",
                    n, wall / 1e9, n / (wall / 1e9), all[n / 2] / 1e3, all[(int) (n * 0.99)] / 1e3, all[n - 1] / 1e3, stalls);
            for (ClientConn c : cc) {
                c.conn.close();
            }
            for (ServerConn s : sc) {
                s.conn.close();
            }
            return 0;
        }
    }

    private static long valueOf(int key) {
        return 0x5EED_0000_0000L + key * 0x9E37_79B9L;
    }

    /** One server side: its CQ (on a channel), receive buffers and reply buffer. */
    private static final class ServerConn {
        final Connection conn;
        final CompletionQueue cq;
        final MemoryRegion rx;
        final MemoryRegion reply;
        final SendRequest wr = new SendRequest();
        int replies;

        ServerConn(Connection conn, CompletionQueue cq, ProtectionDomain pd) throws Exception {
            this.conn = conn;
            this.cq = cq;
            rx = pd.register(ByteBuffer.allocateDirect(4 * REQ), EnumSet.of(Access.LOCAL_WRITE));
            reply = pd.register(ByteBuffer.allocateDirect(REQ), EnumSet.of(Access.LOCAL_WRITE));
            for (int i = 0; i < 4; i++) {
                conn.queuePair().postRecv(i, rx, i * REQ, REQ);
            }
        }

        /** A request arrived in slot {@code slot}: repost, answer with the key (every 4th reply signaled). */
        void answer(int slot) throws Exception {
            long key = rx.buffer().getLong(slot * REQ);
            conn.queuePair().postRecv(slot, rx, slot * REQ, REQ);
            reply.buffer().putLong(0, key);
            wr.send(key, reply, 0, REQ);
            wr.signaled = (++replies & 3) == 0;
            conn.queuePair().postSend(wr);
        }
    }

    /** A server thread: sleeps on its channel, then polls, arms and polls the CQ that raised the event. */
    private static void serve(CompletionChannel ch, ServerConn[] sc, AtomicBoolean stop, AtomicReference<Throwable> failure) {
        WorkCompletion[] wcs = new WorkCompletion[16];
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new WorkCompletion();
        }
        try {
            while (!stop.get()) {
                CompletionQueue cq = ch.next(100, TimeUnit.MILLISECONDS);
                if (cq == null) {
                    continue;
                }
                ServerConn s = null;
                for (ServerConn x : sc) {
                    if (x.cq == cq) {
                        s = x;
                    }
                }
                int n;
                do {
                    n = cq.poll(wcs, wcs.length);
                    handle(s, wcs, n);
                } while (n > 0);
                cq.requestNotify(false);
                while ((n = cq.poll(wcs, wcs.length)) > 0) {
                    handle(s, wcs, n);
                }
            }
        } catch (Throwable e) {
            failure.compareAndSet(null, e);
        }
    }

    private static void handle(ServerConn s, WorkCompletion[] wcs, int n) throws Exception {
        for (int i = 0; i < n; i++) {
            WorkCompletion wc = wcs[i];
            if (wc.status != WcStatus.SUCCESS) {
                throw new IllegalStateException("server completion " + wc);
            }
            if (wc.opcode == WcOpcode.RECV) {
                s.answer((int) wc.wrId);
            }
        }
    }

    /** One client side: request, reply and value buffers; awaits its own CQ. */
    private final class ClientConn {
        final Connection conn;
        final CompletionQueue cq;
        final MemoryRegion req;
        final MemoryRegion rx;
        final MemoryRegion val;
        final long valuesAddr;
        final int valuesKey;
        final SendRequest wr = new SendRequest();
        final WorkCompletion[] wcs = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion(), new WorkCompletion()};
        long next;

        ClientConn(Connection conn, CompletionQueue cq, ProtectionDomain pd, long valuesAddr, int valuesKey) throws Exception {
            this.conn = conn;
            this.cq = cq;
            this.valuesAddr = valuesAddr;
            this.valuesKey = valuesKey;
            req = pd.register(ByteBuffer.allocateDirect(REQ), EnumSet.of(Access.LOCAL_WRITE));
            rx = pd.register(ByteBuffer.allocateDirect(REQ), EnumSet.of(Access.LOCAL_WRITE));
            val = pd.register(ByteBuffer.allocateDirect(value), EnumSet.of(Access.LOCAL_WRITE));
            conn.queuePair().postRecv(0, rx, 0, REQ);
        }

        /** Request, reply, Read; records the latency at {@code slot} (skipped when negative). */
        void op(int slot, long[] lat) throws Exception {
            int key = (int) (next++ % KEYS);
            long t0 = System.nanoTime();
            req.buffer().putLong(0, key);
            conn.queuePair().postSend(wr.send(key, req, 0, REQ));
            waitFor(WcOpcode.RECV, WcOpcode.SEND);
            if (rx.buffer().getLong(0) != key) {
                throw new IllegalStateException("reply for key " + rx.buffer().getLong(0) + ", expected " + key);
            }
            conn.queuePair().postRecv(0, rx, 0, REQ);
            conn.queuePair().postSend(wr.read(key, val, 0, value, valuesAddr + (long) key * value, valuesKey));
            waitFor(WcOpcode.RDMA_READ, null);
            if (val.buffer().getLong(0) != valueOf(key)) {
                throw new IllegalStateException("value of key " + key + " read wrong");
            }
            if (slot >= 0) {
                lat[slot] = System.nanoTime() - t0;
            }
        }

        /** Awaits completions until {@code a} and {@code b} (if not null) were seen. */
        private void waitFor(WcOpcode a, WcOpcode b) throws Exception {
            boolean gotA = false;
            boolean gotB = b == null;
            while (!gotA || !gotB) {
                int n = cq.await(wcs, wcs.length, TIMEOUT_SECONDS, TimeUnit.SECONDS);
                if (n == 0) {
                    throw new IllegalStateException("no completion within " + TIMEOUT_SECONDS + " s on " + conn);
                }
                for (int i = 0; i < n; i++) {
                    WorkCompletion wc = wcs[i];
                    if (wc.status != WcStatus.SUCCESS) {
                        throw new IllegalStateException("client completion " + wc);
                    }
                    gotA |= wc.opcode == a;
                    gotB |= wc.opcode == b;
                }
            }
        }
    }

    // --- the driver ----------------------------------------------------------------------------

    private static final String[] MODES = {"defaults", "spin0"};

    private int drive() throws Exception {
        List<Map<String, String>> res = new ArrayList<>();
        StringBuilder sb = new StringBuilder();
        String javaBin = ProcessHandle.current().info().command().orElse("java");
        for (int r = 1; r <= runs; r++) {
            String[] order = r % 2 == 1 ? MODES : new String[] {MODES[1], MODES[0]};
            for (String mode : order) {
                List<String> cmd = new ArrayList<>(List.of(javaBin, "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED",
                        "-Xmx512m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"));
                if (mode.equals("spin0")) {
                    cmd.add("-Djwarp.soft.pollSpinMicros=0");
                }
                cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), EventWaitBenchmark.class.getName(),
                        "--worker", "--conns", "" + conns, "--server-threads", "" + serverThreads, "--ops", "" + ops,
                        "--warmup", "" + warmup, "--value", "" + value));
                String load = loadAverage();
                Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
                Map<String, String> m = null;
                try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = in.readLine()) != null) {
                        if (line.startsWith("RESULT ")) {
                            m = new LinkedHashMap<>();
                            for (String kv : line.substring(7).split(" ")) {
                                String[] x = kv.split("=", 2);
                                m.put(x[0], x[1]);
                            }
                        } else {
                            System.err.println("  [" + mode + "] " + line);
                        }
                    }
                }
                int rc = p.waitFor();
                if (rc != 0 || m == null) {
                    System.err.println("fork " + mode + " of run " + r + " failed (exit " + rc + ")");
                    return 1;
                }
                m.put("run", "" + r);
                m.put("mode", mode);
                m.put("load", load + ".." + loadAverage());
                res.add(m);
                String line = String.format(Locale.ROOT, "run %d %-8s %8s ops/s  p50 %7s us  p99 %8s us  max %9s us  "
                                + "stalls>10ms/100k %6.1f  load1 %s", r, mode, m.get("opsps"), m.get("p50us"),
                        m.get("p99us"), m.get("maxus"), stallsPer100k(m), m.get("load"));
                System.out.println(line);
                sb.append(line).append('\n');
            }
        }
        sb.append(summary(res));
        System.out.print(summary(res));
        if (out != null) {
            Files.writeString(out, sb.toString());
        }
        return 0;
    }

    private static double stallsPer100k(Map<String, String> m) {
        return Long.parseLong(m.get("stalls10ms")) * 100_000.0 / Long.parseLong(m.get("ops"));
    }

    private String summary(List<Map<String, String>> res) {
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT,
                "%n%d conns, %d server threads on completion channels, %d warm-up + %d measured ops per fork, %d B Reads%n",
                conns, serverThreads, warmup, ops, value));
        for (String mode : MODES) {
            List<Map<String, String>> mine = res.stream().filter(m -> m.get("mode").equals(mode)).toList();
            sb.append(String.format(Locale.ROOT, "%-8s median of %d: %8.0f ops/s  p50 %7.1f us  p99 %8.1f us  max %9.1f us  "
                            + "stalls>10ms/100k %.1f%n", mode, mine.size(), median(mine, "opsps"), median(mine, "p50us"),
                    median(mine, "p99us"), median(mine, "maxus"),
                    mine.stream().mapToDouble(EventWaitBenchmark::stallsPer100k).sorted().toArray()[mine.size() / 2]));
        }
        sb.append("defaults / spin0 per run (min / median / max):\n");
        for (String k : List.of("opsps", "p50us", "p99us")) {
            double[] ratios = new double[runs];
            for (int r = 1; r <= runs; r++) {
                ratios[r - 1] = value(res, r, "defaults", k) / value(res, r, "spin0", k);
            }
            Arrays.sort(ratios);
            sb.append(String.format(Locale.ROOT, "  %-6s %.3f / %.3f / %.3f%n", k, ratios[0], ratios[runs / 2],
                    ratios[runs - 1]));
        }
        return sb.toString();
    }

    private static double value(List<Map<String, String>> res, int run, String mode, String key) {
        for (Map<String, String> m : res) {
            if (m.get("run").equals("" + run) && m.get("mode").equals(mode)) {
                return Double.parseDouble(m.get(key));
            }
        }
        throw new IllegalStateException("no " + mode + " result for run " + run);
    }

    private static double median(List<Map<String, String>> ms, String key) {
        double[] v = ms.stream().mapToDouble(m -> Double.parseDouble(m.get(key))).sorted().toArray();
        return v[v.length / 2];
    }

    private static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
        } catch (Exception e) {
            return "?";
        }
    }
}
