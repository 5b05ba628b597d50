package org.jwarp.bench;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.HdrHistogram.Histogram;

/**
 * Fixed-iteration latency and bandwidth runner for places where JMH's time-based iterations are
 * too slow (the TCG guest): the same operations as {@link ProviderLatencyBenchmark} and
 * {@link ProviderBandwidthBenchmark} (RFC 5040 §4.3 Send, RDMA Write, RDMA Read), timed one by
 * one into an HdrHistogram, printed as one JSON object per line:
 *
 * <pre>
 * java -cp benchmarks.jar org.jwarp.bench.BenchMain --provider disni --address 10.77.0.1 \
 *      --ops send,writepoll,read,bw --sizes 8,64,4096 -n 2000 --warmup 2000 --wait spin --label siw0
 * </pre>
 *
 * Latency lines carry the round trip in µs ({@code rtt_*}); perftest's ib_send_lat and
 * ib_write_lat print half a round trip, ib_read_lat a whole Read. Bandwidth lines carry MB/s
 * (10^6 bytes per second) over {@code n} Writes with {@code --window} outstanding.
 */
public final class BenchMain {
    /** The first runs keep warming up until then (JIT compilation is slow under emulation). */
    private static long warmUntil;

    private BenchMain() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> o = new LinkedHashMap<>();
        o.put("provider", "soft");
        o.put("address", "127.0.0.1");
        o.put("ops", "send,write,read");
        o.put("sizes", "64");
        o.put("n", "2000");
        o.put("warmup", "2000");
        o.put("warmup-seconds", "0");
        o.put("wait", "spin");
        o.put("window", "4");
        o.put("label", "");
        o.put("out", "");
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("-h") || a.equals("--help")) {
                System.out.println("options (defaults): " + o);
                return;
            }
            String key = a.replaceFirst("^--?", "");
            if (!o.containsKey(key) || i + 1 == args.length) {
                throw new IllegalArgumentException("unknown option or missing value: " + a + "; known: " + o.keySet());
            }
            o.put(key, args[++i]);
        }
        int n = Integer.parseInt(o.get("n"));
        int warmup = Integer.parseInt(o.get("warmup"));
        warmUntil = System.nanoTime() + (long) (Double.parseDouble(o.get("warmup-seconds")) * 1e9);
        int window = Integer.parseInt(o.get("window"));
        ProviderPingPong.Wait wait = ProviderPingPong.Wait.valueOf(o.get("wait").toUpperCase(Locale.ROOT));
        List<String> lines = new ArrayList<>();
        for (String op : o.get("ops").split(",")) {
            for (String s : o.get("sizes").split(",")) {
                int size = Integer.parseInt(s.trim());
                String line = run(o.get("provider"), o.get("address"), op.trim(), size, n, warmup, wait, window,
                        o.get("label"));
                System.out.println(line);
                System.out.flush();
                lines.add(line);
            }
        }
        if (!o.get("out").isEmpty()) {
            Files.write(Path.of(o.get("out")), lines, StandardCharsets.UTF_8);
        }
    }

    private static String run(String provider, String address, String op, int size, int n, int warmup,
                              ProviderPingPong.Wait wait, int window, String label) throws Exception {
        ProviderPingPong.Peer peer = switch (op) {
            case "send", "write" -> ProviderPingPong.Peer.ECHO;
            case "writepoll" -> ProviderPingPong.Peer.WRITE_POLL;
            case "read", "bw" -> ProviderPingPong.Peer.NONE;
            default -> throw new IllegalArgumentException("ops: unknown '" + op + "' (send, write, writepoll, read, bw)");
        };
        ProviderPingPong.Wait w = op.equals("writepoll") ? ProviderPingPong.Wait.SPIN : wait;
        int depth = op.equals("bw") ? Math.max(16, 2 * window) : 16;
        Histogram h = new Histogram(3_600_000_000_000L, 3);
        long t0;
        long t1;
        long jit0;
        long jit1;
        try (ProviderFixture f = new ProviderFixture(provider, address, 1, size, depth);
             ProviderPingPong p = new ProviderPingPong(f, w, peer)) {
            for (int i = 0; i < warmup || System.nanoTime() - warmUntil < 0; i++) {
                once(p, op, window);
            }
            if (op.equals("bw")) {
                p.drainStream();
            }
            jit0 = jitMillis();
            t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                long s = System.nanoTime();
                once(p, op, window);
                h.recordValue(System.nanoTime() - s);
            }
            if (op.equals("bw")) {
                p.drainStream();
            }
            t1 = System.nanoTime();
            jit1 = jitMillis();
        }
        StringBuilder b = new StringBuilder(256);
        b.append("{\"provider\":\"").append(provider).append("\",\"label\":\"").append(label)
                .append("\",\"address\":\"").append(address).append("\",\"op\":\"").append(op)
                .append("\",\"size\":").append(size).append(",\"n\":").append(n)
                .append(",\"wait\":\"").append(w.name().toLowerCase(Locale.ROOT)).append('"')
                .append(",\"jit_ms_while_measuring\":").append(jit1 - jit0);
        if (op.equals("bw")) {
            double mbps = (double) size * n / ((t1 - t0) / 1e9) / 1e6;
            b.append(",\"window\":").append(window).append(",\"mb_per_s\":").append(fmt(mbps));
        } else {
            b.append(",\"rtt_min_us\":").append(us(h.getMinValue()))
                    .append(",\"rtt_p50_us\":").append(us(h.getValueAtPercentile(50)))
                    .append(",\"rtt_p99_us\":").append(us(h.getValueAtPercentile(99)))
                    .append(",\"rtt_p999_us\":").append(us(h.getValueAtPercentile(99.9)))
                    .append(",\"rtt_max_us\":").append(us(h.getMaxValue()))
                    .append(",\"rtt_mean_us\":").append(fmt(h.getMean() / 1000.0));
        }
        return b.append('}').toString();
    }

    private static void once(ProviderPingPong p, String op, int window) throws Exception {
        switch (op) {
            case "send" -> p.sendRtt();
            case "write" -> p.writeRtt();
            case "writepoll" -> p.writePollRtt();
            case "read" -> p.readRtt();
            default -> p.writeStream(window);
        }
    }

    /** Total JIT compilation time so far; a non-zero difference means the JIT ran while we measured. */
    private static long jitMillis() {
        java.lang.management.CompilationMXBean c = java.lang.management.ManagementFactory.getCompilationMXBean();
        return c != null && c.isCompilationTimeMonitoringSupported() ? c.getTotalCompilationTime() : -1;
    }

    private static String us(long nanos) {
        return fmt(nanos / 1000.0);
    }

    private static String fmt(double v) {
        return String.format(Locale.ROOT, "%.3f", v);
    }
}
