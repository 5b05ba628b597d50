package org.jwarp.soft;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;

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
import org.jwarp.soft.cq.SoftCompletionQueue;
import org.jwarp.soft.verbs.SoftQueuePair;
import org.jwarp.verbs.ConnectionRejectedException;
import org.jwarp.verbs.ConnectionTerminatedException;
import org.jwarp.verbs.RdmaException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Connection setup of one {@link SoftStream} (the part Linux siw keeps in siw_cm): the TCP connect,
 * the MPA Request/Reply exchange for both roles (RFC 5044 §7.1.2, RFC 6581 §5 and §9, decided by
 * the foundation's negotiators), the ULP's accept/reject, the Rev 1 retry (RFC 6581 §10) and the
 * switch to FPDU mode. Frames are read strictly: nothing may follow an MPA frame before it is
 * answered. Runs on the reactor thread under the stream's I/O lock.
 */
final class StreamSetup {
    private static final Logger LOG = LoggerFactory.getLogger(StreamSetup.class);

    private InitiatorNegotiator ineg;
    private ResponderNegotiator rneg;
    private SoftConnectionRequest request;
    private MpaFrameReader reader;
    /** What setup decided, and the MPA Request and Reply as sent or received; set on the reactor. */
    private NegotiationOutcome outcome;
    private byte[] requestBytes;
    private byte[] replyBytes;
    /** Stream bytes received while waiting for the peer's MPA frame (a TERM can only be at offset 0). */
    private long setupBytes;

    private final SoftStream s;

    StreamSetup(SoftStream s) {
        this.s = s;
    }

    /** The initiator's negotiator; {@link #startConnect()} runs it on the reactor. */
    void initiate(InitiatorNegotiator neg) {
        ineg = neg;
    }

    /** The responder's negotiator over an accepted channel, awaiting the MPA Request. */
    void respond(ResponderConfig base) {
        rneg = new ResponderNegotiator(base);
        reader = rneg.newRequestReader();
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

    /** The request handed to the ULP, if any, can no longer be accepted or rejected. */
    void invalidateRequest() {
        if (request != null) {
            request.invalidate();
        }
    }

    /** The responder ends setup without accepting (the initiator spoke first, or no decision came): a reject. */
    void rejectPending() {
        invalidateRequest();
        decideResponder(rneg.reject(new byte[0]));
    }

    /** The stream ended (EOF, or an I/O error before the Reply) while setup waited for the peer. */
    void peerLost() {
        if (s.initiator) {
            decideInitiator(ineg.onConnectionClosed(), false);
        } else {
            invalidateRequest();
            decideResponder(rneg.onConnectionClosed());
        }
    }

    /** The initiator has not decided yet (no Reply, no TERM taken). */
    boolean initiatorUndecided() {
        return ineg.outcome() == null;
    }

    static void configure(SocketChannel ch) throws IOException {
        ch.configureBlocking(false);
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
    }

    void startConnect() {
        s.lockIo();
        try {
            try {
                s.open(SocketChannel.open());
                configure(s.channel());
                InetAddress src = s.device.sourceAddress();
                if (src != null) {
                    try {
                        s.channel().bind(new InetSocketAddress(src, 0));
                    } catch (IOException e) {
                        throw new IOException("cannot bind the device's address " + src.getHostAddress()
                                + " as the source: " + e.getMessage(), e);
                    }
                }
                s.sender.clearStaged(); // a Rev 1 retry (RFC 6581 §10): nothing of the first attempt goes out
                reader = new MpaFrameReader(MpaFrame.Kind.REPLY, ineg.config().limits(), false);
                boolean done = s.channel().connect(s.remoteAddress());
                s.registered(s.reactor.register(s.channel(), done ? SelectionKey.OP_READ : SelectionKey.OP_CONNECT, s));
                s.enter(SoftStream.Phase.CONNECTING);
                s.setDeadline(s.config.initiatorTimeout().toNanos());
                if (done) {
                    onConnected();
                }
            } catch (IOException | RuntimeException e) {
                s.closer.fail(new RdmaException("connect to " + s.remoteAddress() + " failed: " + e.getMessage(), e));
            }
        } finally {
            s.io.unlock();
        }
    }

void onConnected() throws IOException {
        MpaFrame req = ineg.createRequest();
        setupBytes = 0;
        requestBytes = req.toBytes();
        s.sender.staging(true).put(requestBytes);
        s.enter(SoftStream.Phase.AWAIT_REPLY);
        reader.reset();
        s.sender.interest(SelectionKey.OP_READ);
        s.setDeadline(s.config.initiatorTimeout().toNanos());
        s.sender.flush();
    }

    /** RFC 6581 §10: the peer closed the Rev 2 attempt; reconnect and send a Rev 1 request. */
void retryUnenhanced() {
        s.closer.closeChannel();
        LOG.debug("retrying {} with an unenhanced MPA request (RFC 6581 §10)", s.remoteAddress());
        startConnect();
    }

void onReplyBytes(ByteBuffer in) {
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

void decideInitiator(NegotiationDecision d, boolean peerTerminated) {
        outcome = d.outcome();
        switch (d.action()) {
            case ESTABLISH -> establish();
            case RETRY_UNENHANCED -> retryUnenhanced();
            case TERMINATE -> {
                sendSetupTerm(d.term());
                s.closer.fail(new ConnectionTerminatedException("MPA setup with " + s.remoteAddress() + " failed: " + outcome.reason(),
                        d.term(), false));
            }
            default -> {
                RdmaException e;
                if (outcome.status() == NegotiationStatus.REJECTED) {
                    e = new ConnectionRejectedException("connection to " + s.remoteAddress() + " rejected: " + outcome.reason(),
                            outcome.peerPrivateData(), outcome.peerValuesKnown() ? outcome.peerIrd() : -1,
                            outcome.peerValuesKnown() ? outcome.peerOrd() : -1);
                } else if (outcome.term() != null && peerTerminated) {
                    e = new ConnectionTerminatedException("MPA setup with " + s.remoteAddress() + " ended: " + outcome.reason(),
                            outcome.term(), true);
                } else {
                    e = new RdmaException("MPA setup with " + s.remoteAddress() + " closed: " + outcome.reason());
                }
                s.closer.fail(e);
            }
        }
    }

void onRequestBytes(ByteBuffer in) {
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
            s.enter(SoftStream.Phase.AWAIT_DECISION);
            s.setDeadline(s.config.decisionTimeout().toNanos());
            request = new SoftConnectionRequest(s, rneg.peerRequest(), s.remoteAddress());
            if (!s.listener.offer(request)) {
                decideResponder(rneg.reject(new byte[0]));
            }
        } else {
            decideResponder(d);
        }
    }

    /** Reactor thread: the ULP accepted. Returns the connection or throws. */
    SoftConnection accept(SoftQueuePair q, ResponderConfig cfg) throws RdmaException {
        s.lockIo();
        try {
            if (s.phase() != SoftStream.Phase.AWAIT_DECISION) {
                throw new RdmaException("connection request from " + s.remoteAddress() + " is no longer pending (" + s.phase()
                        + (s.failure() != null ? ": " + s.failure().getMessage() : "") + ")");
            }
            NegotiationDecision d;
            try {
                d = rneg.accept(cfg);
            } catch (IllegalArgumentException e) {
                throw new RdmaException("accept: " + e.getMessage(), e);
            }
            s.bind(q);
            decideResponder(d);
            if (s.connection() == null) {
                throw s.failure() != null ? s.failure() : new RdmaException("accept failed: " + d.outcome().reason());
            }
            return s.connection();
        } finally {
            s.io.unlock();
        }
    }

    /**
     * Reactor thread, listener full: this stream has not sent a complete MPA Request and makes
     * room for a newer one. Like a timeout, a local error once TCP is up: TERM 2/0/5 (CRC 0) before
     * the close (RFC 6581 §9.3).
     */
    void evict(int backlog) {
        s.lockIo();
        try {
            if (s.phase() != SoftStream.Phase.AWAIT_REQUEST) {
                return;
            }
            LOG.debug("evicting {}: {} connections pending without a complete MPA Request", s.remoteAddress(), backlog);
            sendSetupTerm(TermCode.MPA_LOCAL_CATASTROPHIC);
            s.closer.fail(new RdmaException("evicted " + s.remoteAddress() + ": the pending-handshake limit (" + backlog
                    + ") was reached before its MPA Request was complete; sent TERM 2/0/5"));
        } finally {
            s.io.unlock();
        }
    }

    /** Reactor thread, right after accept: reads what already arrived (usually the whole MPA Request). */
    void readEarly() {
        s.lockIo();
        try {
            if (s.phase() == SoftStream.Phase.AWAIT_REQUEST) {
                s.receiver.readAll();
            }
        } catch (IOException e) {
            s.onIoError(e);
        } finally {
            s.io.unlock();
        }
    }

    /** Reactor thread, listener closing: reject an undecided request, drop anything else pending. */
    void rejectIfUndecided() {
        s.lockIo();
        try {
            if (s.phase() == SoftStream.Phase.AWAIT_DECISION) {
                request.invalidate();
                decideResponder(rneg.reject(new byte[0]));
            } else {
                s.closer.closeByUser();
            }
        } finally {
            s.io.unlock();
        }
    }

    /** Reactor thread: the ULP rejected. */
    void reject(byte[] privateData) throws RdmaException {
        s.lockIo();
        try {
            if (s.phase() != SoftStream.Phase.AWAIT_DECISION) {
                throw new RdmaException("connection request from " + s.remoteAddress() + " is no longer pending (" + s.phase() + ")");
            }
            try {
                decideResponder(rneg.reject(privateData));
            } catch (IllegalArgumentException e) {
                throw new RdmaException("reject: " + e.getMessage(), e);
            }
        } finally {
            s.io.unlock();
        }
    }

void decideResponder(NegotiationDecision d) {
        outcome = d.outcome();
        if (d.frame() != null) {
            replyBytes = d.frameBytes();
            s.sender.staging(true).put(replyBytes);
        }
        switch (d.action()) {
            case ESTABLISH -> establish();
            case REJECT -> {
                if (d.term() != null) {
                    sendSetupTerm(d.term());
                    s.closer.fail(new ConnectionTerminatedException("rejected " + s.remoteAddress() + ": " + outcome.reason(), d.term(),
                            false));
                } else {
                    s.closer.fail(new RdmaException("rejected " + s.remoteAddress() + ": " + outcome.reason()));
                }
            }
            case TERMINATE -> {
                sendSetupTerm(d.term());
                s.closer.fail(new ConnectionTerminatedException("MPA setup with " + s.remoteAddress() + " failed: " + outcome.reason(),
                        d.term(), false));
            }
            default -> s.closer.fail(new RdmaException("MPA setup with " + s.remoteAddress() + " closed: " + outcome.reason()));
        }
    }

    /** The MPA Reply this side sent as responder, or null (initiator, or not sent). */
    MpaFrame sentReply() {
        return rneg != null ? rneg.reply() : null;
    }

void establish() {
        try {
            s.dataPath(new SoftDataPath(s, s.queuePair(), outcome, s.config));
        } catch (RuntimeException e) {
            LOG.error("cannot set up the data path for {}", s.remoteAddress(), e);
            sendSetupTerm(TermCode.MPA_LOCAL_CATASTROPHIC);
            s.closer.fail(new ConnectionTerminatedException("local error setting up " + s.remoteAddress() + ": " + e, 
                    TermCode.MPA_LOCAL_CATASTROPHIC, false));
            return;
        }
        s.enter(SoftStream.Phase.ESTABLISHED);
        reader = null; // its staging buffer is not needed in FPDU mode
        s.clearDeadline();
        if (!s.initiator && s.data().awaitingFirstFpdu() && outcome.rtr() != null) {
            s.startRtrTimer(s.config.responderTimeout().toNanos());
        }
        s.connection(new SoftConnection(s, s.queuePair()));
        // Tracked here, on the reactor under the I/O lock, so finishClose's forget (same thread,
        // same lock) always comes after it: a peer that resets right after the Reply cannot leave
        // a closed connection pinned in the device.
        s.device.track(s.connection());
        s.queuePair().attach(s, s.data().ord());
        SoftCompletionQueue.addStream(s.queuePair(), s);
        if (!s.initiator && s.listener != null) {
            s.listener.established(s);
        }
        s.data().start();
        s.sender.flushQuietly();
        if (s.initiator) {
            s.established.complete(s.connection());
        }
    }

    /** Queues an MPA-layer TERM; setup TERMs carry CRC 0 (CRC is not active yet). */
void sendSetupTerm(TermCode code) {
        ByteBuffer tx = code == null ? null : s.sender.staging(true);
        if (tx != null) {
            SoftTerm.encodeSetupTerm(tx, code);
        }
    }
}
