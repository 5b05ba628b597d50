package org.jwarp.soft;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.jwarp.negotiation.ResponderConfig;
import org.jwarp.soft.cm.CmParameters;
import org.jwarp.soft.cm.SoftConnectionRequest;
import org.jwarp.soft.loop.Reactor;
import org.jwarp.verbs.ConnectionRequest;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaTimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A listening endpoint of the embedded provider: accepts TCP connections on the reactor, runs the
 * responder side of MPA setup (RFC 5044 §7.1.2, RFC 6581) on each, and hands validated requests
 * to {@link #next}. At most {@code backlog} connections may be pending (waiting for their MPA
 * Request, or for the ULP's decision). When the set is full, a new TCP connection evicts the
 * oldest pending one that has not yet sent a complete MPA Request (it gets TERM layer 2 / type 0 /
 * code 5, the local resource error of RFC 6581 §9.3, and is closed); only when every pending
 * connection has sent its Request is the new one closed at once. So silent or slow-loris peers,
 * however many and however fast they reconnect, cannot keep a client that sends its Request
 * promptly from being served: it is never older than the peers that keep arriving after it.
 *
 * <p>With an idle timeout ({@link org.jwarp.verbs.ListenerConfig#idleTimeout()}, off by default)
 * the listener also watches the connections it accepted once they are established: four times per
 * timeout, on its reactor, it reads each one's progress (whole inbound FPDUs plus send-queue
 * completions), and one whose progress has not moved for the timeout is ended as after a local
 * error (RFC 5040 §7): TERM 0/0/0, QP to ERR, flush, QP_FATAL and CLOSED. So established peers
 * that finish MPA setup and then send nothing cannot hold the server's connections forever.
 */
final class SoftListener implements Listener, Reactor.Handler, Reactor.Timed {
    private static final Logger LOG = LoggerFactory.getLogger(SoftListener.class);

    /**
     * The kernel's queue of TCP connections not yet accepted. Pending handshakes are limited after
     * accept ({@code backlog}); this only absorbs bursts, so a reconnect storm that outpaces the
     * reactor for a moment does not make the kernel drop a legitimate client's SYN (which would
     * cost it a 1 s retransmission).
     */
    static final int ACCEPT_QUEUE = 1024;

    private final StreamHost device;
    private final Reactor reactor;
    private final ServerSocketChannel server;
    private final int backlog;
    private final InetSocketAddress local;
    private final LinkedBlockingQueue<SoftConnectionRequest> ready = new LinkedBlockingQueue<>();
    /** Reactor thread only. */
    private final Set<SoftStream> pending = new LinkedHashSet<>(); // accept order: the oldest first
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong evicted = new AtomicLong();
    private final java.util.concurrent.atomic.AtomicInteger pendingCount = new java.util.concurrent.atomic.AtomicInteger();
    private volatile boolean closed;
    /** Idle timeout of accepted connections, nanoseconds; 0 = none. */
    private final long idleNanos;
    /** Established connections this listener accepted, watched for idleness (reactor thread only). */
    private final java.util.ArrayList<SoftStream> watched = new java.util.ArrayList<>();
    /** When the next idle sweep is due (reactor thread only). */
    private long nextSweep;
    private final AtomicLong idleClosed = new AtomicLong();

    SoftListener(StreamHost device, Reactor reactor, InetSocketAddress address, int backlog) throws IOException {
        this(device, reactor, address, backlog, 0);
    }

    /** As above; {@code idleNanos} > 0 ends accepted connections idle that long (see the class comment). */
    SoftListener(StreamHost device, Reactor reactor, InetSocketAddress address, int backlog, long idleNanos)
            throws IOException {
        if (idleNanos < 0) {
            throw new IllegalArgumentException("idle timeout: " + idleNanos + " ns must be >= 0");
        }
        this.idleNanos = idleNanos;
        if (backlog < 1) {
            throw new IllegalArgumentException("backlog: " + backlog + " must be >= 1");
        }
        this.device = device;
        this.reactor = reactor;
        this.backlog = backlog;
        server = ServerSocketChannel.open();
        try {
            server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            server.bind(address, Math.max(backlog, ACCEPT_QUEUE));
            server.configureBlocking(false);
            local = (InetSocketAddress) server.getLocalAddress();
            reactor.call(() -> {
                try {
                    if (idleNanos > 0) {
                        nextSweep = System.nanoTime() + sweepPeriod();
                        reactor.addDeadline(this);
                    }
                    return reactor.register(server, SelectionKey.OP_ACCEPT, this);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }, 5000);
        } catch (IOException | RuntimeException e) {
            server.close();
            throw e;
        }
    }

    @Override
    public InetSocketAddress localAddress() {
        return local;
    }

    /** TCP connections closed because {@code backlog} were pending, each with its Request sent. */
    long refusedCount() {
        return refused.get();
    }

    /** Pending connections evicted (no complete MPA Request yet) to make room for a new one. */
    long evictedCount() {
        return evicted.get();
    }

    /** Accepted connections ended by the idle timeout so far. */
    long idleClosedCount() {
        return idleClosed.get();
    }

    /** Time between idle sweeps: a quarter of the timeout (at least 1 ms). */
    private long sweepPeriod() {
        return Math.max(TimeUnit.MILLISECONDS.toNanos(1), idleNanos / 4);
    }

    /** Reactor thread, I/O lock held: {@code s} is established; with an idle timeout it is watched from now. */
    void established(SoftStream s) {
        pendingDone(s);
        if (idleNanos > 0 && !closed) {
            s.watchIdle(); // the first sweep records its progress
            watched.add(s);
        }
    }

    @Override
    public long deadlineNanos() {
        return nextSweep;
    }

    /**
     * Reactor thread: the idle sweep. A stream whose I/O lock is busy is being driven right now and
     * is skipped this time; one that left the established phase is dropped from the watch.
     */
    @Override
    public void onDeadline(long now) {
        if (closed) {
            watched.clear();
            return;
        }
        for (int i = watched.size() - 1; i >= 0; i--) {
            SoftStream s = watched.get(i);
            if (s.phase() != SoftStream.Phase.ESTABLISHED) {
                watched.remove(i);
                continue;
            }
            if (!s.io.tryLock()) {
                continue;
            }
            try {
                if (s.phase() != SoftStream.Phase.ESTABLISHED || s.data() == null) {
                    watched.remove(i);
                    continue;
                }
                long idle = s.idleNanos(now);
                if (idle >= idleNanos) {
                    watched.remove(i);
                    idleClosed.incrementAndGet();
                    String why = "idle for " + TimeUnit.NANOSECONDS.toMillis(idle) + " ms: no segment from "
                            + s.remoteAddress() + " and no completion progressing (ListenerConfig idle timeout "
                            + TimeUnit.NANOSECONDS.toMillis(idleNanos) + " ms); sent TERM 0/0/0";
                    LOG.debug("listener {}: {}", local, why);
                    s.closer.localError(org.jwarp.ground.TermCode.RDMAP_LOCAL_CATASTROPHIC,
                            new org.jwarp.verbs.ConnectionTerminatedException(why,
                                    org.jwarp.ground.TermCode.RDMAP_LOCAL_CATASTROPHIC, false));
                }
            } catch (RuntimeException e) {
                s.closer.fault(e);
            } finally {
                s.io.unlock();
            }
        }
        nextSweep = now + sweepPeriod();
        reactor.addDeadline(this); // the reactor removed it before calling
    }

    /** Reactor thread: evicts the oldest pending stream still waiting for its MPA Request; false if none. */
    private boolean evictOldestSilent() {
        SoftStream victim = null;
        for (SoftStream s : pending) {
            if (s.phase() == SoftStream.Phase.AWAIT_REQUEST) {
                victim = s;
                break;
            }
        }
        if (victim == null) {
            return false;
        }
        evicted.incrementAndGet(); // counted before the TERM leaves: a peer that reads it sees the count
        victim.setup.evict(backlog);
        pending.remove(victim); // evict() already reported it done; make sure
        pendingCount.set(pending.size());
        return true;
    }

    @Override
    public void onReady(SelectionKey key) {
        if (!key.isValid() || !key.isAcceptable()) {
            return;
        }
        // A quarter of the pending limit per loop turn: between batches the reactor reads the
        // connections just accepted, so a client whose Request follows its ACK (the usual case)
        // has sent it before enough newcomers arrive to make it the oldest silent one. The rest
        // wait in the kernel's queue; the key stays ready, so the next turn continues.
        int batch = Math.max(1, Math.min(64, backlog / 4));
        for (int i = 0; i < batch; i++) {
            SocketChannel ch;
            try {
                ch = server.accept();
            } catch (IOException e) {
                LOG.warn("accept on {} failed: {}", local, e.toString());
                return;
            }
            if (ch == null) {
                return;
            }
            if (!closed && pending.size() >= backlog) {
                evictOldestSilent();
            }
            if (closed || pending.size() >= backlog) {
                refused.incrementAndGet();
                LOG.debug("listener {}: {} connections pending (backlog {}), refusing", local, pending.size(), backlog);
                try {
                    ch.setOption(StandardSocketOptions.SO_LINGER, 0);
                    ch.close();
                } catch (IOException e) {
                    // gone anyway
                }
                continue;
            }
            try {
                SoftStream s = SoftStream.responder(device, reactor, this, ch, baseConfig());
                pending.add(s);
                pendingCount.set(pending.size());
                s.setup.readEarly(); // a Request already here is taken now, before later arrivals could evict it
            } catch (IOException | RuntimeException e) {
                LOG.warn("cannot set up accepted connection: {}", e.toString());
                try {
                    ch.close();
                } catch (IOException ignored) {
                    // nothing left to do
                }
            }
        }
    }

    /** The responder limits before the ULP decides: RFC limits, no markers, RFC 6581 support. */
    private static ResponderConfig baseConfig() {
        return ResponderConfig.builder().maxIrd(CmParameters.MAX_IRD_ORD).ord(CmParameters.MAX_IRD_ORD).build();
    }

    /** Reactor thread: a validated request; false when the listener is closed. */
    boolean offer(SoftConnectionRequest r) {
        if (closed) {
            return false;
        }
        ready.add(r);
        return true;
    }

    /** Reactor thread: the stream left the pending state. */
    void pendingDone(SoftStream s) {
        if (pending.remove(s)) {
            pendingCount.set(pending.size());
        }
    }

    /** Validated requests waiting in {@link #next} (tests, diagnostics). */
    int readyCount() {
        return ready.size();
    }

    /** Connections waiting for their MPA Request or the ULP's decision (any thread). */
    int pendingCount() {
        return pendingCount.get();
    }

    @Override
    public ConnectionRequest next(Duration timeout) throws RdmaException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            if (closed) {
                throw new RdmaException("listener " + local + " is closed");
            }
            long left = deadline - System.nanoTime();
            SoftConnectionRequest r = ready.poll(Math.max(0, Math.min(left, TimeUnit.MILLISECONDS.toNanos(100))),
                    TimeUnit.NANOSECONDS);
            if (r != null) {
                if (r.isPending()) {
                    return r;
                }
                continue;
            }
            if (System.nanoTime() - deadline >= 0) {
                throw new RdmaTimeoutException("no connection request on " + local + " within " + timeout.toMillis() + " ms");
            }
        }
    }

    @Override
    public void onReactorClose() {
        closeOnReactor();
    }

    private void closeOnReactor() {
        closed = true;
        if (idleNanos > 0) {
            reactor.cancelDeadline(this);
            watched.clear();
        }
        try {
            server.close();
        } catch (IOException e) {
            LOG.debug("listener close failed", e);
        }
        for (SoftConnectionRequest r : ready) {
            r.rejectQuietly();
        }
        ready.clear();
        for (SoftStream s : new HashSet<>(pending)) {
            s.setup.rejectIfUndecided();
        }
        pending.clear();
        pendingCount.set(0);
    }

    /** Closes the port and rejects every pending request (RFC 5044 §7.1.2 MPA Reply with R=1). */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (reactor.isRunning() && !reactor.inReactorThread()) {
            try {
                reactor.call(() -> {
                    closeOnReactor();
                    return null;
                }, 5000);
            } catch (IOException | RuntimeException e) {
                LOG.warn("listener {} close: {}", local, e.toString());
                closeQuietly();
            }
        } else if (reactor.inReactorThread()) {
            closeOnReactor();
        } else {
            closeQuietly();
        }
        device.forget(this);
    }

    private void closeQuietly() {
        try {
            server.close();
        } catch (IOException e) {
            // nothing left to do
        }
    }
}
