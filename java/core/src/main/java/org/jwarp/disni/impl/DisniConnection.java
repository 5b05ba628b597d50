package org.jwarp.disni.impl;

import org.jwarp.verbs.AsyncEvent;

import com.ibm.disni.verbs.RdmaCmId;
import java.io.IOException;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionInfo;
import org.jwarp.verbs.QueuePair;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An established rdma_cm connection. Closing it disconnects (RFC 5040 section 5.3 graceful
 * close of the stream; outstanding WRs flush, RFC 5040 section 8.2), destroys the QP and the id.
 * When the peer disconnects first, the dispatcher answers with rdma_disconnect at once: on the IB
 * CM (RoCE) only that moves the local QP to the error state, so posted WRs flush then too.
 */
final class DisniConnection implements Connection {
    private static final Logger LOG = LoggerFactory.getLogger(DisniConnection.class);
    private static final long DISCONNECT_WAIT_NANOS = 2_000_000_000L;
    private final DisniDevice dev;
    private final RdmaCmId id;
    private final DisniQp qp;
    private final ConnectionInfo info;
    private volatile boolean open = true;
    private volatile boolean peerClosed;

    DisniConnection(DisniDevice dev, RdmaCmId id, DisniQp qp, ConnectionInfo info) {
        this.dev = dev;
        this.id = id;
        this.qp = qp;
        this.info = info;
        dev.dispatcher.onDisconnect(id, this::peerDisconnected);
        dev.events.raise(new AsyncEvent(AsyncEvent.Type.ESTABLISHED, qp.qpNum(), this, null, null,
                "connected with " + info.remote(), qp.context()));
    }

    private final java.util.concurrent.atomic.AtomicBoolean closedRaised = new java.util.concurrent.atomic.AtomicBoolean();

    private void raiseClosed(String why) {
        if (closedRaised.compareAndSet(false, true)) {
            dev.events.raise(new AsyncEvent(AsyncEvent.Type.CLOSED, qp.qpNum(), this, null, null, why, qp.context()));
        }
    }

    /** Dispatcher thread: the stream ended from the peer's side (or the device went away). */
    private void peerDisconnected() {
        peerClosed = true;
        qp.failed();
        if (open) {
            dev.events.raise(new AsyncEvent(AsyncEvent.Type.PEER_DISCONNECTED, qp.qpNum(), this, null, null,
                    "RDMA_CM_EVENT_DISCONNECTED from " + info.remote(), qp.context()));
        }
        try {
            // under the channel lock, so a concurrent close() cannot have destroyed the id meanwhile
            dev.dispatcher.locked(() -> dev.dispatcher.live(id) ? dev.cm.disconnect(id) : 0);
        } catch (IOException e) {
            LOG.debug("rdma_disconnect after the peer's: {}", e.toString());
        }
        raiseClosed("the peer disconnected");
    }

    @Override
    public QueuePair queuePair() {
        return qp;
    }

    @Override
    public ConnectionInfo info() {
        return info;
    }

    @Override
    public boolean isOpen() {
        return open && !peerClosed && qp.state() != QueuePair.QpState.ERR;
    }

    @Override
    public void close() {
        if (!open) {
            return;
        }
        open = false;
        qp.failed();
        if (!peerClosed) {
            dev.connections.disconnectQuietly(id);
        }
        long deadline = System.nanoTime() + DISCONNECT_WAIT_NANOS;
        try {
            while (true) {
                CmEvent ev = dev.dispatcher.await(id, deadline, "disconnect");
                if (ev.type() == CmEvent.DISCONNECTED) {
                    break;
                }
            }
        } catch (org.jwarp.verbs.RdmaException e) {
            LOG.debug("no DISCONNECTED event: {}", e.getMessage());
        }
        detachFromCqs();
        dev.dispatcher.destroy(id, true);
        dev.forget(this);
        raiseClosed(peerClosed ? "the peer disconnected" : "closed locally");
    }

    private void detachFromCqs() {
        // the CQs keep a QP list for read accounting; drop this QP from every CQ of the device
        dev.detachEverywhere(qp);
    }
}
