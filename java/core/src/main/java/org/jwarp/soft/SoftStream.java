package org.jwarp.soft;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import org.jwarp.mpa.MpaDecodeException;
import org.jwarp.mpa.MpaFrame;
import org.jwarp.mpa.MpaFrameReader;
import org.jwarp.negotiation.InitiatorNegotiator;
import org.jwarp.negotiation.NegotiationAction;
import org.jwarp.negotiation.NegotiationDecision;
import org.jwarp.negotiation.NegotiationOutcome;
import org.jwarp.negotiation.NegotiationStatus;
import org.jwarp.negotiation.ResponderConfig;
import org.jwarp.negotiation.ResponderNegotiator;
import org.jwarp.ground.TermCode;
import org.jwarp.verbs.ConnectionRejectedException;
import org.jwarp.verbs.ConnectionTerminatedException;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaTimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One LLP stream (a TCP connection) of the embedded provider, driven by its {@link Reactor}:
 * MPA connection setup (RFC 5044 §7.1.2, RFC 6581 §5 and §9, decided by the foundation's
 * negotiators), then FPDU mode through {@link SoftDataPath}. Every handshake step has a deadline,
 * frames are read strictly (nothing may follow an MPA frame before it is answered), and any
 * failure ends in {@link #teardown}, which flushes every outstanding work request.
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
 * completions ({@link #pollReceive}); see {@link SoftCompletionQueue} for the scheme. While a
 * poller holds the stream (<em>polled</em>), its key has no OP_READ interest, so the reactor is
 * not woken for its data; the poller hands it back before it parks ({@link #releasePoll}), the
 * reactor takes it back when the poller stays away longer than the lease
 * ({@link #revokeStalePoll}), and anything the reactor must do (EOF, an I/O error, a TERM to act
 * on) hands it back at once. Reads happen only under the lock, so the byte stream reaches the
 * engine in order whoever reads it.
 */
final class SoftStream extends Reactor.Scheduled implements Reactor.Handler, Reactor.Timed {
    private static final Logger LOG = LoggerFactory.getLogger(SoftStream.class);
    /** {@link #pollReceive} results. */
    static final int POLL_NO = 0;
    static final int POLL_BUSY = 1;
    static final int POLL_HELD = 2;
    /** Pump rounds (each up to 16 FPDUs) a posting or polling thread runs before leaving the rest to the reactor. */
    private static final int INLINE_PUMPS = 64;
    /** Bytes an established stream reads per reactor turn (bounded work per connection per turn). */
    static final int READ_BUDGET = 64 * 1024;
    /** Longest time a closing stream keeps trying to flush queued bytes (a TERM, the last FPDUs). */
    private static final long CLOSE_LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

    enum Phase { CONNECTING, AWAIT_REPLY, AWAIT_REQUEST, AWAIT_DECISION, ESTABLISHED, CLOSING, CLOSED }

    final boolean initiator;
    final SoftDevice device;
    final Reactor reactor;
    private final SoftConfig config;
    private SocketChannel ch;
    private SelectionKey key;
    private volatile Phase phase;
    private long deadline;
    private boolean timed;
    /** The deadline is the responder's RTR timer (RFC 6581 §9.2); a poller then leaves the stream alone. */
    private boolean rtrTimer;
    /** Inbound FPDUs decoded when the FPDU stall timer was armed (reactor, under {@link #io}). */
    private long stallMark;
    /** Most FPDUs decoded in one reactor read turn (reactor only; read racily by tests). */
    private volatile long maxFpdusPerTurn;
    private ByteBuffer tx;

    // initiator
    private InetSocketAddress remote;
    private InitiatorNegotiator ineg;
    final CompletableFuture<SoftConnection> established = new CompletableFuture<>();

    // responder
    private final SoftListener listener;
    private ResponderNegotiator rneg;
    private SoftConnectionRequest request;

    private MpaFrameReader reader;
    /** Stream bytes received while waiting for the peer's MPA frame (a TERM can only be at offset 0). */
    private long setupBytes;
    private byte[] requestBytes;
    private byte[] replyBytes;
    private NegotiationOutcome outcome;
    private SoftQueuePair qp;
    private SoftConnection connection;
    private SoftDataPath data;
    private volatile RdmaException failure;
    final CompletableFuture<Void> closed = new CompletableFuture<>();
    /** Serializes the engine, the tx buffer and the socket writes between the reactor and posting threads. */
    private final ReentrantLock io = new ReentrantLock();
    /** True while a posting thread transmits under {@link #io}; guarded by it. */
    private boolean inline;
    /** Set during inline transmit when something needs the reactor (an I/O error, a TERM); guarded by {@link #io}. */
    private boolean deferred;
    /** A poller reads the socket and OP_READ is off; written under {@link #io}, read racily. */
    private volatile boolean polled;
    /** Set by {@link #outputLeft} during inline work; guarded by {@link #io}. */
    private boolean moreOutput;
    /** When a poller last read the socket ({@link System#nanoTime()}). */
    private volatile long polledAt;
    /** A poller met EOF / an I/O error; the reactor acts on it. Guarded by {@link #io}. */
    private boolean pendingEof;
    private IOException pendingError;

    private SoftStream(boolean initiator, SoftDevice device, Reactor reactor, SoftListener listener) {
        this.initiator = initiator;
        this.device = device;
        this.reactor = reactor;
        this.config = device.config();
        this.listener = listener;
    }

    /** An initiator stream; {@link #startConnect()} runs on the reactor. */
    static SoftStream initiator(SoftDevice device, Reactor reactor, InetSocketAddress remote, SoftQueuePair qp,
                                InitiatorNegotiator neg) {
        SoftStream s = new SoftStream(true, device, reactor, null);
        s.remote = remote;
        s.qp = qp;
        s.ineg = neg;
        return s;
    }

    /** A responder stream over an accepted channel; call on the reactor thread. */
    static SoftStream responder(SoftDevice device, Reactor reactor, SoftListener listener, SocketChannel ch,
                                ResponderConfig base) throws IOException {
        SoftStream s = new SoftStream(false, device, reactor, listener);
        s.ch = ch;
        s.remote = (InetSocketAddress) ch.getRemoteAddress();
        s.rneg = new ResponderNegotiator(base);
        s.reader = s.rneg.newRequestReader();
        configure(ch);
        s.tx = device.buffers().acquire(s.config.txBufferSize());
        s.key = reactor.register(ch, SelectionKey.OP_READ, s);
        s.phase = Phase.AWAIT_REQUEST;
        s.setDeadline(s.config.responderTimeout().toNanos());
        return s;
    }

    private static void configure(SocketChannel ch) throws IOException {
        ch.configureBlocking(false);
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
    }

    // ---------------------------------------------------------------- accessors (any thread)

    Phase phase() {
        return phase;
    }

    SoftQueuePair queuePair() {
        return qp;
    }

    NegotiationOutcome outcome() {
        return outcome;
    }

    byte[] requestBytes() {
        return requestBytes;
    }

    byte[] replyBytes() {
        return replyBytes;
    }

    RdmaException failure() {
        return failure;
    }

    InetSocketAddress remoteAddress() {
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
        return tx;
    }

    /**
     * Hot path from application threads: new WRs are queued. When the stream is established and
     * nobody else drives it right now, the posting thread transmits them itself; otherwise (lock
     * busy, socket full, anything left for the reactor) the reactor is asked to look.
     */
    void kick() {
        if (phase == Phase.ESTABLISHED && !io.isHeldByCurrentThread() && !reactor.inReactorThread()
                && io.tryLock()) {
            boolean done;
            try {
                done = transmitInline();
            } finally {
                io.unlock();
            }
            if (done) {
                return;
            }
        }
        reactor.schedule(this);
    }

    /**
     * Posting thread, {@link #io} held: pump and flush, up to {@link #INLINE_PUMPS} rounds while
     * the socket takes the bytes (a large Write leaves from the posting thread until the socket is
     * full, not from the reactor); true when nothing is left for the reactor.
     */
    private boolean transmitInline() {
        if (phase != Phase.ESTABLISHED) {
            return false;
        }
        inline = true;
        deferred = false;
        try {
            pumpInline();
            if (!deferred) {
                flush();
            }
        } catch (IOException e) {
            deferred = true; // the reactor's next write or read meets the error again and tears down
        } finally {
            inline = false;
        }
        return !deferred && phase == Phase.ESTABLISHED && tx.position() == 0 && !data.hasPendingOutput();
    }

    /** {@link #io} held, {@link #inline} set: engine output until it is done, the socket is full or the round cap. */
    private void pumpInline() {
        for (int i = 0; i < INLINE_PUMPS; i++) {
            moreOutput = false;
            data.pump();
            if (deferred || !moreOutput) {
                return;
            }
        }
    }

    /**
     * The data path has output left and room in the tx buffer (its round budget ran out): an
     * inline driver loops ({@link #pumpInline}); on the reactor the stream yields to the others
     * and continues in the next loop turn.
     */
    void outputLeft() {
        if (inline) {
            moreOutput = true;
        } else {
            kick();
        }
    }

    /** True while a posting thread transmits (the data path then defers teardown to the reactor). */
    boolean inlineTransmit() {
        return inline;
    }

    /** Inline transmit met something only the reactor may handle; it runs once the posting thread is done. */
    void deferToReactor() {
        deferred = true;
    }

    // ---------------------------------------------------------------- receive polling

    /**
     * Poller thread (a thread waiting on a CQ of this stream's QP): if nobody else drives the
     * stream right now, reads what the socket has (non-blocking), runs the engine on it and
     * transmits what that produced (Read Responses, answers posted meanwhile); completions go to
     * the CQs as they would from the reactor. With {@code claim} it takes the stream over from the
     * reactor (OP_READ off) if needed; without, it reads only a stream some poller already holds.
     * Anything only the reactor may do hands the stream back.
     *
     * @param rx   the poller's receive buffer (the engine copies what it keeps)
     * @param hold the leader blocks on the socket next: the lease does not run meanwhile
     * @return {@link #POLL_HELD} when the caller holds the stream now, {@link #POLL_BUSY} when
     *         someone else drove it just now, {@link #POLL_NO} when it stays with the reactor
     */
    int pollReceive(ByteBuffer rx, boolean claim, boolean hold) {
        if (phase != Phase.ESTABLISHED || (!claim && !polled) || io.isHeldByCurrentThread()
                || reactor.inReactorThread()) {
            return POLL_NO;
        }
        if (!io.tryLock()) {
            return POLL_BUSY;
        }
        try {
            if (phase != Phase.ESTABLISHED || rtrTimer || pendingEof || pendingError != null || key == null
                    || !key.isValid()) {
                return POLL_NO; // a deadline (the RTR timer) or a pending event: the reactor's business
            }
            if (!polled) {
                if (!claim) {
                    return POLL_NO;
                }
                polled = true;
                readInterest(false);
                reactor.addPolled(this);
            }
            polledAt = System.nanoTime();
            inline = true;
            deferred = false;
            boolean got = false;
            try {
                for (int round = 0; round < 8; round++) {
                    rx.clear();
                    int n = ch.read(rx);
                    if (n < 0) {
                        pendingEof = true;
                        deferred = true;
                        break;
                    }
                    if (n == 0) {
                        break;
                    }
                    got = true;
                    rx.flip();
                    data.onBytes(rx);
                    if (deferred || phase != Phase.ESTABLISHED || n < rx.capacity()) {
                        break;
                    }
                }
                // Transmit what the input produced (Read Responses, a TERM); with nothing read the
                // output side is the posters' and the reactor's (a pump here would only contend).
                if (got && !deferred) {
                    pumpInline();
                    if (!deferred) {
                        flush();
                    }
                }
            } catch (IOException e) {
                pendingError = e;
                deferred = true;
            } finally {
                inline = false;
            }
            if (deferred) {
                unpoll();
                reactor.schedule(this); // wakes the loop: it applies OP_READ and acts on what was met
                return POLL_NO;
            }
            if (moreOutput) {
                reactor.schedule(this); // round cap: the reactor goes on
            }
            if (hold) {
                // Set under the lock: a lease check (also under it) cannot revoke what the
                // leader is about to block on.
                polledAt = System.nanoTime() + (1L << 62);
            }
            return POLL_HELD;
        } catch (CancelledKeyException e) {
            return POLL_NO; // closed meanwhile
        } finally {
            io.unlock();
        }
    }

    /** Poller thread, about to park (holding no CQ lock): the reactor reads this stream again. */
    void releasePoll() {
        if (!polled) {
            return;
        }
        lockIo();
        try {
            if (polled) {
                unpoll();
                reactor.wake(); // the selector applies the restored OP_READ only when it (re)enters select
            }
        } finally {
            io.unlock();
        }
    }

    /** Reactor thread: takes the stream back when its poller has not read it for {@code leaseNanos}. */
    void revokeStalePoll(long now, long leaseNanos) {
        if (!polled || now - polledAt < leaseNanos || !io.tryLock()) {
            return; // a poller holding the lock is reading: not stale
        }
        try {
            if (polled && now - polledAt >= leaseNanos) {
                unpoll();
                armStallTimer();
            }
        } finally {
            io.unlock();
        }
    }

    /** The leader stopped blocking: the lease runs from now. */
    void touchPoll() {
        polledAt = System.nanoTime();
    }

    /** The socket (the CQ's poll selector registers it). */
    SocketChannel channel() {
        return ch;
    }

    /** True while a poller holds the stream (tests, diagnostics). */
    boolean isPolled() {
        return polled;
    }

    /** {@link #io} held. */
    private void unpoll() {
        if (polled) {
            polled = false;
            readInterest(true);
            reactor.removePolled(this);
            if (data != null && data.partialInput() && !timed) {
                reactor.schedule(this); // the reactor arms the FPDU stall timer (runScheduled)
            }
        }
    }

    private void readInterest(boolean on) {
        if (key != null && key.isValid()) {
            try {
                int ops = key.interestOps();
                int want = on ? ops | SelectionKey.OP_READ : ops & ~SelectionKey.OP_READ;
                if (want != ops) {
                    key.interestOps(want);
                }
            } catch (CancelledKeyException e) {
                // closed meanwhile
            }
        }
    }

    /** Reactor side: takes {@link #io}, spinning briefly first (a posting thread holds it only to transmit). */
    private void lockIo() {
        for (int i = 0; i < 256; i++) {
            if (io.tryLock()) {
                return;
            }
            Thread.onSpinWait();
        }
        io.lock();
    }

    // ---------------------------------------------------------------- initiator setup

    void startConnect() {
        lockIo();
        try {
            try {
                ch = SocketChannel.open();
                configure(ch);
                if (tx == null) {
                    tx = device.buffers().acquire(config.txBufferSize());
                } else {
                    tx.clear(); // a Rev 1 retry (RFC 6581 §10): nothing of the first attempt goes out
                }
                reader = new MpaFrameReader(MpaFrame.Kind.REPLY, ineg.config().limits(), false);
                boolean done = ch.connect(remote);
                key = reactor.register(ch, done ? SelectionKey.OP_READ : SelectionKey.OP_CONNECT, this);
                phase = Phase.CONNECTING;
                setDeadline(config.initiatorTimeout().toNanos());
                if (done) {
                    onConnected();
                }
            } catch (IOException | RuntimeException e) {
                fail(new RdmaException("connect to " + remote + " failed: " + e.getMessage(), e));
            }
        } finally {
            io.unlock();
        }
    }

    private void onConnected() throws IOException {
        MpaFrame req = ineg.createRequest();
        setupBytes = 0;
        requestBytes = req.toBytes();
        tx.put(requestBytes);
        phase = Phase.AWAIT_REPLY;
        reader.reset();
        interest(SelectionKey.OP_READ);
        setDeadline(config.initiatorTimeout().toNanos());
        flush();
    }

    /** RFC 6581 §10: the peer closed the Rev 2 attempt; reconnect and send a Rev 1 request. */
    private void retryUnenhanced() {
        closeChannel();
        LOG.debug("retrying {} with an unenhanced MPA request (RFC 6581 §10)", remote);
        startConnect();
    }

    private void onReplyBytes(ByteBuffer in) {
        int start = in.position();
        MpaFrameReader.Status st;
        boolean atStart = setupBytes == 0;
        setupBytes += in.remaining();
        try {
            st = reader.feed(in);
        } catch (MpaDecodeException e) {
            TermCode peerTerm = atStart ? SoftTerm.sniff(in, start) : null;
            if (peerTerm != null) {
                decideInitiator(ineg.onTerminate(peerTerm), true);
            } else {
                decideInitiator(ineg.onMalformedReply(e), false);
            }
            return;
        }
        if (st != MpaFrameReader.Status.COMPLETE) {
            return;
        }
        MpaFrame reply = reader.frame();
        replyBytes = reply.toBytes();
        if (in.hasRemaining() && !reply.reject()) {
            decideInitiator(ineg.onMalformedReply(new MpaDecodeException("MPA frame", in.remaining()
                    + " bytes follow the MPA Reply; the responder must wait for the initiator's first FPDU",
                    "RFC 5044 §7.1.2")), false);
            return;
        }
        in.position(in.limit());
        decideInitiator(ineg.onReply(reply), false);
    }

    private void decideInitiator(NegotiationDecision d, boolean peerTerminated) {
        outcome = d.outcome();
        switch (d.action()) {
            case ESTABLISH -> establish();
            case RETRY_UNENHANCED -> retryUnenhanced();
            case TERMINATE -> {
                sendSetupTerm(d.term());
                fail(new ConnectionTerminatedException("MPA setup with " + remote + " failed: " + outcome.reason(),
                        d.term(), false));
            }
            default -> {
                RdmaException e;
                if (outcome.status() == NegotiationStatus.REJECTED) {
                    e = new ConnectionRejectedException("connection to " + remote + " rejected: " + outcome.reason(),
                            outcome.peerPrivateData(), outcome.peerValuesKnown() ? outcome.peerIrd() : -1,
                            outcome.peerValuesKnown() ? outcome.peerOrd() : -1);
                } else if (outcome.term() != null && peerTerminated) {
                    e = new ConnectionTerminatedException("MPA setup with " + remote + " ended: " + outcome.reason(),
                            outcome.term(), true);
                } else {
                    e = new RdmaException("MPA setup with " + remote + " closed: " + outcome.reason());
                }
                fail(e);
            }
        }
    }

    // ---------------------------------------------------------------- responder setup

    private void onRequestBytes(ByteBuffer in) {
        int start = in.position();
        MpaFrameReader.Status st;
        boolean atStart = setupBytes == 0;
        setupBytes += in.remaining();
        try {
            st = reader.feed(in);
        } catch (MpaDecodeException e) {
            TermCode peerTerm = atStart ? SoftTerm.sniff(in, start) : null;
            in.position(in.limit());
            decideResponder(peerTerm != null ? rneg.onTerminate(peerTerm) : rneg.onMalformedRequest(e));
            return;
        }
        if (st != MpaFrameReader.Status.COMPLETE) {
            return;
        }
        MpaFrame req = reader.frame();
        requestBytes = req.toBytes();
        NegotiationDecision d = rneg.onRequest(req);
        if (d.action() == NegotiationAction.AWAIT_ACCEPT) {
            phase = Phase.AWAIT_DECISION;
            setDeadline(config.decisionTimeout().toNanos());
            request = new SoftConnectionRequest(this, rneg.peerRequest(), remote);
            if (!listener.offer(request)) {
                decideResponder(rneg.reject(new byte[0]));
            }
        } else {
            decideResponder(d);
        }
    }

    /** Reactor thread: the ULP accepted. Returns the connection or throws. */
    SoftConnection accept(SoftQueuePair q, ResponderConfig cfg) throws RdmaException {
        lockIo();
        try {
            if (phase != Phase.AWAIT_DECISION) {
                throw new RdmaException("connection request from " + remote + " is no longer pending (" + phase
                        + (failure != null ? ": " + failure.getMessage() : "") + ")");
            }
            NegotiationDecision d;
            try {
                d = rneg.accept(cfg);
            } catch (IllegalArgumentException e) {
                throw new RdmaException("accept: " + e.getMessage(), e);
            }
            qp = q;
            decideResponder(d);
            if (connection == null) {
                throw failure != null ? failure : new RdmaException("accept failed: " + d.outcome().reason());
            }
            return connection;
        } finally {
            io.unlock();
        }
    }

    /**
     * Reactor thread, listener full: this stream has not sent a complete MPA Request and makes
     * room for a newer one. Like a timeout, a local error once TCP is up: TERM 2/0/5 (CRC 0) before
     * the close (RFC 6581 §9.3).
     */
    void evict(int backlog) {
        lockIo();
        try {
            if (phase != Phase.AWAIT_REQUEST) {
                return;
            }
            LOG.debug("evicting {}: {} connections pending without a complete MPA Request", remote, backlog);
            sendSetupTerm(TermCode.MPA_LOCAL_CATASTROPHIC);
            fail(new RdmaException("evicted " + remote + ": the pending-handshake limit (" + backlog
                    + ") was reached before its MPA Request was complete; sent TERM 2/0/5"));
        } finally {
            io.unlock();
        }
    }

    /** Reactor thread, right after accept: reads what already arrived (usually the whole MPA Request). */
    void readEarly() {
        lockIo();
        try {
            if (phase == Phase.AWAIT_REQUEST) {
                readAll();
            }
        } catch (IOException e) {
            onIoError(e);
        } finally {
            io.unlock();
        }
    }

    /** Reactor thread, listener closing: reject an undecided request, drop anything else pending. */
    void rejectIfUndecided() {
        lockIo();
        try {
            if (phase == Phase.AWAIT_DECISION) {
                request.invalidate();
                decideResponder(rneg.reject(new byte[0]));
            } else {
                closeByUser();
            }
        } finally {
            io.unlock();
        }
    }

    /** Reactor thread: the ULP rejected. */
    void reject(byte[] privateData) throws RdmaException {
        lockIo();
        try {
            if (phase != Phase.AWAIT_DECISION) {
                throw new RdmaException("connection request from " + remote + " is no longer pending (" + phase + ")");
            }
            try {
                decideResponder(rneg.reject(privateData));
            } catch (IllegalArgumentException e) {
                throw new RdmaException("reject: " + e.getMessage(), e);
            }
        } finally {
            io.unlock();
        }
    }

    private void decideResponder(NegotiationDecision d) {
        outcome = d.outcome();
        if (d.frame() != null) {
            replyBytes = d.frameBytes();
            tx.put(replyBytes);
        }
        switch (d.action()) {
            case ESTABLISH -> establish();
            case REJECT -> {
                if (d.term() != null) {
                    sendSetupTerm(d.term());
                    fail(new ConnectionTerminatedException("rejected " + remote + ": " + outcome.reason(), d.term(),
                            false));
                } else {
                    fail(new RdmaException("rejected " + remote + ": " + outcome.reason()));
                }
            }
            case TERMINATE -> {
                sendSetupTerm(d.term());
                fail(new ConnectionTerminatedException("MPA setup with " + remote + " failed: " + outcome.reason(),
                        d.term(), false));
            }
            default -> fail(new RdmaException("MPA setup with " + remote + " closed: " + outcome.reason()));
        }
    }

    // ---------------------------------------------------------------- both sides

    /** The MPA Reply this side sent as responder, or null (initiator, or not sent). */
    MpaFrame sentReply() {
        return rneg != null ? rneg.reply() : null;
    }

    private void establish() {
        try {
            data = new SoftDataPath(this, qp, outcome, config);
        } catch (RuntimeException e) {
            LOG.error("cannot set up the data path for {}", remote, e);
            sendSetupTerm(TermCode.MPA_LOCAL_CATASTROPHIC);
            fail(new ConnectionTerminatedException("local error setting up " + remote + ": " + e, 
                    TermCode.MPA_LOCAL_CATASTROPHIC, false));
            return;
        }
        phase = Phase.ESTABLISHED;
        reader = null; // its staging buffer is not needed in FPDU mode
        clearDeadline();
        if (!initiator && data.awaitingFirstFpdu() && outcome.rtr() != null) {
            setDeadline(config.responderTimeout().toNanos());
            rtrTimer = true;
        }
        connection = new SoftConnection(this, qp);
        // Tracked here, on the reactor under the I/O lock, so finishClose's forget (same thread,
        // same lock) always comes after it: a peer that resets right after the Reply cannot leave
        // a closed connection pinned in the device.
        device.track(connection);
        qp.attach(this, data.ord());
        if (!initiator && listener != null) {
            listener.pendingDone(this);
        }
        data.start();
        flushQuietly();
        if (initiator) {
            established.complete(connection);
        }
    }

    /** The data path saw the first inbound FPDU (the RTR in P2P): stop the RTR timer. */
    void firstFpduArrived() {
        if (rtrTimer) {
            rtrTimer = false;
            clearDeadline();
        }
    }

    /**
     * Reactor thread, {@link #io} held, after input: part of an FPDU is buffered and no timer
     * runs, so arm the FPDU stall timer. It is checked lazily ({@link #onStallDeadline}): no
     * per-read timer churn.
     */
    private void armStallTimer() {
        if (phase == Phase.ESTABLISHED && !timed && data.partialInput()) {
            stallMark = data.fpdusReceived();
            setDeadline(config.fpduStallTimeout().toNanos());
        }
    }

    /** The stall timer fired: no partial FPDU (disarm), progress (re-arm), or a stall (TERM 2/0/5, close). */
    private void onStallDeadline() {
        if (!data.partialInput()) {
            return;
        }
        long n = data.fpdusReceived();
        if (n != stallMark) {
            stallMark = n;
            setDeadline(config.fpduStallTimeout().toNanos());
            return;
        }
        localError(new RdmaTimeoutException("an FPDU from " + remote + " stayed incomplete for "
                + config.fpduStallTimeout().toMillis() + " ms; sent TERM 2/0/5 (RFC 6581 §9.3)"));
    }

    /**
     * Established stream, local error without a code of its own: TERM layer 2 / type 0 / code 5
     * through the engine (CRC as negotiated), then close (RFC 6581 §9.3). {@code e} is what the
     * ULP sees.
     */
    private void localError(RdmaException e) {
        if (failure == null) {
            failure = e;
        }
        data.localError(TermCode.MPA_LOCAL_CATASTROPHIC, e.getMessage());
        if (phase == Phase.ESTABLISHED) {
            teardown(e, true); // the TERM could not be queued (tx full): close anyway
        }
    }

    SoftConnection connection() {
        return connection;
    }

    /** Queues an MPA-layer TERM; setup TERMs carry CRC 0 (CRC is not active yet). */
    private void sendSetupTerm(TermCode code) {
        if (code != null && tx != null) {
            SoftTerm.encodeSetupTerm(tx, code);
        }
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
                        onConnected();
                    }
                    return;
                }
                if (k.isWritable()) {
                    flush();
                    if (phase == Phase.ESTABLISHED) {
                        data.pump();
                        flush();
                    }
                }
                if (k.isValid() && k.isReadable()) {
                    readAll();
                }
            } catch (CancelledKeyException e) {
                // closed meanwhile
            } catch (IOException e) {
                onIoError(e);
            }
        } finally {
            io.unlock();
        }
    }

    private void readAll() throws IOException {
        ByteBuffer rx = reactor.rxBuffer();
        // In FPDU mode one read of at most READ_BUDGET bytes per loop turn: a peer flooding tiny
        // FPDUs gets the same share of the reactor as every other ready stream (the key stays
        // readable, so the next turn goes on; nothing is lost).
        int rounds = phase == Phase.ESTABLISHED ? 1 : 8;
        long fpdusBefore = data != null ? data.fpdusReceived() : 0;
        for (int round = 0; round < rounds && phase != Phase.CLOSED; round++) {
            rx.clear();
            if (phase == Phase.ESTABLISHED) {
                rx.limit(READ_BUDGET);
            }
            int n = ch.read(rx);
            if (n < 0) {
                onEof();
                return;
            }
            if (n == 0) {
                return;
            }
            rx.flip();
            consume(rx);
            if (n < rx.capacity()) {
                break;
            }
        }
        if (phase == Phase.ESTABLISHED) {
            long turn = data.fpdusReceived() - fpdusBefore;
            if (turn > maxFpdusPerTurn) {
                maxFpdusPerTurn = turn;
            }
            data.pump();
            armStallTimer();
        }
        flush();
    }

    /** Most inbound FPDUs one reactor turn decoded for this stream (racy read: tests, diagnostics). */
    long maxFpdusPerTurn() {
        return maxFpdusPerTurn;
    }

    private void consume(ByteBuffer rx) {
        switch (phase) {
            case AWAIT_REPLY -> onReplyBytes(rx);
            case AWAIT_REQUEST -> onRequestBytes(rx);
            case AWAIT_DECISION -> {
                // RFC 5044 §7.1.2: the initiator sends nothing before it has the Reply.
                request.invalidate();
                decideResponder(rneg.reject(new byte[0]));
            }
            case ESTABLISHED -> data.onBytes(rx);
            default -> rx.position(rx.limit());
        }
    }

    private void onEof() {
        switch (phase) {
            case AWAIT_REPLY -> decideInitiator(ineg.onConnectionClosed(), false);
            case AWAIT_REQUEST, AWAIT_DECISION -> {
                if (request != null) {
                    request.invalidate();
                }
                decideResponder(rneg.onConnectionClosed());
            }
            case ESTABLISHED -> {
                RdmaException e = data.peerTerm() != null ? data.peerTermException()
                        : new RdmaException("peer " + remote + " closed the connection (RFC 5044 §7.2 stream lost)");
                teardown(e, false);
            }
            default -> teardown(failure, false);
        }
    }

    private void onIoError(IOException e) {
        if (phase == Phase.AWAIT_REPLY || phase == Phase.CONNECTING) {
            if (phase == Phase.AWAIT_REPLY && ineg.outcome() == null) {
                decideInitiator(ineg.onConnectionClosed(), false);
                return;
            }
            fail(new RdmaException("connection to " + remote + " failed: " + e.getMessage(), e));
            return;
        }
        teardown(failure != null ? failure : new RdmaException("I/O error on " + remote + ": " + e.getMessage(), e), false);
    }

    @Override
    void runScheduled() {
        lockIo();
        try {
            if (phase != Phase.ESTABLISHED) {
                return;
            }
            if (pendingEof) {
                onEof(); // met by a poller
                return;
            }
            if (pendingError != null) {
                onIoError(pendingError);
                return;
            }
            try {
                data.pump();
                flush();
                armStallTimer();
            } catch (IOException e) {
                onIoError(e);
            }
        } finally {
            io.unlock();
        }
    }

    /** Writes queued bytes; keeps OP_WRITE while some remain. */
    void flush() throws IOException {
        if (ch == null || !ch.isOpen() || tx == null || phase == Phase.CONNECTING) {
            return;
        }
        if (tx.position() > 0) {
            tx.flip();
            try {
                ch.write(tx);
            } finally {
                tx.compact();
            }
        }
        boolean pending = tx.position() > 0;
        if (key != null && key.isValid()) {
            int ops = key.interestOps();
            int want = pending ? ops | SelectionKey.OP_WRITE : ops & ~SelectionKey.OP_WRITE;
            if (want != ops) {
                key.interestOps(want);
                if (pending && !reactor.inReactorThread()) {
                    reactor.wake(); // the selector applies the new interest when it (re)enters select
                }
            }
        }
        if (!pending && phase == Phase.ESTABLISHED && data.hasPendingOutput()) {
            // The one place OP_WRITE is dropped is also the one place that sees the engine still
            // holding output (a pump stopped at a full socket that drained since): it asks for
            // another pump, so "output pending, nothing staged, nobody pumping" cannot arise.
            outputLeft();
        }
        if (!pending && phase == Phase.CLOSING) {
            finishClose();
        }
    }

    /** {@link #flush()} from a context that cannot throw: an I/O error tears the stream down. */
    void flushQuietly() {
        try {
            flush();
        } catch (IOException e) {
            if (inline) {
                deferred = true;
            } else {
                onIoError(e);
            }
        }
    }

    private void interest(int ops) {
        if (key != null && key.isValid()) {
            key.interestOps(ops);
        }
    }

    // ---------------------------------------------------------------- deadlines

    private void setDeadline(long fromNowNanos) {
        deadline = System.nanoTime() + fromNowNanos;
        if (!timed) {
            timed = true;
            reactor.addDeadline(this);
        }
    }

    private void clearDeadline() {
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
                case CONNECTING -> fail(new RdmaTimeoutException("no TCP connection to " + remote + " within "
                        + config.initiatorTimeout().toMillis() + " ms"));
                case AWAIT_REPLY -> {
                    // TCP is up: a local error without a code of its own, TERM 2/0/5 first (RFC 6581 §9.3)
                    sendSetupTerm(TermCode.MPA_LOCAL_CATASTROPHIC);
                    fail(new RdmaTimeoutException("no MPA Reply from " + remote + " within "
                            + config.initiatorTimeout().toMillis() + " ms (RFC 5044 §7.1.2); sent TERM 2/0/5"));
                }
                case AWAIT_REQUEST -> {
                    sendSetupTerm(TermCode.MPA_LOCAL_CATASTROPHIC); // RFC 6581 §9.3, as above
                    fail(new RdmaTimeoutException("no MPA Request from " + remote + " within "
                            + config.responderTimeout().toMillis() + " ms (RFC 5044 §7.1.2); sent TERM 2/0/5"));
                }
                case AWAIT_DECISION -> {
                    request.invalidate();
                    LOG.warn("connection request from {} undecided for {} ms: rejecting", remote,
                            config.decisionTimeout().toMillis());
                    decideResponder(rneg.reject(new byte[0]));
                }
                case ESTABLISHED -> {
                    if (rtrTimer) {
                        rtrTimer = false;
                        localError(new RdmaTimeoutException("no RTR from " + remote + " within "
                                + config.responderTimeout().toMillis() + " ms (RFC 6581 §9.2); sent TERM 2/0/5"));
                    } else {
                        onStallDeadline();
                    }
                }
                case CLOSING -> finishClose();
                default -> {
                }
            }
        } finally {
            io.unlock();
        }
    }

    // ---------------------------------------------------------------- teardown

    /** Setup failed: flush what is queued (a reject, a TERM), close, report. */
    private void fail(RdmaException e) {
        if (failure == null) {
            failure = e;
        }
        if (request != null) {
            request.invalidate();
        }
        if (listener != null && !initiator) {
            listener.pendingDone(this);
        }
        established.completeExceptionally(e);
        startClosing();
    }

    /**
     * Ends an established stream: WRs flush (RFC 5040 §6.2.2 abnormal termination), queued bytes (a TERM) get a short
     * linger, the socket closes. {@code graceful} is false when the stream is already dead.
     */
    void teardown(RdmaException cause, boolean lingerForTx) {
        if (phase == Phase.CLOSED || phase == Phase.CLOSING) {
            return;
        }
        if (failure == null) {
            failure = cause;
        }
        phase = Phase.CLOSING; // before the flush, so isOpen() is false once its completions appear
        if (data != null) {
            data.stop();
        }
        if (qp != null) {
            qp.flush();
        }
        established.completeExceptionally(cause != null ? cause : new RdmaException("closed"));
        if (lingerForTx) {
            startClosing();
        } else {
            finishClose();
        }
    }

    private void startClosing() {
        if (phase == Phase.CLOSED) {
            return;
        }
        phase = Phase.CLOSING;
        setDeadline(CLOSE_LINGER_NANOS);
        try {
            if (ch != null && ch.isConnected()) {
                flush();
            } else {
                finishClose();
            }
        } catch (IOException e) {
            finishClose();
        }
    }

    private void finishClose() {
        if (phase == Phase.CLOSED) {
            return;
        }
        phase = Phase.CLOSED;
        clearDeadline();
        unpoll();
        if (data != null) {
            data.stop();
        }
        if (qp != null) {
            qp.flush();
        }
        closeChannel();
        if (qp != null) {
            qp.detach(this);
        }
        if (!initiator && listener != null) {
            listener.pendingDone(this);
        }
        if (connection != null) {
            device.forget(connection); // before closed completes: a closer sees it untracked
        }
        established.completeExceptionally(failure != null ? failure : new RdmaException("closed"));
        closed.complete(null);
        releaseTxLater();
    }

    /**
     * The tx buffer goes back to the device's pool on a later reactor turn, under {@link #io}: no
     * frame up this call stack (a data-path pump holding it) and no posting thread still uses it.
     */
    private void releaseTxLater() {
        if (tx == null) {
            return;
        }
        try {
            reactor.execute(() -> {
                ByteBuffer b;
                lockIo();
                try {
                    b = tx;
                    tx = null; // CLOSED: every later user checks the phase or tx == null first
                } finally {
                    io.unlock();
                }
                device.buffers().release(b);
            });
        } catch (IllegalStateException e) {
            // the reactor is closed: the buffer is left to the GC
        }
    }

    private void closeChannel() {
        if (key != null) {
            key.cancel();
        }
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException e) {
                LOG.debug("close of {} failed", remote, e);
            }
        }
    }

    /** A fatal local condition outside the stream (a CQ overrun), run on the reactor: tear down and flush. */
    void failFatal(RdmaException cause) {
        lockIo();
        try {
            teardown(cause, false);
        } finally {
            io.unlock();
        }
    }

    /** Local close by the ULP (reactor thread): graceful, a short linger for queued FPDUs. */
    void closeByUser() {
        lockIo();
        try {
            if (phase == Phase.CLOSED || phase == Phase.CLOSING) {
                return;
            }
            RdmaException e = new RdmaException("closed locally");
            if (failure == null) {
                failure = e;
            }
            if (data != null) {
                data.pump();
            }
            phase = Phase.CLOSING;
            if (data != null) {
                data.stop();
            }
            if (qp != null) {
                qp.flush();
            }
            established.completeExceptionally(e);
            startClosing();
        } finally {
            io.unlock();
        }
    }

    /** Fallback when the reactor is gone: close the socket and flush from the calling thread. */
    void closeFromOutside() {
        closeChannel();
        if (qp != null) {
            qp.detach(this);
            qp.flush();
        }
        if (connection != null) {
            device.forget(connection);
        }
        closed.complete(null);
    }

    @Override
    public void onReactorClose() {
        lockIo();
        try {
            teardown(new RdmaException("provider closed"), false);
        } finally {
            io.unlock();
        }
    }

    /** The data path reports a fatal error it already answered with a TERM (queued in tx). */
    void dataPathFailed(RdmaException e) {
        teardown(e, true);
    }

    /** Inbound FPDUs decoded so far (racy read: tests, diagnostics). */
    long fpdusReceived() {
        SoftDataPath d = data;
        return d == null ? 0 : d.fpdusReceived();
    }

    /** Counters for diagnostics (racy reads, any thread). */
    String debugState() {
        SoftDataPath d = data;
        return phase + (d == null ? "" : ", " + d.debugState()) + ", tx=" + (tx == null ? 0 : tx.position());
    }

    @Override
    public String toString() {
        return "SoftStream[" + (initiator ? "initiator" : "responder") + " " + remote + " " + phase + "]";
    }
}
