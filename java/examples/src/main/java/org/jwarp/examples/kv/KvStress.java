package org.jwarp.examples.kv;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.ProtectionDomain;
import org.jwarp.verbs.Rdma;
import org.jwarp.verbs.RdmaProvider;

/**
 * Runs the key-value store as a stress test: a server, {@code connections} clients each doing
 * {@code ops} GETs and PUTs with every byte verified, optional CPU hog threads, and a report of
 * throughput and latency (p50, p99, max, operations over 10 ms).
 *
 * <pre>
 * java -jar java/examples/target/jwarp-kv.jar [--provider soft|disni] [--address A] [--port P]
 *      [--connections N] [--ops N] [--server-threads N] [--hogs N] [--keys N] [--max-value BYTES]
 *      [--get-percent P] [--timeout SECS] [--seed S] [--warmup N]
 * </pre>
 */
public final class KvStress {
    private KvStress() {
    }

    /** A stress run's settings; {@link #defaults()} is 8 connections x 10,000 operations on soft over loopback. */
    public record Options(String provider, String address, int port, int connections, int ops, int serverThreads,
                          int hogs, int keysPerConnection, int maxBody, int getPercent, Duration timeout, long seed,
                          int warmup) {
        public static Options defaults() {
            return new Options("soft", "127.0.0.1", 0, 8, 10_000, 2, 0, 16, 2048, 50, Duration.ofMinutes(10), 1, 0);
        }

        /** Each client first does {@code n} operations that the report leaves out (JIT warm-up). */
        public Options withWarmup(int n) {
            return new Options(provider, address, port, connections, ops, serverThreads, hogs, keysPerConnection,
                    maxBody, getPercent, timeout, seed, n);
        }

        public Options with(String provider, String address) {
            return new Options(provider, address, port, connections, ops, serverThreads, hogs, keysPerConnection,
                    maxBody, getPercent, timeout, seed, warmup);
        }

        public Options withLoad(int connections, int ops, int serverThreads, int hogs) {
            return new Options(provider, address, port, connections, ops, serverThreads, hogs, keysPerConnection,
                    maxBody, getPercent, timeout, seed, warmup);
        }

        public Options withTimeout(Duration t) {
            return new Options(provider, address, port, connections, ops, serverThreads, hogs, keysPerConnection,
                    maxBody, getPercent, t, seed, warmup);
        }
    }

    /**
     * What a run did after the warm-up: operations, wall time, latency percentiles in nanoseconds,
     * and the bytes the client threads allocated per operation (-1 where the JVM cannot say).
     */
    public record Report(long ops, long gets, long puts, long readBytes, long nanos, long p50, long p99, long max,
                         long over10ms, double allocatedPerOp) {
        public double opsPerSecond() {
            return ops * 1e9 / nanos;
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%d ops in %.2f s: %.0f ops/s; latency p50 %.3f ms, p99 %.3f ms, "
                            + "max %.3f ms; %d ops over 10 ms; %d GETs (%d bytes RDMA-Read, every byte verified), "
                            + "%d PUTs (two-SGE Write + commit Send, verified by the server); "
                            + "client threads allocated %.1f bytes per op",
                    ops, nanos / 1e9, opsPerSecond(), p50 / 1e6, p99 / 1e6, max / 1e6, over10ms, gets, readBytes, puts,
                    allocatedPerOp);
        }
    }

    /**
     * Runs the stress: starts the server and the hog threads, connects every client asynchronously,
     * runs them to the end, closes everything and checks that the server saw no failure and
     * leaked no slot.
     *
     * @throws KvException the first client or server failure, the others suppressed; or the run
     *                     did not end within the timeout (the message says where each client is)
     */
    public static Report run(Options o) throws Exception {
        List<Thread> hogs = startHogs(o.hogs());
        try (RdmaProvider provider = Rdma.open(o.provider())) {
            InetAddress at = InetAddress.getByName(o.address());
            KvServer.Config cfg = new KvServer.Config(o.connections(), o.keysPerConnection(), o.maxBody(),
                    o.serverThreads());
            KvServer server = KvServer.start(provider, new InetSocketAddress(at, o.port()), cfg);
            Report r;
            try (Device dev = provider.open(at)) {
                ProtectionDomain pd = dev.allocateProtectionDomain();
                r = runClients(o, server, dev, pd);
                pd.close();
            } catch (Exception | Error e) {
                server.close();
                server.failures().forEach(e::addSuppressed);
                throw e;
            }
            server.close();
            List<KvException> failures = server.failures();
            if (!failures.isEmpty()) {
                KvException first = new KvException(failures.size() + " server failure(s), the first: "
                        + failures.get(0).getMessage(), failures.get(0));
                failures.stream().skip(1).forEach(first::addSuppressed);
                throw first;
            }
            if (server.leakedSlots() != 0) {
                throw new KvException("the server leaked " + server.leakedSlots() + " value slots");
            }
            return r;
        } finally {
            stopHogs(hogs);
        }
    }

    private static Report runClients(Options o, KvServer server, Device dev, ProtectionDomain pd) throws Exception {
        Duration setup = Duration.ofSeconds(60);
        List<CompletableFuture<KvClient>> connecting = new ArrayList<>();
        for (int i = 0; i < o.connections(); i++) {
            connecting.add(KvClient.connect(dev, pd, server.address(), o.maxBody(), setup));
        }
        List<KvClient> clients = new ArrayList<>();
        KvException connectFailure = null;
        for (CompletableFuture<KvClient> f : connecting) {
            try {
                KvClient c = f.get(setup.toSeconds() + 10, TimeUnit.SECONDS);
                c.inspector = server::describeAt;
                clients.add(c);
            } catch (ExecutionException | TimeoutException e) {
                f.cancel(true);
                KvException k = new KvException("connecting client " + connecting.indexOf(f) + " to "
                        + server.address() + ": " + (e.getCause() == null ? e : e.getCause()), e);
                if (connectFailure == null) {
                    connectFailure = k;
                } else {
                    connectFailure.addSuppressed(k);
                }
            }
        }
        try {
            if (connectFailure != null) {
                throw connectFailure;
            }
            return drive(o, clients);
        } finally {
            for (KvClient c : clients) {
                c.close();
            }
        }
    }

    private static Report drive(Options o, List<KvClient> clients) throws Exception {
        long[][] latencies = new long[clients.size()][o.ops()];
        long[] gets = new long[clients.size()];
        long[] allocated = new long[clients.size()];
        Throwable[] errors = new Throwable[clients.size()];
        List<Thread> threads = new ArrayList<>();
        CountDownLatch warm = new CountDownLatch(clients.size());
        long start = System.nanoTime();
        for (int i = 0; i < clients.size(); i++) {
            int c = i;
            Thread t = new Thread(() -> {
                try {
                    clientLoop(clients.get(c), o, new long[o.warmup()], 1);
                    warm.countDown();
                    warm.await();
                    long before = allocatedBytes();
                    gets[c] = clientLoop(clients.get(c), o, latencies[c], 2);
                    long after = allocatedBytes();
                    allocated[c] = before < 0 || after < 0 ? -1 : after - before;
                } catch (Throwable e) {
                    errors[c] = e;
                    warm.countDown();
                }
            }, "kv-client-" + i);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
        long deadline = start + o.timeout().toNanos();
        warm.await(o.timeout().toNanos(), TimeUnit.NANOSECONDS);
        long t0 = System.nanoTime();
        for (Thread t : threads) {
            t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
        }
        long nanos = System.nanoTime() - t0;
        StringBuilder stuck = new StringBuilder();
        for (int i = 0; i < threads.size(); i++) {
            if (threads.get(i).isAlive()) {
                stuck.append("\n  ").append(clients.get(i).describe());
            }
        }
        if (stuck.length() > 0) {
            throw new KvException("the stress did not end within " + o.timeout().toSeconds() + " s:" + stuck);
        }
        KvException failed = null;
        for (Throwable e : errors) {
            if (e != null) {
                if (failed == null) {
                    failed = e instanceof KvException k ? k : new KvException("client: " + e, e);
                } else {
                    failed.addSuppressed(e);
                }
            }
        }
        if (failed != null) {
            throw failed;
        }
        long[] all = Arrays.stream(latencies).flatMapToLong(Arrays::stream).sorted().toArray();
        long over = Arrays.stream(all).filter(l -> l > 10_000_000L).count();
        long getCount = Arrays.stream(gets).sum();
        long readBytes = clients.stream().mapToLong(KvClient::readBytes).sum();
        double perOp = Arrays.stream(allocated).anyMatch(a -> a < 0) ? -1
                : (double) Arrays.stream(allocated).sum() / all.length;
        return new Report(all.length, getCount, all.length - getCount, readBytes, nanos,
                all[(int) ((all.length - 1) * 0.50)], all[(int) ((all.length - 1) * 0.99)], all[all.length - 1], over,
                perOp);
    }

    /** Bytes the calling thread has allocated so far, or -1 where the JVM does not count them. */
    private static long allocatedBytes() {
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        if (mx instanceof com.sun.management.ThreadMXBean hs && hs.isThreadAllocatedMemorySupported()) {
            return hs.getCurrentThreadAllocatedBytes();
        }
        return -1;
    }

    /** One client's closed loop (stream 1: warm-up, 2: measured); returns how many GETs it did. */
    private static long clientLoop(KvClient c, Options o, long[] latencies, int stream) throws Exception {
        SplittableRandom rng = new SplittableRandom((o.seed() * 1_000_003L + c.index()) * 31 + stream);
        long gets = 0;
        for (int i = 0; i < latencies.length; i++) {
            long t = System.nanoTime();
            if (rng.nextInt(100) < o.getPercent()) {
                c.get(rng.nextInt(c.totalKeys()));
                gets++;
            } else {
                c.put(c.firstKey() + rng.nextInt(c.ownKeys()));
            }
            latencies[i] = System.nanoTime() - t;
        }
        return gets;
    }

    private static volatile boolean hogsRun;
    private static volatile long hogSink;

    /** Threads that burn CPU until stopped: contention for the provider's and the application's threads. */
    static List<Thread> startHogs(int n) {
        hogsRun = true;
        List<Thread> hogs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Thread t = new Thread(() -> {
                long x = System.nanoTime();
                while (hogsRun) {
                    for (int k = 0; k < 10_000; k++) {
                        x = x * 6364136223846793005L + 1442695040888963407L;
                    }
                }
                hogSink = x;
            }, "kv-hog-" + i);
            t.setDaemon(true);
            t.start();
            hogs.add(t);
        }
        return hogs;
    }

    static void stopHogs(List<Thread> hogs) throws InterruptedException {
        hogsRun = false;
        for (Thread t : hogs) {
            t.join();
        }
    }

    private static final String USAGE = """
            usage: KvStress [--provider soft|disni] [--address A] [--port P] [--connections N] [--ops N]
                            [--server-threads N] [--hogs N] [--keys N] [--max-value BYTES] [--get-percent P]
                            [--timeout SECS] [--seed S] [--warmup N]
              An RDMA key-value store (one shared receive queue, server threads on completion channels,
              GET = Send + RDMA Read of a shared region, PUT = two-SGE Write + inline commit Send) under load.
              Defaults: soft on 127.0.0.1, 8 connections x 10000 ops, 2 server threads, 0 hogs, 16 keys per
              connection, values up to 2048 bytes, 50% GETs, 600 s timeout, 5000 warm-up ops per connection
              (verified like the others, left out of the figures). --port 0: any free port.
              Prints ops/s, latency p50/p99/max, the operations over 10 ms and the bytes the client threads
              allocated per operation; exit 1 when anything failed.""";

    /** The command line: see the class comment; exit 0 when every operation passed, 1 otherwise, 2 on bad usage. */
    public static void main(String[] args) {
        Options d = Options.defaults();
        String provider = d.provider();
        String address = d.address();
        int port = d.port();
        int connections = d.connections();
        int ops = d.ops();
        int threads = d.serverThreads();
        int hogs = d.hogs();
        int keys = d.keysPerConnection();
        int maxBody = d.maxBody();
        int getPercent = d.getPercent();
        long timeout = d.timeout().toSeconds();
        long seed = d.seed();
        int warmup = 5000;
        try {
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                if (a.equals("-h") || a.equals("--help")) {
                    System.out.println(USAGE);
                    return;
                }
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException(a + " needs a value");
                }
                String v = args[++i];
                switch (a) {
                    case "--provider" -> provider = v;
                    case "--address" -> address = v;
                    case "--port" -> port = Integer.parseInt(v);
                    case "--connections" -> connections = Integer.parseInt(v);
                    case "--ops" -> ops = Integer.parseInt(v);
                    case "--server-threads" -> threads = Integer.parseInt(v);
                    case "--hogs" -> hogs = Integer.parseInt(v);
                    case "--keys" -> keys = Integer.parseInt(v);
                    case "--max-value" -> maxBody = Integer.parseInt(v);
                    case "--get-percent" -> getPercent = Integer.parseInt(v);
                    case "--timeout" -> timeout = Long.parseLong(v);
                    case "--seed" -> seed = Long.parseLong(v);
                    case "--warmup" -> warmup = Integer.parseInt(v);
                    default -> throw new IllegalArgumentException("unknown option " + a);
                }
            }
            if (connections < 1 || ops < 1 || threads < 1 || hogs < 0 || keys < 1 || maxBody < 1 || getPercent < 0
                    || getPercent > 100 || timeout < 1 || warmup < 0) {
                throw new IllegalArgumentException("counts must be >= 1 (hogs, warmup >= 0), --get-percent 0..100");
            }
        } catch (IllegalArgumentException e) {
            System.err.println("KvStress: " + e.getMessage());
            System.err.println(USAGE);
            System.exit(2);
            return;
        }
        Options o = new Options(provider, address, port, connections, ops, threads, hogs, keys, maxBody, getPercent,
                Duration.ofSeconds(timeout), seed, warmup);
        System.out.printf(Locale.ROOT, "kv: provider %s on %s, %d connections x %d ops (%d%% GET) after %d warm-up ops, "
                + "%d server threads, %d hog threads%n", provider, address, connections, ops, getPercent, warmup, threads,
                hogs);
        try {
            Report r = run(o);
            System.out.println("kv: " + r);
        } catch (Exception e) {
            System.err.println("kv: FAILED: " + e.getMessage());
            e.printStackTrace();
            System.exit(1);
        }
    }
}
