package org.jwarp.cli;

import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.ConnectionRequest;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.Rdma;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaProvider;
import org.jwarp.verbs.RdmaTimeoutException;
import org.jwarp.ground.RtrType;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code jwarp server}: the passive side of an rping/ib_send_lat-style test over any provider.
 * It listens, accepts each connection with RFC 6581 parameters and answers the client's
 * workload: it echoes Sends (latency), acknowledges Sends with a zero-length Send (bandwidth
 * credits), and exposes one registered buffer for the client's RDMA Writes and Reads, whose
 * address, STag and length travel in the accept private data (RFC 5044 §7.1 private data).
 *
 * <p>Connections are served concurrently, each on its own thread, up to {@code --max-connections};
 * a request beyond them, a hello asking for more buffer memory than {@code --max-connection-memory}
 * or than is left of {@code --max-memory}, and a peer-to-peer request to a server without
 * {@code --p2p} (RFC 6581 §9.2) get an MPA Reject (R=1, RFC 5044 §7.1.5) with the reason at once.
 */
@Command(name = "server", mixinStandardHelpOptions = true, resourceBundle = "org.jwarp.cli.ServerCommand",
        description = "Accept RDMA connections and serve a client's send/write/read test (rping-like).")
public final class ServerCommand implements Callable<Integer> {
    @Option(names = "--bind", description = "Local address to listen on (default: ${DEFAULT-VALUE}).")
    String bind = "0.0.0.0";
    @Option(names = "--port", description = "TCP port (default: ${DEFAULT-VALUE}).")
    int port = 7471;
    @Option(names = "--size", description = "Largest message size served when the client asks for none (default: ${DEFAULT-VALUE}).")
    int size = 65536;
    @Mixin
    ConnectionOptions setup = new ConnectionOptions();
    @Option(names = "--count", description = "Serve this many connections, then exit; 0 = forever (default: ${DEFAULT-VALUE}).")
    int count = 0;
    @Option(names = "--iters", description = "Accepted for symmetry with the client; the client drives the count.")
    int iters;
    @Option(names = "--op", description = "Accepted for symmetry with the client; the client names the op.")
    String op;
    @Option(names = "--sge", description = "SGEs each receive buffer is scattered over (default: ${DEFAULT-VALUE}).")
    int sge = 1;
    @Option(names = "--inline-size", description = "Inline bytes asked for; echoes up to it go inline (default: ${DEFAULT-VALUE}).")
    int inlineSize;
    @Option(names = "--verify", description = "Check every received Send against the client's byte pattern; a mismatch ends the connection.")
    boolean verify;
    @Option(names = "--srq", description = "Take each connection's receive buffers from a shared receive queue "
            + "(ibv_srq) instead of the QP's own receive queue.")
    boolean srq;
    @Option(names = "--events", description = "Sleep on a completion channel (poll, arm, poll, sleep) instead of "
            + "the CQ's await.")
    boolean events;
    @Option(names = "--size-limit", description = "Largest buffer a client may request, bytes (default: ${DEFAULT-VALUE}).")
    int sizeLimit = 16 << 20;
    @Option(names = "--max-connections", description = "Connections served at once; a request beyond them is "
            + "rejected at once (default: ${DEFAULT-VALUE}).")
    int maxConnections = 64;
    @Option(names = "--max-connection-memory", description = "Largest buffer memory one connection may ask for, "
            + "bytes, counting its rings and staging (default: ${DEFAULT-VALUE} = 16 MiB).")
    long maxConnectionMemory = 16L << 20;
    @Option(names = "--max-memory", description = "Buffer memory of all connections together, bytes "
            + "(default: ${DEFAULT-VALUE} = 1 GiB).")
    long maxMemory = 1L << 30;
    @Option(names = "--max-memory-per-source", description = "Memory of all connections from one source address "
            + "together, bytes, counted as --max-memory is (default: a quarter of --max-memory, at least "
            + "--max-connection-memory).")
    Long maxMemoryPerSource;
    @Option(names = "--idle-timeout", description = "Close an established connection that shows no activity "
            + "(no message, no completion, no inbound segment) for this many seconds, with a TERM; 0 = never "
            + "(default: ${DEFAULT-VALUE}).")
    int idleTimeout = 30;
    @Option(names = "--write-timeout", description = "End a write-latency phase whose client Write does not arrive "
            + "within this many seconds, with a TERM (default: ${DEFAULT-VALUE}).")
    int writeTimeout = 10;
    @Option(names = "--max-connections-per-source", description = "Connections served at once from one source "
            + "address (default: ${DEFAULT-VALUE}).")
    int maxPerSource = 16;
    @Option(names = "--evict-idle", description = "When the server or a source is at its connection cap, a "
            + "connection idle for at least this many milliseconds is ended with a TERM (the oldest idle first) "
            + "before a new request is refused (default: ${DEFAULT-VALUE}).")
    long evictIdleMillis = 1000;

    /** Connections being served, for eviction: the oldest idle one goes before a request is refused. */
    private final java.util.concurrent.ConcurrentHashMap<Responder, InetAddress> live =
            new java.util.concurrent.ConcurrentHashMap<>();
    private final java.util.concurrent.ConcurrentHashMap<InetAddress, java.util.concurrent.atomic.AtomicInteger> perSource =
            new java.util.concurrent.ConcurrentHashMap<>();

    @Spec
    CommandSpec spec;
    /** Where the server's lines go: picocli's writers (the process streams unless a caller sets its own). */
    private PrintWriter out;
    private PrintWriter err;

    @Override
    public Integer call() throws Exception {
        if (maxConnections < 1 || maxConnectionMemory < 1 || maxMemory < 1) {
            throw new IllegalArgumentException("--max-connections, --max-connection-memory and --max-memory must be >= 1");
        }
        if (idleTimeout < 0 || writeTimeout < 1 || maxPerSource < 1 || evictIdleMillis < 0) {
            throw new IllegalArgumentException("--idle-timeout and --evict-idle must be >= 0, --write-timeout and "
                    + "--max-connections-per-source >= 1");
        }
        out = spec.commandLine().getOut();
        err = spec.commandLine().getErr();
        if (maxMemoryPerSource != null && maxMemoryPerSource < 1) {
            throw new IllegalArgumentException("--max-memory-per-source must be >= 1");
        }
        ConnectionParameters params = setup.builder().rtrTypes(ClientCommand.parseRtr(setup.rtr)).build();
        MemoryBudget budget = new MemoryBudget(maxMemory, maxMemoryPerSource != null ? maxMemoryPerSource
                : defaultPerSource(maxMemory, maxConnectionMemory));
        // a request the budget (or its source's share) cannot take first evicts the connection idle
        // longest (of that source when its share is the limit), if one is idle enough
        budget.reclaim = this::evictForMemory;
        Limits limits = new Limits(sizeLimit, maxConnectionMemory, budget, setup.p2p);
        Semaphore slots = new Semaphore(maxConnections);
        ExecutorService workers = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "jwarp-server-connection");
            t.setDaemon(true);
            return t;
        });
        try (RdmaProvider prov = Rdma.open(setup.provider);
             Device dev = prov.open(InetAddress.getByName(bind));
             Listener l = dev.connectionManager().listen(new InetSocketAddress(InetAddress.getByName(bind), port), 16)) {
            out.println("jwarp server: " + prov.name() + " listening on " + l.localAddress());
            out.flush();
            int served = 0;
            while (count == 0 || served < count) {
                ConnectionRequest req;
                try {
                    req = l.next(Duration.ofSeconds(1));
                } catch (RdmaTimeoutException e) {
                    continue;
                }
                InetAddress source = req.remote().getAddress();
                java.util.concurrent.atomic.AtomicInteger fromSource =
                        perSource.computeIfAbsent(source, a -> new java.util.concurrent.atomic.AtomicInteger());
                if (fromSource.get() >= maxPerSource && !evictIdle(source, () -> fromSource.get() < maxPerSource)) {
                    refuse(err, req, "server busy: " + maxPerSource + " connections from " + source.getHostAddress()
                            + " served at once (--max-connections-per-source)");
                    continue;
                }
                if (!slots.tryAcquire() && !(evictIdle(null, () -> slots.availablePermits() > 0) && slots.tryAcquire())) {
                    // not counted as served: --count is about the connections this server took on
                    refuse(err, req, "server busy: " + maxConnections + " connections served at once (--max-connections)");
                    continue;
                }
                served++;
                fromSource.incrementAndGet();
                try {
                    workers.execute(() -> {
                        try {
                            serveOne(dev, req, params, limits, source);
                        } finally {
                            fromSource.decrementAndGet();
                            slots.release();
                        }
                    });
                } catch (RuntimeException e) {
                    fromSource.decrementAndGet();
                    slots.release();
                    refuse(err, req, "server cannot start a connection thread: " + e);
                }
            }
            // --count reached: let the connections in progress finish before the device closes
            slots.acquireUninterruptibly(maxConnections);
        } finally {
            workers.shutdown();
        }
        return 0;
    }

    /** The default share of one source: a quarter of the budget, but at least one connection's cap (within it). */
    static long defaultPerSource(long maxMemory, long maxConnectionMemory) {
        return Math.max(maxMemory / 4, Math.min(maxConnectionMemory, maxMemory));
    }

    /**
     * Ends the connection idle longest (at least {@code --evict-idle}), of {@code source} or of any
     * source when null, with a TERM, and waits up to 2 s until {@code freed} holds; false when no
     * connection was idle enough or nothing was freed in time. For the connection caps, on the
     * accept thread.
     */
    private boolean evictIdle(InetAddress source, java.util.function.BooleanSupplier freed) {
        Responder victim = evictOne(source, "the server was at its connection cap");
        if (victim == null) {
            return false;
        }
        awaitUntil(freed);
        return freed.getAsBoolean();
    }

    /**
     * For the memory budget, on a connection thread: ends the connection idle longest (of
     * {@code source}, or of any source when null) and waits up to 2 s until its memory is back or
     * {@code room} holds; true when either happened (the caller tries its reservation again, and
     * evicts again if one connection's memory was not enough), false when none was idle enough.
     */
    private boolean evictForMemory(InetAddress source, java.util.function.BooleanSupplier room) {
        Responder victim = evictOne(source, source == null ? "the server's memory budget was full"
                : "its source's memory share was full");
        if (victim == null) {
            return false;
        }
        awaitUntil(() -> victim.released() || room.getAsBoolean());
        return victim.released() || room.getAsBoolean();
    }

    private static void awaitUntil(java.util.function.BooleanSupplier cond) {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        while (!cond.getAsBoolean() && System.nanoTime() - until < 0) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }

    /**
     * Picks the connection idle longest (at least {@code --evict-idle}) of {@code source} (any when
     * null) that is not being evicted already, and ends it with a TERM; null when none qualifies.
     */
    private synchronized Responder evictOne(InetAddress source, String why) {
        long now = System.nanoTime();
        Responder oldest = null;
        for (java.util.Map.Entry<Responder, InetAddress> e : live.entrySet()) {
            Responder r = e.getKey();
            if (!r.evicted && (source == null || source.equals(e.getValue()))
                    && now - r.idleSince() >= TimeUnit.MILLISECONDS.toNanos(evictIdleMillis)
                    && (oldest == null || r.idleSince() - oldest.idleSince() < 0)) {
                oldest = r;
            }
        }
        if (oldest == null) {
            return null;
        }
        oldest.evicted = true;
        err.println("jwarp server: evicting the connection from " + oldest.connection().info().remote() + ", idle "
                + TimeUnit.NANOSECONDS.toMillis(now - oldest.idleSince()) + " ms, for a new request: " + why);
        err.flush();
        oldest.connection().terminate("evicted: idle while " + why);
        return oldest;
    }

    /** Accepts and serves one connection on a worker thread; reports its end and the cause. */
    private void serveOne(Device dev, ConnectionRequest req, ConnectionParameters params, Limits limits,
            InetAddress source) {
        try (Responder r = Responder.accept(dev, req, params, size, limits,
                new WorkSettings(sge, 1, inlineSize, verify, srq, events), err)) {
            out.println("connected: " + ClientCommand.describe(r.connection()));
            out.flush();
            r.timeouts(TimeUnit.SECONDS.toNanos(idleTimeout), TimeUnit.SECONDS.toNanos(writeTimeout));
            live.put(r, source);
            long n;
            try {
                n = r.serve(null);
            } finally {
                live.remove(r);
            }
            RdmaException cause = r.connection().failure();
            out.println("connection done: " + n + " messages answered"
                    + (cause != null ? " (" + cause.getMessage() + ")" : ""));
            out.flush();
        } catch (RdmaException e) {
            err.println("jwarp server: connection from " + req.remote() + " failed: " + e.getMessage());
            err.flush();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            err.println("jwarp server: connection from " + req.remote() + " failed: " + e);
            err.flush();
        }
    }

    /** Rejects {@code req} with {@code reason} as ULP private data (MPA R=1, RFC 5044 §7.1.5) and says so. */
    static void refuse(PrintWriter err, ConnectionRequest req, String reason) {
        err.println("jwarp server: rejected " + req.remote() + ": " + reason);
        err.flush();
        try {
            req.reject(reason.getBytes(StandardCharsets.US_ASCII));
        } catch (RdmaException | RuntimeException e) {
            err.println("jwarp server: reject of " + req.remote() + " failed: " + e.getMessage());
            err.flush();
        }
    }

    /**
     * What a hello may ask for: the largest buffer, the buffer memory of one connection, the
     * shared budget of all connections (null: none), and whether peer-to-peer is served.
     */
    record Limits(int sizeLimit, long perConnection, MemoryBudget budget, boolean peerToPeer) {
        /** No memory caps beyond {@code sizeLimit} (the demo's own loopback pair). */
        static Limits ofSize(int sizeLimit) {
            return new Limits(sizeLimit, Long.MAX_VALUE, null, true);
        }
    }

    /**
     * Memory reserved by the connections being served (what {@link Sizing#totalBytes} counts),
     * against a global cap and a cap per source address, so that one source cannot take more than
     * its share. Cold path (once per connection): synchronized.
     */
    static final class MemoryBudget {
        /** Frees memory by evicting an idle connection: of {@code source}, or of any source when null. */
        interface Reclaimer {
            /** True when it evicted one and its memory is back or {@code room} holds; false: none idle enough. */
            boolean evict(InetAddress source, java.util.function.BooleanSupplier room);
        }

        private final long cap;
        private final long perSource;
        private long used;
        private final java.util.HashMap<InetAddress, Long> bySource = new java.util.HashMap<>();
        /** Called when a reservation does not fit; null: refuse at once. */
        volatile Reclaimer reclaim;

        /** One cap, no separate share per source. */
        MemoryBudget(long cap) {
            this(cap, cap);
        }

        MemoryBudget(long cap, long perSource) {
            this.cap = cap;
            this.perSource = Math.min(cap, perSource);
        }

        /**
         * As {@link #reserve}; when it does not fit, asks {@link #reclaim} to evict idle connections
         * first (of {@code source} while its share is the limit, else of any source), one at a time,
         * and tries again after each; false when nothing idle enough is left to evict.
         */
        boolean reserveOrReclaim(InetAddress source, long bytes) {
            if (bytes > perSource) {
                return false; // no eviction can make it fit
            }
            for (int i = 0; i < 4096; i++) { // a bound; each round evicts one connection or ends
                if (reserve(source, bytes)) {
                    return true;
                }
                Reclaimer r = reclaim;
                if (r == null) {
                    return false;
                }
                // the source's share is the limit: its own idle connections go; else anyone's
                InetAddress whose = shareRoom(source) < bytes ? source : null;
                if (!r.evict(whose, () -> (whose == null ? room() : shareRoom(whose)) >= bytes)) {
                    return false;
                }
            }
            return false;
        }

        /** Reserves {@code bytes} for {@code source}; false (nothing reserved) when a cap would be exceeded. */
        synchronized boolean reserve(InetAddress source, long bytes) {
            long mine = bySource.getOrDefault(source, 0L);
            if (bytes > cap - used || bytes > perSource - mine) {
                return false;
            }
            used += bytes;
            bySource.put(source, mine + bytes);
            return true;
        }

        synchronized void release(InetAddress source, long bytes) {
            used -= bytes;
            long left = bySource.getOrDefault(source, 0L) - bytes;
            if (left <= 0) {
                bySource.remove(source);
            } else {
                bySource.put(source, left);
            }
        }

        /** Why {@code bytes} for {@code source} do not fit now, naming the option that caps it. */
        synchronized String refusal(InetAddress source, long bytes) {
            long mine = bySource.getOrDefault(source, 0L);
            if (bytes > perSource - mine) {
                return "server memory cap for " + source.getHostAddress() + " reached: " + bytes + " bytes asked, "
                        + mine + " of " + perSource + " in use by that source (--max-memory-per-source)";
            }
            return "server memory cap reached: " + bytes + " bytes asked, " + used + " of " + cap
                    + " in use (--max-memory)";
        }

        synchronized long used() {
            return used;
        }

        synchronized long usedBy(InetAddress source) {
            return bySource.getOrDefault(source, 0L);
        }

        private synchronized long room() {
            return cap - used;
        }

        private synchronized long shareRoom(InetAddress source) {
            return perSource - bySource.getOrDefault(source, 0L);
        }

        long cap() {
            return cap;
        }

        long perSource() {
            return perSource;
        }
    }

    /**
     * Buffer sizes for one hello: slot size, window and the total bytes of the three regions
     * (receive slots, echo slots, RDMA target), computed without int overflow; or why it is refused.
     */
    record Sizing(int slotSize, int window, int targetSize, long totalBytes, String refusal) {
        static Sizing of(int bufSize, int window, Limits limits) {
            return of(bufSize, window, limits, 0);
        }

        /** As above for a server that sends up to {@code inlineBytes} inline (its send ring keeps that much per entry). */
        static Sizing of(int bufSize, int window, Limits limits, int inlineBytes) {
            if (bufSize < 0 || bufSize > limits.sizeLimit() || window < 1 || window > 1024) {
                return refused("size " + bufSize + "/window " + window + " not served (size 0.." + limits.sizeLimit()
                        + ", window 1..1024)");
            }
            int slotSize = Math.max(16, bufSize);
            long slotBytes = (long) slotSize * window; // < 2^31 * 2^10: no long overflow
            long total = 2 * slotBytes + slotSize + pinnedBesidesBuffers(window) + (window + 4L) * Math.max(0, inlineBytes);
            if (slotBytes > Integer.MAX_VALUE || total > limits.perConnection()) {
                return refused("size " + bufSize + " x window " + window + " needs " + total
                        + " bytes of buffers and rings, above the per-connection cap of "
                        + Math.min(limits.perConnection(), Integer.MAX_VALUE) + " bytes (--max-connection-memory)");
            }
            return new Sizing(slotSize, window, slotSize, total, null);
        }

        /**
         * Per connection whatever its window: the CQ's receive-polling buffer (256 KiB, direct), the
         * stream's transmit staging area and FPDU gather buffer (64 KiB each, direct, while it has
         * traffic), the connection's thread (~100 KiB of stack) and the stream's objects (~24 KiB).
         * Measured on the soft provider (2026-12-06, 20 idle connections at window 16, heap after GC
         * plus NMT's direct and thread memory): 367 KiB per connection, 495 KiB with the two
         * traffic-only buffers. That was at IRD/ORD 16; the default of 128 adds about 20 KiB
         * (SoftQpMemory, 1,000 QPs: 31.7 against 11.8 KiB per QP), inside this estimate.
         */
        static final long STREAM_BYTES = 512 << 10;
        /** Per send or receive ring entry: the WR's fields and SGEs (measured: ~60 B send, ~24 B receive, +12 B per SGE). */
        static final long WR_BYTES = 128;
        /** Per completion: a WorkCompletion object and its ring slot (~64 B measured). */
        static final long CQE_BYTES = 72;

        /**
         * What a connection pins besides its three buffers (issue 31: these were not counted): the CQ
         * of 4 x window + 16 entries, send and receive rings of window + 4 each, the responder's own
         * 2 x window completions (its poll batch and the write-latency phase's deferred ones), and
         * {@link #STREAM_BYTES}. At window 1,024 this is 1,230,976 bytes, against 941 KiB measured
         * for an idle connection (1,069 KiB with the traffic-only buffers): an upper estimate.
         */
        static long pinnedBesidesBuffers(int window) {
            return STREAM_BYTES + 2L * (window + 4) * WR_BYTES + (4L * window + 16) * CQE_BYTES
                    + 2L * window * CQE_BYTES;
        }

        private static Sizing refused(String why) {
            return new Sizing(0, 0, 0, 0, why);
        }
    }

    static Set<RtrType> rtrOf(Set<String> names) {
        return ClientCommand.parseRtr(names);
    }
}
