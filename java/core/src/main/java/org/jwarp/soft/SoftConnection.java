package org.jwarp.soft;

import org.jwarp.soft.loop.Reactor;
import org.jwarp.soft.verbs.DeviceResources;
import org.jwarp.soft.verbs.SoftQueuePair;
import org.jwarp.verbs.AsyncEvent;
import org.jwarp.verbs.ConnectionTerminatedException;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.jwarp.negotiation.NegotiationOutcome;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionInfo;
import org.jwarp.verbs.RdmaException;
import org.jwarp.ground.RtrType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An established connection of the embedded provider: one RDMAP stream over one TCP connection
 * (RFC 5040 §5). {@link #info()} carries the RFC 6581 §9.1 values of both sides; the raw MPA
 * frames are kept for tools ({@code jwarp demo} prints them). Closing is bounded in time: every
 * outstanding WR completes with WR_FLUSH_ERR even when the peer or the reactor is gone.
 */
public final class SoftConnection implements Connection {
    private static final Logger LOG = LoggerFactory.getLogger(SoftConnection.class);
    private static final long CLOSE_WAIT_MS = 2000;

    private final SoftStream stream;
    private final SoftQueuePair qp;
    private final ConnectionInfo info;

    /** The stream (tests, diagnostics). */
    SoftStream stream() {
        return stream;
    }

    SoftConnection(SoftStream stream, SoftQueuePair qp) {
        this.stream = stream;
        this.qp = qp;
        NegotiationOutcome o = stream.outcome();
        RtrType rtr = o.rtr();
        this.info = new ConnectionInfo(stream.localAddress(), stream.remoteAddress(), o.ird(), o.ord(),
                o.peerValuesKnown() ? o.peerIrd() : -1, o.peerValuesKnown() ? o.peerOrd() : -1, o.peerToPeer(), rtr,
                o.crc(), o.revision(), o.peerPrivateData(),
                stream.requestBytes(), stream.replyBytes());
        DeviceResources device = qp.pd().device();
        raise(device, AsyncEvent.Type.ESTABLISHED, "connected with " + stream.remoteAddress());
        stream.closed.thenRun(() -> closedEvents(device));
    }

    /** After the stream closed: what ended it (QP fatal, peer disconnect), then CLOSED. */
    private void closedEvents(DeviceResources device) {
        RdmaException f = stream.failure();
        String why = f == null ? "closed" : f.getMessage();
        if (f instanceof ConnectionTerminatedException t) {
            if (t.sentByPeer()) {
                raise(device, AsyncEvent.Type.PEER_DISCONNECTED, why);
            }
            raise(device, AsyncEvent.Type.QP_FATAL, why);
        } else if (f != null && why.startsWith("peer ")) {
            raise(device, AsyncEvent.Type.PEER_DISCONNECTED, why);
        } else if (f != null && !why.equals("closed locally")) {
            raise(device, AsyncEvent.Type.QP_FATAL, why);
        }
        raise(device, AsyncEvent.Type.CLOSED, why);
    }

    /** One event of this connection's QP, with the QP's user context. */
    private void raise(DeviceResources device, AsyncEvent.Type type, String detail) {
        device.events().raise(new AsyncEvent(type, qp.qpNum(), this, null, null, detail, qp.context()));
    }

    @Override
    public SoftQueuePair queuePair() {
        return qp;
    }

    @Override
    public ConnectionInfo info() {
        return info;
    }

    /** The MPA Request as sent or received (RFC 5044 §7.1.1). */
    public byte[] mpaRequestFrame() {
        byte[] b = stream.requestBytes();
        return b == null ? null : b.clone();
    }

    /** The MPA Reply as sent or received. */
    public byte[] mpaReplyFrame() {
        byte[] b = stream.replyBytes();
        return b == null ? null : b.clone();
    }

    /** How the negotiation explained itself (the RFC rule that decided it). */
    public String negotiationReason() {
        return stream.outcome().reason();
    }

    @Override
    public boolean isOpen() {
        return !stream.closed.isDone() && stream.phase() == SoftStream.Phase.ESTABLISHED
                && qp.state() != org.jwarp.verbs.QueuePair.QpState.ERR;
    }

    @Override
    public RdmaException failure() {
        return isOpen() ? null : stream.failure();
    }

    @Override
    public void close() {
        if (stream.closed.isDone()) {
            return;
        }
        Reactor r = stream.reactor;
        if (r.isRunning()) {
            try {
                r.execute(stream.closer::closeByUser);
                stream.closed.get(CLOSE_WAIT_MS, TimeUnit.MILLISECONDS);
                return;
            } catch (IllegalStateException e) {
                // reactor closed meanwhile
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (TimeoutException | java.util.concurrent.ExecutionException e) {
                LOG.warn("close of {} did not finish in {} ms; closing from the caller", info.remote(), CLOSE_WAIT_MS);
            }
        }
        stream.closer.closeFromOutside();
    }

    /** TERM 0/0/0 (RDMAP local catastrophic error, RFC 5040 §4.8), then close and flush. */
    @Override
    public void terminate(String why) {
        stream.terminateLocally(org.jwarp.ground.TermCode.RDMAP_LOCAL_CATASTROPHIC, new RdmaException(why));
    }

    /** FPDUs received on the stream so far (a racy read; allocates nothing). */
    @Override
    public long inboundActivity() {
        return stream.fpdusReceived();
    }

    @Override
    public String toString() {
        return "SoftConnection[" + info.local() + " <-> " + info.remote() + ", qp " + qp.qpNum() + "]";
    }
}
