package org.jwarp.ffm.impl;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import org.jwarp.verbs.AsyncEvent;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionInfo;
import org.jwarp.verbs.QueuePair;
import org.jwarp.verbs.RdmaException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One established connection of the {@code ffm} provider: its rdma_cm id, event channel and QP.
 * The device's {@link FfmCmEvents} reads the channel: when the peer disconnects first, the
 * connection answers with rdma_disconnect at once (on the IB CM, RoCE, only that moves the local QP
 * to the error state, so posted WRs flush then too) and raises PEER_DISCONNECTED and CLOSED, as
 * the DiSNI provider does.
 */
final class FfmConnection implements Connection {
    private static final Logger LOG = LoggerFactory.getLogger(FfmConnection.class);
    private static final long DISCONNECT_WAIT_MS = 5_000;

    private final FfmDevice dev;
    private final FfmCmId id;
    private final FfmCmChannel channel;
    private final FfmQp qp;
    private final ConnectionInfo info;
    /** Guards the channel and the id: the device's reader skips a connection another thread holds. */
    private final ReentrantLock lock = new ReentrantLock();
    private final AtomicBoolean closedRaised = new AtomicBoolean();
    private volatile boolean open = true;
    private volatile boolean peerGone;
    /** rdma_get_cm_event failed on the channel: it is not read again. */
    private volatile boolean channelBroken;
    /** The device's rdma_cm reader stopped: a disconnect would not be learned. */
    private volatile boolean readerGone;

    FfmConnection(FfmDevice dev, FfmCmId id, FfmCmChannel channel, FfmQp qp, ConnectionInfo info) {
        this.dev = dev;
        this.id = id;
        this.channel = channel;
        this.qp = qp;
        this.info = info;
        qp.connection(this); // async events (QP_FATAL) name the connection
        dev.raise(new AsyncEvent(AsyncEvent.Type.ESTABLISHED, qp.qpNum(), this, null, null,
                "connected with " + info.remote(), qp.context()));
        dev.cmEvents.watch(this);
    }

    @Override
    public QueuePair queuePair() {
        return qp;
    }

    @Override
    public ConnectionInfo info() {
        return info;
    }

    /**
     * Open until closed or the peer disconnected: reads two volatile fields only (no lock, no
     * downcall); the device's reader ({@link FfmCmEvents}) sets them when the peer's event comes.
     */
    @Override
    public boolean isOpen() {
        return open && !peerGone && !channelBroken && !readerGone;
    }

    /** The fd of the connection's rdma_cm channel, for the device's reader's poll(2). */
    int channelFd() {
        return channel.fd();
    }

    /** The device's reader: takes the events waiting on the channel, unless another thread holds the connection. */
    void readEvents() {
        if (open && !peerGone && !channelBroken && lock.tryLock()) {
            try {
                readEventsLocked();
            } finally {
                lock.unlock();
            }
        }
    }

    private void readEventsLocked() {
        while (open && !peerGone && !channelBroken) {
            FfmCmChannel.Event ev;
            try {
                ev = channel.tryNext();
            } catch (RdmaException e) {
                channelFailed(e);
                return;
            }
            if (ev == null) {
                return;
            }
            if (ev.type() == RdmaCm.DISCONNECTED || ev.type() == RdmaCm.DEVICE_REMOVAL) {
                peerDisconnected(ev);
            } else {
                LOG.debug("{} on an established connection with {}: ignored", ev.name(), info.remote());
            }
        }
    }

    /** The stream ended from the peer's side: answer with rdma_disconnect, so the QP goes to ERR and its WRs flush. */
    private void peerDisconnected(FfmCmChannel.Event ev) {
        peerGone = true;
        qp.disconnected();
        dev.cmEvents.unwatch(this);
        dev.raise(new AsyncEvent(AsyncEvent.Type.PEER_DISCONNECTED, qp.qpNum(), this, null, null,
                ev.name() + " from " + info.remote(), qp.context()));
        try {
            id.disconnect();
        } catch (RdmaException e) {
            LOG.debug("rdma_disconnect after the peer's: {}", e.getMessage());
        }
        raiseClosed("the peer disconnected");
    }

    /**
     * The channel cannot be read: the connection would never learn of a disconnect, so it ends as a
     * failed one (no longer watched, QP in ERR, CLOSED raised with the reason), as DiSNI's does.
     */
    private void channelFailed(RdmaException e) {
        LOG.warn("the rdma_cm channel of the connection with {} failed: {}", info.remote(), e.getMessage());
        channelBroken = true;
        qp.failed();
        dev.cmEvents.unwatch(this);
        raiseClosed("its rdma_cm channel failed: " + e.getMessage());
    }

    /**
     * The device's rdma_cm reader stopped on a failure ({@code why}): this connection would no
     * longer learn of the peer's disconnect, so it ends as a failed one (QP to ERR, not open,
     * CLOSED naming why) rather than looking open for good; close still disconnects the id.
     */
    void readerStopped(String why) {
        if (!open || peerGone || channelBroken) {
            return;
        }
        LOG.warn("the connection with {} no longer learns of a disconnect: {}", info.remote(), why);
        readerGone = true;
        qp.failed();
        raiseClosed("the device's rdma_cm event reader stopped: " + why);
    }

    private void raiseClosed(String why) {
        if (closedRaised.compareAndSet(false, true)) {
            dev.raise(new AsyncEvent(AsyncEvent.Type.CLOSED, qp.qpNum(), this, null, null, why, qp.context()));
        }
    }

    @Override
    public void close() {
        lock.lock();
        try {
            if (!open) {
                return;
            }
            open = false;
            dev.cmEvents.unwatch(this);
            try {
                if (!peerGone) {
                    id.disconnect();
                    if (!channelBroken) {
                        try {
                            channel.expect(RdmaCm.DISCONNECTED, null, DISCONNECT_WAIT_MS);
                        } catch (RdmaException e) {
                            LOG.debug("close: {}", e.getMessage());
                        }
                    }
                }
            } catch (RdmaException e) {
                LOG.debug("rdma_disconnect: {}", e.getMessage());
            } finally {
                qp.disconnected();
                id.close();
                channel.close();
            }
        } finally {
            lock.unlock();
        }
        raiseClosed(peerGone ? "the peer disconnected" : "closed locally");
    }
}
