package org.jwarp.soft;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CompletableFuture;

import org.jwarp.negotiation.InitiatorNegotiator;
import org.jwarp.negotiation.NegotiationOutcome;
import org.jwarp.negotiation.ResponderConfig;
import org.jwarp.ground.TermCode;
import org.jwarp.soft.cm.SetupStream;
import org.jwarp.soft.cm.SoftConnectionRequest;
import org.jwarp.soft.cm.SoftListener;
import org.jwarp.soft.cm.StreamSetup;
import org.jwarp.soft.cq.CqPoller;
import org.jwarp.soft.cq.PolledStream;
import org.jwarp.soft.cq.SoftCompletionQueue;
import org.jwarp.soft.loop.IoLock;
import org.jwarp.soft.loop.Reactor;
import org.jwarp.soft.verbs.QpConnection;
import org.jwarp.soft.verbs.SoftQueuePair;
import org.jwarp.verbs.ConnectionTerminatedException;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaTimeoutException;

/**
 * One LLP stream (a TCP connection) of the embedded provider, driven by its {@link Reactor}:
 * MPA connection setup (RFC 5044 §7.1.2, RFC 6581 §5 and §9, decided by the foundation's
 * negotiators), then FPDU mode through {@link SoftDataPath}. Every handshake step has a deadline,
 * frames are read strictly (nothing may follow an MPA frame before it is answered), and any
 * failure ends in {@link StreamClose#teardown}, which flushes every outstanding work request.
 *
 * <p>Split by concern as Linux siw is: {@link StreamSetup} (connection setup, siw_cm),
 * {@link StreamTransmit} (siw_qp_tx), {@link StreamReceive} (siw_qp_rx) and {@link StreamClose};
 * this class holds the state they share, the reactor callbacks and the deadlines.
 *
 * <p>Every field is guarded by the stream's I/O lock ({@link #io}): the reactor takes it around its
 * per-stream work, and a posting thread that finds the stream established may take it (without
 * waiting) to move its work requests into the wire engine and onto the socket itself, saving
 * the hand-off to the reactor. The engine is single-threaded; the lock serializes it, so posting
 * order, the RTR-first rule and the responder's fence (RFC 6581 §9.2) hold as before. Anything
 * only the reactor may do (teardown, deadlines) is deferred to it.
 *
 * <p>Receive polling: a thread waiting on one of the QP's completion queues may also take the
 * lock (without waiting) to read the socket itself, run the engine and so produce its own
 * completions ({@link StreamReceive#pollReceive}); see {@link SoftCompletionQueue} for the scheme. While a
 * poller holds the stream (<em>polled</em>), its key has no OP_READ interest, so the reactor is
 * not woken for its data; the poller hands it back before it parks ({@link StreamReceive#releasePoll}), the
 * reactor takes it back when the CQ's poller stays away longer than the lease
 * ({@link StreamReceive#revokePoll}), and anything the reactor must do (EOF, an I/O error, a TERM to act
 * on) hands it back at once. Reads happen only under the lock, so the byte stream reaches the
 * engine in order whoever reads it.
 */
final class SoftStream extends Reactor.Scheduled implements Reactor.Handler, Reactor.Timed, QpConnection, PolledStream,
        SetupStream {
    final boolean initiator;
    final StreamHost device;
    final Reactor reactor;
    final SoftConfig config;
    /** Responder: the listener that accepted it, and the listener's streams above setup (idle sweep). */
    final SoftListener listener;
    private final ListenerStreams accepted;
    private final InetSocketAddress remote;
    private SocketChannel ch;
    private SelectionKey key;
    private volatile Phase phase;
    private long deadline;
    private boolean timed;
    /** The deadline is the responder's RTR timer (RFC 6581 §9.2); a poller then leaves the stream alone. */
    private boolean rtrTimer;
    final CompletableFuture<SoftConnection> established = new CompletableFuture<>();
    /** Set once by setup on the reactor under {@link #io}; diagnostics read them racily. */
    private SoftQueuePair qp;
    private SoftConnection connection;
    private SoftDataPath data;
    final CompletableFuture<Void> closed = new CompletableFuture<>();
    /** Serializes the engine, the tx buffer and the socket writes between the reactor, posting and polling threads. */
    final IoLock io = new IoLock();
    /** Connection setup (siw_cm), transmit (siw_qp_tx), receive (siw_qp_rx) and close, each in its class. */
    final StreamSetup setup;
    final StreamTransmit sender = new StreamTransmit(this);
    final StreamReceive receiver = new StreamReceive(this);
    final StreamClose closer = new StreamClose(this);
    /** The idle sweep of {@link ListenerStreams}: progress last seen and since when (reactor thread, I/O lock). */
    private long idleMark;
    private long idleSince;
    /** Test hook, null in production; set under {@link #io}. */
    private FaultHook faults;

    private SoftStream(boolean initiator, StreamHost device, Reactor reactor, SoftListener listener,
                       ListenerStreams accepted, InetSocketAddress remote) {
        this.initiator = initiator;
        this.remote = remote;
        this.device = device;
        this.reactor = reactor;
        this.config = device.settings();
        this.listener = listener;
        this.accepted = accepted;
        this.setup = new StreamSetup(this, config);
    }

    /** An initiator stream; {@link StreamSetup#startConnect()} runs on the reactor. */
    static SoftStream initiator(StreamHost device, Reactor reactor, InetSocketAddress remote, SoftQueuePair qp,
                                InitiatorNegotiator neg) {
        SoftStream s = new SoftStream(true, device, reactor, null, null, remote);
        s.qp = qp;
        s.setup.initiate(neg);
        return s;
    }

    /** A responder stream over an accepted channel; call on the reactor thread. */
    static SoftStream responder(StreamHost device, Reactor reactor, SoftListener listener, ListenerStreams accepted,
                                SocketChannel ch, ResponderConfig base) throws IOException {
        SoftStream s = new SoftStream(false, device, reactor, listener, accepted,
                (InetSocketAddress) ch.getRemoteAddress());
        s.ch = ch;
        StreamSetup.configure(ch);
        s.key = reactor.register(ch, SelectionKey.OP_READ, s);
        s.setup.respond(base);
        return s;
    }

    @Override
    public boolean initiator() {
        return initiator;
    }

    @Override
    public StreamSetup setup() {
        return setup;
    }

    @Override
    public CompletableFuture<SoftConnection> established() {
        return established;
    }

    @Override
    public void abandon(RdmaException e) {
        closer.teardown(e, false);
    }

    @Override
    public Phase phase() {
        return phase;
    }

    SoftQueuePair queuePair() {
        return qp;
    }

    /** Setup and close move the stream between phases (I/O lock held). */
    @Override
    public void enter(Phase p) {
        phase = p;
    }

    NegotiationOutcome outcome() {
        return setup.outcome();
    }

    byte[] requestBytes() {
        return setup.requestBytes();
    }

    byte[] replyBytes() {
        return setup.replyBytes();
    }

    @Override
    public RdmaException failure() {
        return closer.failure();
    }

    /** The initiator's socket, opened by setup for each connect attempt (reactor, I/O lock held). */
    @Override
    public void open(SocketChannel c) {
        ch = c;
    }

    @Override
    public void register(int ops) throws IOException {
        key = reactor.register(ch, ops, this);
    }

    @Override
    public InetAddress sourceAddress() {
        return device.sourceAddress();
    }

    SelectionKey key() {
        return key;
    }

    /** The responder's QP, bound by the ULP's accept. */
    @Override
    public void bind(SoftQueuePair q) {
        qp = q;
    }

    /** FPDU mode's engine glue, built once setup decided; nothing is changed if it throws. */
    @Override
    public void establish(NegotiationOutcome outcome) {
        data = new SoftDataPath(this, qp, outcome, config);
    }

    @Override
    public void startFpduMode() {
        if (!initiator && data.awaitingFirstFpdu() && setup.outcome().rtr() != null) {
            startRtrTimer(config.responderTimeout().toNanos());
        }
        connection = new SoftConnection(this, qp);
        // Tracked here, on the reactor under the I/O lock, so finishClose's forget (same thread,
        // same lock) always comes after it: a peer that resets right after the Reply cannot leave
        // a closed connection pinned in the device.
        device.track(connection);
        qp.attach(this, data.ord());
        SoftCompletionQueue.addStream(qp, this);
        if (!initiator && listener != null) {
            listener.pendingDone(this);
            accepted.established(this);
        }
        data.start();
        sender.flushQuietly();
        if (initiator) {
            established.complete(connection);
        }
    }

    @Override
    public boolean offer(SoftConnectionRequest request) {
        return listener.offer(request);
    }

    @Override
    public ByteBuffer staging() {
        return sender.staging(true);
    }

    @Override
    public void clearStaged() {
        sender.clearStaged();
    }

    @Override
    public void interest(int ops) {
        sender.interest(ops);
    }

    @Override
    public void flush() throws IOException {
        sender.flush();
    }

    @Override
    public void readAll() throws IOException {
        receiver.readAll();
    }

    @Override
    public void fail(RdmaException e) {
        closer.fail(e);
    }

    @Override
    public void closeChannel() {
        closer.closeChannel();
    }

    @Override
    public void closeByUser() {
        closer.closeByUser();
    }

    SoftDataPath data() {
        return data;
    }

    /** Test hook, null in production. */
    FaultHook faults() {
        return faults;
    }

    /** Installs a test hook (tests, under {@link #io}). */
    void faults(FaultHook h) {
        faults = h;
    }

    /** The responder waits for the peer's RTR (RFC 6581 §9.2) until {@code fromNowNanos} from now. */
    private void startRtrTimer(long fromNowNanos) {
        setDeadline(fromNowNanos);
        rtrTimer = true;
    }

    /** A deadline (setup step, RTR or FPDU stall timer) is armed. */
    boolean deadlineSet() {
        return timed;
    }

    boolean rtrTimerRunning() {
        return rtrTimer;
    }

    /**
     * The idle sweep of {@link ListenerStreams} (reactor thread, I/O lock held): how long the stream has made no
     * progress, 0 when it moved since the last sweep (or this is the first).
     */
    long idleNanos(long now) {
        long mark = progress();
        if (mark != idleMark) {
            idleMark = mark;
            idleSince = now;
            return 0;
        }
        return now - idleSince;
    }

    /** {@link ListenerStreams} starts watching: its first sweep only records the progress. */
    void watchIdle() {
        idleMark = -1;
    }

    @Override
    public InetSocketAddress remoteAddress() {
        return remote;
    }

    InetSocketAddress localAddress() {
        try {
            return ch == null ? null : (InetSocketAddress) ch.getLocalAddress();
        } catch (IOException e) {
            return null;
        }
    }

    ByteBuffer txBuffer() {
        return sender.txBuffer();
    }

    @Override
    public Reactor reactor() {
        return reactor;
    }

    @Override
    public int claim(CqPoller p) {
        return receiver.claim(p);
    }

    @Override
    public int pollReceive(ByteBuffer rx, CqPoller p) {
        return receiver.pollReceive(rx, p);
    }

    @Override
    public void releasePoll(CqPoller p) {
        receiver.releasePoll(p);
    }

    @Override
    public boolean revokePoll(CqPoller p) {
        return receiver.revokePoll(p);
    }

    /** The socket (the CQ's poll selector registers it). */
    @Override
    public SocketChannel channel() {
        return ch;
    }

    /** Reactor side: takes {@link #io}, spinning briefly first (a posting thread holds it only to transmit). */
    @Override
    public void lockIo() {
        for (int i = 0; i < 256; i++) {
            if (io.tryLock()) {
                return;
            }
            Thread.onSpinWait();
        }
        io.lock();
    }

    @Override
    public void unlockIo() {
        io.unlock();
    }

    /** The data path saw the first inbound FPDU (the RTR in P2P): stop the RTR timer. */
    void firstFpduArrived() {
        if (rtrTimer) {
            rtrTimer = false;
            clearDeadline();
        }
    }

    @Override
    public SoftConnection connection() {
        return connection;
    }

    @Override
    public void onReady(SelectionKey k) {
        lockIo();
        try {
            try {
                if (!k.isValid()) {
                    return;
                }
                if (k.isConnectable()) {
                    if (ch.finishConnect()) {
                        setup.onConnected();
                    }
                    return;
                }
                if (k.isWritable()) {
                    sender.flush();
                    if (phase == Phase.ESTABLISHED) {
                        data.pump();
                        sender.flush();
                    }
                }
                if (k.isValid() && k.isReadable()) {
                    receiver.readAll();
                }
            } catch (CancelledKeyException e) {
                // closed meanwhile
            } catch (IOException e) {
                onIoError(e);
            } catch (RuntimeException | Error e) {
                closer.fault(e);
            }
        } finally {
            io.unlock();
        }
    }

void consume(ByteBuffer rx) {
        switch (phase) {
            case AWAIT_REPLY -> setup.onReplyBytes(rx);
            case AWAIT_REQUEST -> setup.onRequestBytes(rx);
            case AWAIT_DECISION -> setup.rejectPending(); // RFC 5044 §7.1.2: the initiator sends nothing before the Reply
            case ESTABLISHED -> data.onBytes(rx);
            default -> rx.position(rx.limit());
        }
    }

void onEof() {
        switch (phase) {
            case AWAIT_REPLY, AWAIT_REQUEST, AWAIT_DECISION -> setup.peerLost();
            case ESTABLISHED -> {
                RdmaException e = data.peerTerm() != null ? data.peerTermException()
                        : new RdmaException("peer " + remote + " closed the connection (RFC 5044 §7.2 stream lost)");
                closer.teardown(e, false);
            }
            default -> closer.teardown(failure(), false);
        }
    }

    @Override
    public void onIoError(IOException e) {
        if (phase == Phase.AWAIT_REPLY || phase == Phase.CONNECTING) {
            if (phase == Phase.AWAIT_REPLY && setup.initiatorUndecided()) {
                setup.peerLost();
                return;
            }
            closer.fail(new RdmaException("connection to " + remote + " failed: " + e.getMessage(), e));
            return;
        }
        closer.teardown(failure() != null ? failure() : new RdmaException("I/O error on " + remote + ": " + e.getMessage(), e), false);
    }

    @Override
    protected void runScheduled() {
        lockIo();
        try {
            if (phase != Phase.ESTABLISHED) {
                return;
            }
            if (closer.fault() != null) {
                closer.endFaulted(true); // met by an application thread driving the stream inline
                return;
            }
            if (receiver.pendingEof()) {
                onEof(); // met by a poller
                return;
            }
            if (receiver.pendingError() != null) {
                onIoError(receiver.pendingError());
                return;
            }
            try {
                data.pump();
                sender.flush();
                receiver.armStallTimer();
            } catch (IOException e) {
                onIoError(e);
            } catch (RuntimeException | Error e) {
                closer.fault(e);
            }
        } finally {
            io.unlock();
        }
    }

    @Override
    public void setDeadline(long fromNowNanos) {
        deadline = System.nanoTime() + fromNowNanos;
        if (!timed) {
            timed = true;
            reactor.addDeadline(this);
        }
    }

    @Override
    public void clearDeadline() {
        if (timed) {
            timed = false;
            reactor.cancelDeadline(this);
        }
    }

    @Override
    public long deadlineNanos() {
        return deadline;
    }

    @Override
    public void onDeadline(long now) {
        lockIo();
        try {
            timed = false;
            switch (phase) {
                case CONNECTING, AWAIT_REPLY, AWAIT_REQUEST, AWAIT_DECISION -> setup.onDeadline();
                case ESTABLISHED -> {
                    if (rtrTimer) {
                        rtrTimer = false;
                        closer.localError(new RdmaTimeoutException("no RTR from " + remote + " within "
                                + config.responderTimeout().toMillis() + " ms (RFC 6581 §9.2); sent TERM 2/0/5"));
                    } else {
                        receiver.onStallDeadline();
                    }
                }
                case CLOSING -> closer.finishClose();
                default -> {
                }
            }
        } catch (RuntimeException | Error e) {
            closer.fault(e);
        } finally {
            io.unlock();
        }
    }

    /**
     * Ends an established stream with TERM {@code code} (RFC 5040 §7: the stream goes to error and
     * the peer is told), from any thread: the reactor runs it under the I/O lock. What the
     * application asked for ({@link SoftConnection#terminate}) or met (a post naming a region that is
     * gone); {@code cause} is what {@code failure()} says. Cold path.
     */
    @Override
    public void terminateLocally(TermCode code, RdmaException cause) {
        Runnable end = () -> {
            lockIo();
            try {
                if (phase == Phase.ESTABLISHED && data != null) {
                    closer.localError(code, new ConnectionTerminatedException(cause.getMessage(), code, false));
                }
            } finally {
                io.unlock();
            }
        };
        try {
            reactor.execute(end);
        } catch (IllegalStateException e) {
            closer.closeFromOutside(); // the reactor is gone: no TERM can leave, close at least
        }
    }

    /** A fatal local condition outside the stream (a CQ overrun), run on the reactor: tear down and flush. */
    @Override
    public void failFatal(RdmaException cause) {
        lockIo();
        try {
            closer.teardown(cause, false);
        } finally {
            io.unlock();
        }
    }

    @Override
    public void onReactorClose() {
        lockIo();
        try {
            closer.teardown(new RdmaException("provider closed"), false);
        } finally {
            io.unlock();
        }
    }

    /**
     * Progress of an established stream for the idle check of {@link ListenerStreams}: whole inbound FPDUs plus
     * send-queue completions (I/O lock held; cold path).
     */
    long progress() {
        return data.fpdusReceived() + qp.sendsDone();
    }

    /** Inbound FPDUs decoded so far (racy read: tests, diagnostics). */
    long fpdusReceived() {
        SoftDataPath d = data;
        return d == null ? 0 : d.fpdusReceived();
    }

    /** Counters for diagnostics (racy reads, any thread). */
    @Override
    public void kick() {
        sender.kick();
    }

    @Override
    public String debugState() {
        SoftDataPath d = data;
        Thread holder = io.owner();
        ByteBuffer t = sender.txBuffer(); // read once: the I/O-lock holder may give the staging area back meanwhile
        SelectionKey k = key;
        String ops;
        try {
            ops = k == null ? "none" : k.isValid() ? "interest=" + k.interestOps() : "cancelled";
        } catch (RuntimeException e) {
            ops = "cancelled";
        }
        StreamTransmit st = sender;
        return phase + (d == null ? "" : ", " + d.debugState()) + ", tx=" + (t == null ? 0 : t.position())
                + ", key " + ops + (receiver.isPolled() ? ", polled" : "") + (st.starved() ? ", starved" : "")
                + st.stagingState()
                + ", staging lent " + device.buffers().stagingInUse() + " waiters " + device.buffers().stagingWaiters()
                + ", reactor " + reactor.thread().getName() + " " + reactor.thread().getState()
                + (holder == null ? "" : ", I/O lock held by \"" + holder.getName() + "\" #" + holder.getId() + " "
                        + holder.getState());
    }

    @Override
    public String toString() {
        return "SoftStream[" + (initiator ? "initiator" : "responder") + " " + remote + " " + phase + "]";
    }
}
