package org.jwarp.soft;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.jwarp.ground.TermCode;
import org.jwarp.negotiation.ResponderConfig;
import org.jwarp.soft.cm.AcceptedStreams;
import org.jwarp.soft.cm.SetupStream;
import org.jwarp.soft.cm.SoftListener;
import org.jwarp.soft.loop.Reactor;
import org.jwarp.verbs.ConnectionTerminatedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The connections one listener accepted, above setup: each accepted channel becomes a responder
 * {@link SoftStream}, and with an idle timeout ({@link org.jwarp.verbs.ListenerConfig#idleTimeout()},
 * off by default) the established ones are watched: four times per timeout, on the listener's
 * reactor, each one's progress is read (whole inbound FPDUs plus send-queue completions), and one
 * whose progress has not moved for the timeout is ended as after a local error (RFC 5040 §7):
 * TERM 0/0/0, QP to ERR, flush, QP_FATAL and CLOSED. So established peers that finish MPA setup
 * and then send nothing cannot hold the server's connections forever.
 */
final class ListenerStreams implements AcceptedStreams, Reactor.Timed {
    private static final Logger LOG = LoggerFactory.getLogger(ListenerStreams.class);

    private final StreamHost device;
    private final Reactor reactor;
    /** Idle timeout of accepted connections, nanoseconds; 0 = none. */
    private final long idleNanos;
    /** Established connections of the listener, watched for idleness (reactor thread only). */
    private final ArrayList<SoftStream> watched = new ArrayList<>();
    /** When the next idle sweep is due (reactor thread only). */
    private long nextSweep;
    private final AtomicLong idleClosed = new AtomicLong();
    /** The listener's address, for the log (set on the reactor before the first accept). */
    private InetSocketAddress local;
    private volatile boolean closed;

    /** {@code idleNanos} > 0 ends accepted connections idle that long (see the class comment). */
    ListenerStreams(StreamHost device, Reactor reactor, long idleNanos) {
        if (idleNanos < 0) {
            throw new IllegalArgumentException("idle timeout: " + idleNanos + " ns must be >= 0");
        }
        this.device = device;
        this.reactor = reactor;
        this.idleNanos = idleNanos;
    }

    @Override
    public SetupStream open(SoftListener listener, SocketChannel ch, ResponderConfig base) throws IOException {
        return SoftStream.responder(device, reactor, listener, this, ch, base);
    }

    @Override
    public void start(InetSocketAddress listening) {
        local = listening;
        if (idleNanos > 0) {
            nextSweep = System.nanoTime() + sweepPeriod();
            reactor.addDeadline(this);
        }
    }

    @Override
    public void close() {
        closed = true;
        if (reactor.inReactorThread()) {
            if (idleNanos > 0) {
                reactor.cancelDeadline(this);
            }
            watched.clear();
        }
    }

    @Override
    public long idleClosed() {
        return idleClosed.get();
    }

    /** Time between idle sweeps: a quarter of the timeout (at least 1 ms). */
    private long sweepPeriod() {
        return Math.max(TimeUnit.MILLISECONDS.toNanos(1), idleNanos / 4);
    }

    /** Reactor thread, I/O lock held: {@code s} is established; with an idle timeout it is watched from now. */
    void established(SoftStream s) {
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
                    s.closer.localError(TermCode.RDMAP_LOCAL_CATASTROPHIC,
                            new ConnectionTerminatedException(why, TermCode.RDMAP_LOCAL_CATASTROPHIC, false));
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
}
