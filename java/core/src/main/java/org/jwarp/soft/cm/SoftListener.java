package org.jwarp.soft.cm;

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
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.jwarp.negotiation.ResponderConfig;
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
 * <p>The streams it accepts, and what watches them once established (the idle timeout of
 * {@link org.jwarp.verbs.ListenerConfig#idleTimeout()}, which reads data-path progress), are the
 * layer above's: {@link AcceptedStreams}.
 */
public final class SoftListener implements Listener, Reactor.Handler {
    private static final Logger LOG = LoggerFactory.getLogger(SoftListener.class);

    /**
     * The kernel's queue of TCP connections not yet accepted. Pending handshakes are limited after
     * accept ({@code backlog}); this only absorbs bursts, so a reconnect storm that outpaces the
     * reactor for a moment does not make the kernel drop a legitimate client's SYN (which would
     * cost it a 1 s retransmission).
     */
    static final int ACCEPT_QUEUE = 1024;

    private final ConnectionHost device;
    private final AcceptedStreams accepted;
    private final Reactor reactor;
    private final ServerSocketChannel server;
    private final int backlog;
    private final InetSocketAddress local;
    private final LinkedBlockingQueue<SoftConnectionRequest> ready = new LinkedBlockingQueue<>();
    /** Reactor thread only. */
    private final Set<SetupStream> pending = new LinkedHashSet<>(); // accept order: the oldest first
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong evicted = new AtomicLong();
    private final AtomicInteger pendingCount = new AtomicInteger();
    private volatile boolean closed;

    /** Listens on {@code address} with {@code reactor}; {@code accepted} makes and watches the streams. */
    SoftListener(ConnectionHost device, Reactor reactor, InetSocketAddress address, int backlog,
                 AcceptedStreams accepted) throws IOException {
        if (backlog < 1) {
            throw new IllegalArgumentException("backlog: " + backlog + " must be >= 1");
        }
        this.device = device;
        this.accepted = accepted;
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
                    accepted.start(local);
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

    /**
     * What the listener counted, read at once (tests, diagnostics): TCP connections closed because
     * {@code backlog} were pending, each with its Request sent; pending connections evicted (no
     * complete MPA Request yet) to make room for a new one; connections pending now; validated
     * requests waiting in {@link #next}; accepted connections ended by the idle timeout.
     */
    public record Counters(long refused, long evicted, int pending, int ready, long idleClosed) {
    }

    /** The listener's counters now (any thread). */
    public Counters counters() {
        return new Counters(refused.get(), evicted.get(), pendingCount.get(), ready.size(), accepted.idleClosed());
    }

    /** Reactor thread: evicts the oldest pending stream still waiting for its MPA Request; false if none. */
    private boolean evictOldestSilent() {
        SetupStream victim = null;
        for (SetupStream s : pending) {
            if (s.phase() == SetupStream.Phase.AWAIT_REQUEST) {
                victim = s;
                break;
            }
        }
        if (victim == null) {
            return false;
        }
        evicted.incrementAndGet(); // counted before the TERM leaves: a peer that reads it sees the count
        victim.setup().evict(backlog);
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
                SetupStream s = accepted.open(this, ch, baseConfig());
                pending.add(s);
                pendingCount.set(pending.size());
                s.setup().readEarly(); // a Request already here is taken now, before later arrivals could evict it
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
    public boolean offer(SoftConnectionRequest r) {
        if (closed) {
            return false;
        }
        ready.add(r);
        return true;
    }

    /** Reactor thread: the stream left the pending state (established, failed or closed). */
    public void pendingDone(SetupStream s) {
        if (pending.remove(s)) {
            pendingCount.set(pending.size());
        }
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
        accepted.close();
        try {
            server.close();
        } catch (IOException e) {
            LOG.debug("listener close failed", e);
        }
        for (SoftConnectionRequest r : ready) {
            r.rejectQuietly();
        }
        ready.clear();
        for (SetupStream s : new HashSet<>(pending)) {
            s.setup().rejectIfUndecided();
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
        accepted.close();
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
