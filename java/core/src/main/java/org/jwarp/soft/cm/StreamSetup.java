package org.jwarp.soft.cm;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.time.Duration;

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
import org.jwarp.soft.verbs.SoftQueuePair;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionRejectedException;
import org.jwarp.verbs.ConnectionTerminatedException;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaTimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Connection setup of one stream (the part Linux siw keeps in siw_cm): the TCP connect,
 * the MPA Request/Reply exchange for both roles (RFC 5044 §7.1.2, RFC 6581 §5 and §9, decided by
 * the foundation's negotiators), the ULP's accept/reject, the Rev 1 retry (RFC 6581 §10) and the
 * switch to FPDU mode. Frames are read strictly: nothing may follow an MPA frame before it is
 * answered. Runs on the reactor thread under the stream's I/O lock; the stream is a
 * {@link SetupStream}, and FPDU mode is its own ({@link SetupStream#establish}).
 */
public final class StreamSetup {
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

    private final SetupStream s;
    /** The deadline of each step: connect and Reply, Request (and the RTR, the stream's), the ULP's decision. */
    private final Duration initiatorTimeout;
    private final Duration responderTimeout;
    private final Duration decisionTimeout;

    public StreamSetup(SetupStream s, CmSettings settings) {
        this.s = s;
        this.initiatorTimeout = settings.initiatorTimeout();
        this.responderTimeout = settings.responderTimeout();
        this.decisionTimeout = settings.decisionTimeout();
    }

    /** The initiator's negotiator; {@link #startConnect()} runs it on the reactor. */
    public void initiate(InitiatorNegotiator neg) {
        ineg = neg;
    }

    /** The responder's negotiator over an accepted, registered channel: the MPA Request is awaited. */
    public void respond(ResponderConfig base) {
        rneg = new ResponderNegotiator(base);
        reader = rneg.newRequestReader();
        s.enter(SetupStream.Phase.AWAIT_REQUEST);
        s.setDeadline(responderTimeout.toNanos());
    }

    /** A setup step's deadline passed (reactor, I/O lock held). */
    public void onDeadline() {
        switch (s.phase()) {
            case CONNECTING -> s.fail(new RdmaTimeoutException("no TCP connection to " + s.remoteAddress() + " within "
                    + initiatorTimeout.toMillis() + " ms"));
            case AWAIT_REPLY -> {
                // TCP is up: a local error without a code of its own, TERM 2/0/5 first (RFC 6581 §9.3)
                sendSetupTerm(TermCode.MPA_LOCAL_CATASTROPHIC);
                s.fail(new RdmaTimeoutException("no MPA Reply from " + s.remoteAddress() + " within "
                        + initiatorTimeout.toMillis() + " ms (RFC 5044 §7.1.2); sent TERM 2/0/5"));
            }
            case AWAIT_REQUEST -> {
                sendSetupTerm(TermCode.MPA_LOCAL_CATASTROPHIC); // RFC 6581 §9.3, as above
                s.fail(new RdmaTimeoutException("no MPA Request from " + s.remoteAddress() + " within "
                        + responderTimeout.toMillis() + " ms (RFC 5044 §7.1.2); sent TERM 2/0/5"));
            }
            case AWAIT_DECISION -> {
                LOG.warn("connection request from {} undecided for {} ms: rejecting", s.remoteAddress(),
                        decisionTimeout.toMillis());
                rejectPending();
            }
            default -> {
            }
        }
    }

    public NegotiationOutcome outcome() {
        return outcome;
    }

    public byte[] requestBytes() {
        return requestBytes;
    }

    public byte[] replyBytes() {
        return replyBytes;
    }

    /** The request handed to the ULP, if any, can no longer be accepted or rejected. */
    public void invalidateRequest() {
        if (request != null) {
            request.invalidate();
        }
    }

    /** The responder ends setup without accepting (the initiator spoke first, or no decision came): a reject. */
    public void rejectPending() {
        invalidateRequest();
        decideResponder(rneg.reject(new byte[0]));
    }

    /** The stream ended (EOF, or an I/O error before the Reply) while setup waited for the peer. */
    public void peerLost() {
        if (s.initiator()) {
            decideInitiator(ineg.onConnectionClosed(), false);
        } else {
            invalidateRequest();
            decideResponder(rneg.onConnectionClosed());
        }
    }

    /** The initiator has not decided yet (no Reply, no TERM taken). */
    public boolean initiatorUndecided() {
        return ineg.outcome() == null;
    }

    public static void configure(SocketChannel ch) throws IOException {
        ch.configureBlocking(false);
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
    }

    public void startConnect() {
        s.lockIo();
        try {
            try {
                s.open(SocketChannel.open());
                configure(s.channel());
                InetAddress src = s.sourceAddress();
                if (src != null) {
                    try {
                        s.channel().bind(new InetSocketAddress(src, 0));
                    } catch (IOException e) {
                        throw new IOException("cannot bind the device's address " + src.getHostAddress()
                                + " as the source: " + e.getMessage(), e);
                    }
                }
                s.clearStaged(); // a Rev 1 retry (RFC 6581 §10): nothing of the first attempt goes out
                reader = new MpaFrameReader(MpaFrame.Kind.REPLY, ineg.config().limits(), false);
                boolean done = s.channel().connect(s.remoteAddress());
                s.register(done ? SelectionKey.OP_READ : SelectionKey.OP_CONNECT);
                s.enter(SetupStream.Phase.CONNECTING);
                s.setDeadline(initiatorTimeout.toNanos());
                if (done) {
                    onConnected();
                }
            } catch (IOException | RuntimeException e) {
                s.fail(new RdmaException("connect to " + s.remoteAddress() + " failed: " + e.getMessage(), e));
            }
        } finally {
            s.unlockIo();
        }
    }

    public void onConnected() throws IOException {
        MpaFrame req = ineg.createRequest();
        setupBytes = 0;
        requestBytes = req.toBytes();
        s.staging().put(requestBytes);
        s.enter(SetupStream.Phase.AWAIT_REPLY);
        reader.reset();
        s.interest(SelectionKey.OP_READ);
        s.setDeadline(initiatorTimeout.toNanos());
        s.flush();
    }

    /** RFC 6581 §10: the peer closed the Rev 2 attempt; reconnect and send a Rev 1 request. */
    private void retryUnenhanced() {
        s.closeChannel();
        LOG.debug("retrying {} with an unenhanced MPA request (RFC 6581 §10)", s.remoteAddress());
        startConnect();
    }

    /** What the peer sent where its MPA frame belongs: why it is none, and the TERM it is instead (or null). */
    private interface Malformed {
        void on(MpaDecodeException e, TermCode peerTerm);
    }

    /**
     * Feeds stream bytes to the MPA frame reader: the frame once complete, else null (incomplete,
     * or not a frame: then {@code bad} is told, with the TERM if one came in the frame's place).
     */
    private MpaFrame feed(ByteBuffer in, Malformed bad) {
        int start = in.position();
        boolean atStart = setupBytes == 0; // a TERM can only be at offset 0
        setupBytes += in.remaining();
        MpaFrameReader.Status st;
        try {
            st = reader.feed(in);
        } catch (MpaDecodeException e) {
            bad.on(e, atStart ? SetupTerm.sniff(in, start) : null);
            return null;
        }
        return st == MpaFrameReader.Status.COMPLETE ? reader.frame() : null;
    }

    public void onReplyBytes(ByteBuffer in) {
        MpaFrame reply = feed(in, (e, peerTerm) -> {
            if (peerTerm != null) {
                decideInitiator(ineg.onTerminate(peerTerm), true);
            } else {
                decideInitiator(ineg.onMalformedReply(e), false);
            }
        });
        if (reply == null) {
            return;
        }
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
            case TERMINATE -> terminate(d.term());
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
                s.fail(e);
            }
        }
    }

    public void onRequestBytes(ByteBuffer in) {
        MpaFrame req = feed(in, (e, peerTerm) -> {
            in.position(in.limit());
            decideResponder(peerTerm != null ? rneg.onTerminate(peerTerm) : rneg.onMalformedRequest(e));
        });
        if (req == null) {
            return;
        }
        requestBytes = req.toBytes();
        NegotiationDecision d = rneg.onRequest(req);
        if (d.action() == NegotiationAction.AWAIT_ACCEPT) {
            s.enter(SetupStream.Phase.AWAIT_DECISION);
            s.setDeadline(decisionTimeout.toNanos());
            request = new SoftConnectionRequest(s, this, rneg.peerRequest());
            if (!s.offer(request)) {
                decideResponder(rneg.reject(new byte[0]));
            }
        } else {
            decideResponder(d);
        }
    }

    /** Reactor thread: the ULP accepted. Returns the connection or throws. */
    Connection accept(SoftQueuePair q, ResponderConfig cfg) throws RdmaException {
        s.lockIo();
        try {
            if (s.phase() != SetupStream.Phase.AWAIT_DECISION) {
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
            s.unlockIo();
        }
    }

    /**
     * Reactor thread, listener full: this stream has not sent a complete MPA Request and makes
     * room for a newer one. Like a timeout, a local error once TCP is up: TERM 2/0/5 (CRC 0) before
     * the close (RFC 6581 §9.3).
     */
    public void evict(int backlog) {
        s.lockIo();
        try {
            if (s.phase() != SetupStream.Phase.AWAIT_REQUEST) {
                return;
            }
            LOG.debug("evicting {}: {} connections pending without a complete MPA Request", s.remoteAddress(), backlog);
            sendSetupTerm(TermCode.MPA_LOCAL_CATASTROPHIC);
            s.fail(new RdmaException("evicted " + s.remoteAddress() + ": the pending-handshake limit (" + backlog
                    + ") was reached before its MPA Request was complete; sent TERM 2/0/5"));
        } finally {
            s.unlockIo();
        }
    }

    /** Reactor thread, right after accept: reads what already arrived (usually the whole MPA Request). */
    public void readEarly() {
        s.lockIo();
        try {
            if (s.phase() == SetupStream.Phase.AWAIT_REQUEST) {
                s.readAll();
            }
        } catch (IOException e) {
            s.onIoError(e);
        } finally {
            s.unlockIo();
        }
    }

    /** Reactor thread, listener closing: reject an undecided request, drop anything else pending. */
    public void rejectIfUndecided() {
        s.lockIo();
        try {
            if (s.phase() == SetupStream.Phase.AWAIT_DECISION) {
                request.invalidate();
                decideResponder(rneg.reject(new byte[0]));
            } else {
                s.closeByUser();
            }
        } finally {
            s.unlockIo();
        }
    }

    /** Reactor thread: the ULP rejected. */
    void reject(byte[] privateData) throws RdmaException {
        s.lockIo();
        try {
            if (s.phase() != SetupStream.Phase.AWAIT_DECISION) {
                throw new RdmaException("connection request from " + s.remoteAddress() + " is no longer pending (" + s.phase() + ")");
            }
            try {
                decideResponder(rneg.reject(privateData));
            } catch (IllegalArgumentException e) {
                throw new RdmaException("reject: " + e.getMessage(), e);
            }
        } finally {
            s.unlockIo();
        }
    }

    private void decideResponder(NegotiationDecision d) {
        outcome = d.outcome();
        if (d.frame() != null) {
            replyBytes = d.frameBytes();
            s.staging().put(replyBytes);
        }
        switch (d.action()) {
            case ESTABLISH -> establish();
            case REJECT -> {
                if (d.term() != null) {
                    sendSetupTerm(d.term());
                    s.fail(new ConnectionTerminatedException("rejected " + s.remoteAddress() + ": " + outcome.reason(), d.term(),
                            false));
                } else {
                    s.fail(new RdmaException("rejected " + s.remoteAddress() + ": " + outcome.reason()));
                }
            }
            case TERMINATE -> terminate(d.term());
            default -> s.fail(new RdmaException("MPA setup with " + s.remoteAddress() + " closed: " + outcome.reason()));
        }
    }

    /** The MPA Reply this side sent as responder, or null (initiator, or not sent). */
    public MpaFrame sentReply() {
        return rneg != null ? rneg.reply() : null;
    }

    private void establish() {
        try {
            s.establish(outcome);
        } catch (RuntimeException e) {
            LOG.error("cannot set up the data path for {}", s.remoteAddress(), e);
            sendSetupTerm(TermCode.MPA_LOCAL_CATASTROPHIC);
            s.fail(new ConnectionTerminatedException("local error setting up " + s.remoteAddress() + ": " + e,
                    TermCode.MPA_LOCAL_CATASTROPHIC, false));
            return;
        }
        s.enter(SetupStream.Phase.ESTABLISHED);
        reader = null; // its staging buffer is not needed in FPDU mode
        s.clearDeadline();
        s.startFpduMode();
    }

    /** Setup failed on this side: TERM {@code code} to the peer, then the stream ends. */
    private void terminate(TermCode code) {
        sendSetupTerm(code);
        s.fail(new ConnectionTerminatedException("MPA setup with " + s.remoteAddress() + " failed: " + outcome.reason(),
                code, false));
    }

    /** Queues an MPA-layer TERM; setup TERMs carry CRC 0 (CRC is not active yet). */
    public void sendSetupTerm(TermCode code) {
        ByteBuffer tx = code == null ? null : s.staging();
        if (tx != null) {
            SetupTerm.encodeSetupTerm(tx, code);
        }
    }
}
