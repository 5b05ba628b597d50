package org.jwarp.soft;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

import org.jwarp.mpa.Fpdu;
import org.jwarp.mpa.PlacementHandle;
import org.jwarp.negotiation.NegotiationOutcome;
import org.jwarp.ground.RtrType;
import org.jwarp.rdmap.RdmapEndpoint;
import org.jwarp.rdmap.RdmapListener;
import org.jwarp.rdmap.RdmapSettings;
import org.jwarp.ground.TermCode;
import org.jwarp.rdmap.TerminateMessage;
import org.jwarp.soft.cm.CmParameters;
import org.jwarp.soft.cm.RtrGate;
import org.jwarp.soft.cm.SetupTerm;
import org.jwarp.soft.tx.FpduSizing;
import org.jwarp.soft.tx.SourceRevocation;
import org.jwarp.soft.tx.TxGather;
import org.jwarp.soft.verbs.ReceiveFeed;
import org.jwarp.soft.verbs.SoftQueuePair;
import org.jwarp.verbs.ConnectionTerminatedException;
import org.jwarp.verbs.WcStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * FPDU mode of one stream: the glue between a {@link SoftQueuePair}'s rings and the wire engine's
 * {@link RdmapEndpoint} (RFC 5040 over RFC 5041 over RFC 5044), always under the stream's I/O
 * lock: on the reactor thread, or on a posting thread that transmits inline.
 *
 * <ul>
 *   <li>Initiator in the peer-to-peer model: the negotiated RTR (RFC 6581 §9.2: zero-length Write
 *       to STag 1, zero-length Read Request, or zero-length Send) is the first FPDU.</li>
 *   <li>Responder: no ULP FPDU leaves before the initiator's first FPDU arrived (RFC 5044
 *       §7.1.2; in P2P that FPDU is the RTR, RFC 6581 §9.2), and in P2P the first FPDU must be a
 *       zero-length message of the negotiated RTR type, else TERM code 7. Posts made meanwhile
 *       wait in the QP's rings. A TERM in place of the RTR is accepted even with CRC 0 (siw sends
 *       setup TERMs without CRC).</li>
 *   <li>The engine pulls from the QP's send ring ({@code SoftSendQueue} is its
 *       {@link org.jwarp.rdmap.SendRing}); completions are reported in posting order.</li>
 * </ul>
 */
final class SoftDataPath implements RdmapListener {
    private static final Logger LOG = LoggerFactory.getLogger(SoftDataPath.class);
    /** Longest run of transmit/flush rounds per pump before yielding to other streams. */
    private static final int MAX_ROUNDS = 16;
    /**
     * Payload bytes referenced per gathering write while the socket takes everything ({@link TxGather}):
     * one loopback FPDU (65,480 bytes on the wire), about 45 Ethernet ones (1,448). Each FPDU leaves as soon as
     * its CRC32c is computed, so the peer receives and checks it while this side computes the next
     * one's; with 256 KiB the four loopback FPDUs' CRCs were all computed before the first byte left.
     * 1 MiB, CRC on, host loopback, 3 alternating runs (a loaded host) against a TCP stream:
     * write-bw 1.50 (1.24..1.56) and read-bw 1.50 (1.35..1.76) of it, against 0.66 (0.59..1.17) and
     * 0.65 (0.58..0.69) with 256 KiB and no stage-ahead.
     *
     * <p>Both budgets are fixed and ignore {@link SoftConfig#txBufferSize} ({@code jwarp.soft.txBufferSize}):
     * they count payload referenced in registered memory, while that setting sizes the staging area of
     * headers, pads and CRCs, which ends a batch early only when it has no room for another FPDU.
     */
    static final int TX_WRITE_BUDGET = 64 * 1024;
    /** Payload bytes staged ahead, CRCs computed, while the socket is full ({@link TxGather#roomAhead}); fixed too. */
    static final int TX_AHEAD_BUDGET = 1024 * 1024;

    private final SoftStream stream;
    private final SoftQueuePair qp;
    private final boolean initiator;
    private final RtrType rtr;
    /** Responder: the check of the initiator's first FPDU (RFC 6581 §9.2); null once passed. */
    private RtrGate gate;
    private final RdmapEndpoint ep;
    private final int ord;
    private boolean fenced;
    private boolean checkFirst;
    private TerminateMessage peerTerm;
    private TermCode localTerm;
    private String localDetail;
    private boolean stopped;
    /** The QP's receive queue as the engine's untagged buffers. */
    private final ReceiveFeed receives;
    /** Zero-copy transmit: FPDU headers staged, payloads referenced (the stream's {@link StreamTransmit#gather}). */
    private final TxGather gather;

    SoftDataPath(SoftStream stream, SoftQueuePair qp, NegotiationOutcome outcome, SoftConfig config) {
        this.stream = stream;
        this.qp = qp;
        this.initiator = stream.initiator;
        this.rtr = outcome.rtr();
        if (!initiator) {
            gate = new RtrGate(rtr, stream.setup.sentReply());
        }
        int ird = Math.min(outcome.ird(), CmParameters.MAX_IRD_ORD);
        this.ord = Math.min(outcome.ord(), CmParameters.MAX_IRD_ORD);
        InetSocketAddress local = stream.localAddress();
        InetSocketAddress remote = stream.remoteAddress();
        int fpdu = FpduSizing.forPath(local == null ? null : local.getAddress(),
                remote == null ? null : remote.getAddress(), config.maxFpdu());
        int mulpdu = Math.min(fpdu - Fpdu.OVERHEAD, Fpdu.MAX_ULPDU_LENGTH);
        RdmapSettings s = new RdmapSettings(mulpdu, outcome.crc(), false, ird, ord, qp.sqSize() + 1, qp.rqSize() + 1);
        int maxSge = qp.maxSge();
        ep = new RdmapEndpoint(s, qp.pd().engineDomain(), qp.pd().device().stags(), this, maxSge, qp.sendRing());
        ep.streamKey(qp); // RFC 5041 §8.2: regions bound to this QP (MemoryRegion.bindTo) accept this stream only
        gather = new TxGather(qp.sqSize(), TX_WRITE_BUDGET, TX_AHEAD_BUDGET);
        stream.sender.attachGather(gather);
        qp.useGather(gather);
        SourceRevocation.attach(stream.io, qp.pd().device().stags(), qp.pd().engineDomain(), gather);
        receives = new ReceiveFeed(qp, ep, maxSge);
        fenced = !initiator;
        checkFirst = !initiator;
    }

    /** The ORD the QP enforces at post time (device-capped). */
    int ord() {
        return ord;
    }

    /** The MULPDU this side segments to (RFC 5044 §8.1), from {@link FpduSizing}. */
    int mulpdu() {
        return ep.settings().mulpdu();
    }

    boolean awaitingFirstFpdu() {
        return checkFirst;
    }

    /** Queues the RTR (initiator) or the buffer the Send RTR consumes (responder). */
    void start() {
        if (rtr == null) {
            return;
        }
        if (initiator) {
            switch (rtr) {
                case WRITE -> ep.postWriteRtr();
                case READ -> ep.postReadRtr();
                case SEND -> ep.postSendRtr();
            }
        }
        // Responder: the buffer a Send RTR consumes is posted once the first FPDU shows it is one;
        // the ULP's receives wait in the QP's ring until then (feedReceives), so it takes MSN 1.
        pump();
    }

    // ---------------------------------------------------------------- receive

    /**
     * Where the next stream bytes go when they are payload of a large segment being placed (a view
     * into the registered memory under a placement lease, see {@link RdmapEndpoint#placement}),
     * else null, also before the first FPDU was checked or once the path stopped. A non-null result
     * must be followed by the handle's {@link PlacementHandle#directRead} at once.
     */
    ByteBuffer directTarget(int minBytes) {
        if (stopped || checkFirst) {
            return null;
        }
        ByteBuffer t = ep.placement().directTarget(minBytes);
        if (t == null && ep.state() != RdmapEndpoint.State.RTS) {
            afterEngine(); // the target was revoked: the TERM the engine raised goes out
        }
        return t;
    }

    /** The engine's placement handle: the reader sizes its reads by it and reports what landed in a lent view. */
    PlacementHandle placement() {
        return ep.placement();
    }

    void onBytes(ByteBuffer rx) {
        if (stopped) {
            rx.position(rx.limit());
            return;
        }
        if (checkFirst) {
            if (!checkFirstFpdu(rx)) {
                return;
            }
        }
        feedReceives();
        ep.receive(rx);
        afterEngine();
    }

    /**
     * Gathers the head of the first inbound FPDU and checks it; returns true once the engine may
     * take the stream (the peeked bytes were fed already), false to wait or when the stream ended.
     */
    private boolean checkFirstFpdu(ByteBuffer rx) {
        ByteBuffer head = gate.gather(rx);
        if (head == null) {
            return false;
        }
        checkFirst = false;
        if (SetupTerm.isTerm(head, 0)) {
            TerminateMessage t = SetupTerm.decode(head, 0);
            rx.position(rx.limit());
            onPeerTerminate(t != null ? t : new TerminateMessage(TermCode.RDMAP_CATASTROPHIC_STREAM, false, false,
                    false, 0, new byte[0], new byte[0]));
            afterEngine();
            return false;
        }
        RtrType got = rtr == null ? null : gate.match(head);
        if (rtr != null && got == null) {
            rx.position(rx.limit());
            ep.terminate(TermCode.MPA_NO_MATCHING_RTR, gate.mismatch(head));
            afterEngine();
            return false;
        }
        if (got == RtrType.SEND) {
            receives.postRtrBuffer();
        }
        feedReceives();
        ep.receive(head);
        return true;
    }

    // ---------------------------------------------------------------- transmit

    /** Moves posted WRs into the engine and transmits what fits; the stream's I/O lock held (reactor or poster). */
    void pump() {
        if (stopped) {
            return;
        }
        feedReceives();
        if (!fenced) {
            feedSends();
        }
        int wire = ep.maxFpduWireLength();
        StreamTransmit tx = stream.sender;
        for (int round = 0; round < MAX_ROUNDS && ep.hasPendingOutput(); round++) {
            // the staging area is borrowed per flush (a flush that drains it gives it back)
            ByteBuffer staging = tx.staging(false);
            if (staging == null) {
                break; // none to lend: starved like a full socket, the pool's hand-over resumes
            }
            if (!gather.room(wire) && !gather.roomAhead()) {
                tx.flushQuietly();
                staging = stopped ? null : tx.staging(false);
                if (staging == null || !gather.room(wire) && !gather.roomAhead()) {
                    break; // socket full and nothing more staged ahead: OP_WRITE resumes
                }
            }
            if (stream.faults() != null) {
                stream.faults().at(tx.inlineTransmit() ? FaultHook.Site.INLINE_TRANSMIT : FaultHook.Site.REACTOR_TRANSMIT);
            }
            if (ep.transmit(staging, gather.sink()) == 0) {
                break;
            }
            if (!fenced) {
                feedSends();
            }
        }
        if (!stopped && gather.pending()) {
            tx.flushQuietly(); // leaves OP_WRITE set while bytes remain, else gives the staging back
        } else if (!stopped) {
            tx.releaseIfDrained(); // borrowed, but nothing could go out
        }
        if (!stopped && ep.hasPendingOutput() && tx.roomFor(wire)) {
            tx.outputLeft(); // room but work left: an inline driver loops, the reactor yields to other streams
        }
        afterEngine();
    }

    private void feedReceives() {
        if (ep.state() != RdmapEndpoint.State.RTS || (checkFirst && rtr != null)) {
            return;
        }
        receives.feed();
    }

    /**
     * An untagged Send begins with no buffer in the engine: a QP on a shared receive queue takes
     * the next shared buffer now (in arrival order across the SRQ's QPs); without one the engine
     * reports RFC 5041 §7.2 error 2/2 as before.
     */
    @Override
    public void onReceiveNeeded() {
        receives.pullShared();
    }

    private void feedSends() {
        if (ep.state() != RdmapEndpoint.State.RTS) {
            return;
        }
        qp.issueSends();
    }

    /** After engine work: a finished TERM or a peer TERM ends the stream. */
    private void afterEngine() {
        if (stopped) {
            return;
        }
        if (stream.sender.inlineTransmit()) {
            if (peerTerm != null || localTerm != null) {
                stream.sender.deferToReactor(); // teardown and TERM transmission stay on the reactor
            }
            return;
        }
        if (peerTerm != null) {
            stream.closer.teardown(peerTermException(), false);
        } else if (localTerm != null && ep.state() == RdmapEndpoint.State.TERMINATE) {
            ByteBuffer tx = stream.sender.staging(true);
            if (tx != null) {
                ep.transmit(tx);
            }
            if (tx == null || ep.state() == RdmapEndpoint.State.ERROR) {
                stream.closer.dataPathFailed(new ConnectionTerminatedException(localDetail, localTerm, false));
            } else {
                stream.sender.flushQuietly();
                stream.sender.kick();
            }
        } else if (localTerm != null && ep.state() == RdmapEndpoint.State.ERROR) {
            stream.closer.dataPathFailed(new ConnectionTerminatedException(localDetail, localTerm, false));
        }
    }

    /** Part of an inbound FPDU (or of the first FPDU's head) waits for the rest (stream lock held). */
    boolean partialInput() {
        return !stopped && ((checkFirst && gate.partial()) || ep.hasPartialInput());
    }

    /** Whole inbound FPDUs so far (stream lock held). */
    long fpdusReceived() {
        return ep.fpdusReceived();
    }

    /**
     * A local error with no code of its own (a timeout, a resource failure): RFC 6581 §9.3 wants
     * TERM layer 2 / type 0 / code 5 before the connection is reset; an unexpected exception sends
     * 0/0/0 ({@link StreamClose#fault}). Lock held; an inline driver only stops the engine, the
     * reactor sends the TERM.
     */
    void localError(TermCode code, String detail) {
        if (!stopped) {
            ep.terminate(code, detail);
            afterEngine();
        }
    }

    /** The engine still has FPDUs to transmit (stream lock held). */
    boolean hasPendingOutput() {
        return !stopped && ep.hasPendingOutput();
    }

    String debugState() {
        return "ep " + ep.state() + " sqOut=" + ep.sqOutstanding() + " rq=" + ep.rqPosted() + " readsOut="
                + ep.readsOutstanding() + " respPending=" + ep.readResponsesPending() + " pending=" + ep.hasPendingOutput()
                + (fenced ? " fenced" : "");
    }

    void stop() {
        if (stopped) {
            return;
        }
        stopped = true;
        if (peerTerm != null) {
            qp.finishOldestSend(statusFor(peerTerm.code())); // the one the peer refused
        }
        if (ep.state() != RdmapEndpoint.State.RTS) {
            ep.flush();
        }
    }

    TerminateMessage peerTerm() {
        return peerTerm;
    }

    ConnectionTerminatedException peerTermException() {
        return new ConnectionTerminatedException("peer " + stream.remoteAddress() + " terminated the stream (RFC 5040 §4.8)",
                peerTerm.code(), true);
    }

    // ---------------------------------------------------------------- engine events

    /** Completes the send WRs whose bytes the socket has now accepted (after a write, I/O lock held). */
    void completeAccepted(TxGather g) {
        if (!stopped) {
            qp.completeAccepted(g);
        }
    }

    @Override
    public void onReceiveCompletion(long wrId, int opcode, int byteLength, int invalidatedStag) {
        receives.completed(wrId, opcode, byteLength, invalidatedStag);
    }

    /**
     * RFC 5041 §8.3.1 (6): a Send arrived for a receive whose region was closed after it was posted;
     * see {@link ReceiveFeed#revoked}.
     */
    @Override
    public void onReceiveRevoked(long wrId) {
        receives.revoked(wrId);
    }

    /** RFC 5041 §7.1 check 2.2: the Send is longer than the receive; see {@link ReceiveFeed#tooShort}. */
    @Override
    public void onReceiveTooShort(long wrId) {
        receives.tooShort(wrId);
    }

    @Override
    public void onLocalError(TermCode code, String detail) {
        localTerm = code;
        localDetail = "stream to " + stream.remoteAddress() + " terminated: " + detail;
        LOG.debug("QP {}: local error {}: {}", qp.qpNum(), code, detail);
    }

    @Override
    public void onPeerTerminate(TerminateMessage term) {
        peerTerm = term; // acted on in stop(), once the stream is marked closing
    }

    @Override
    public void onFirstFpdu() {
        if (fenced) {
            fenced = false;
            stream.firstFpduArrived();
            stream.sender.kick();
        }
    }

    /** ibv_wc_status for a TERM received from the peer (RFC 5040 §7.2 / RFC 5041 §7.2 codes). */
    private static WcStatus statusFor(TermCode c) {
        if (c.layer() == TermCode.LAYER_RDMAP) {
            return c.etype() == TermCode.ETYPE_RDMAP_REMOTE_PROTECTION ? WcStatus.REM_ACCESS_ERR : WcStatus.REM_OP_ERR;
        }
        if (c.layer() == TermCode.LAYER_DDP) {
            return c.etype() == TermCode.ETYPE_DDP_TAGGED ? WcStatus.REM_ACCESS_ERR
                    : c.etype() == TermCode.ETYPE_DDP_UNTAGGED ? WcStatus.REM_INV_REQ_ERR : WcStatus.REM_OP_ERR;
        }
        return WcStatus.FATAL_ERR;
    }
}
