package org.jwarp.soft;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.jwarp.negotiation.ResponderConfig;
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
 * Request, or for the ULP's decision); further TCP connections are closed at once, so neither a
 * silent peer nor a flood can hold the listener.
 */
final class SoftListener implements Listener, Reactor.Handler {
    private static final Logger LOG = LoggerFactory.getLogger(SoftListener.class);

    private final SoftDevice device;
    private final Reactor reactor;
    private final ServerSocketChannel server;
    private final int backlog;
    private final InetSocketAddress local;
    private final LinkedBlockingQueue<SoftConnectionRequest> ready = new LinkedBlockingQueue<>();
    /** Reactor thread only. */
    private final Set<SoftStream> pending = new HashSet<>();
    private final AtomicLong refused = new AtomicLong();
    private final java.util.concurrent.atomic.AtomicInteger pendingCount = new java.util.concurrent.atomic.AtomicInteger();
    private volatile boolean closed;

    SoftListener(SoftDevice device, Reactor reactor, InetSocketAddress address, int backlog) throws IOException {
        if (backlog < 1) {
            throw new IllegalArgumentException("backlog: " + backlog + " must be >= 1");
        }
        this.device = device;
        this.reactor = reactor;
        this.backlog = backlog;
        server = ServerSocketChannel.open();
        try {
            server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            server.bind(address, Math.max(backlog, 16));
            server.configureBlocking(false);
            local = (InetSocketAddress) server.getLocalAddress();
            reactor.call(() -> {
                try {
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

    /** TCP connections closed because {@code backlog} were pending. */
    long refusedCount() {
        return refused.get();
    }

    @Override
    public void onReady(SelectionKey key) {
        if (!key.isValid() || !key.isAcceptable()) {
            return;
        }
        for (int i = 0; i < 64; i++) {
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
        return ResponderConfig.builder().maxIrd(SoftProvider.MAX_IRD_ORD).ord(SoftProvider.MAX_IRD_ORD).build();
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
            s.rejectIfUndecided();
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
