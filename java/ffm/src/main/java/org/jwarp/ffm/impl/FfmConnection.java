package org.jwarp.ffm.impl;

import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionInfo;
import org.jwarp.verbs.QueuePair;
import org.jwarp.verbs.RdmaException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One established connection of the {@code ffm} provider: its rdma_cm id, event channel and QP. */
final class FfmConnection implements Connection {
    private static final Logger LOG = LoggerFactory.getLogger(FfmConnection.class);
    private static final long DISCONNECT_WAIT_MS = 5_000;

    private final FfmCmId id;
    private final FfmCmChannel channel;
    private final FfmQp qp;
    private final ConnectionInfo info;
    private boolean open = true;
    private boolean peerGone;

    FfmConnection(FfmCmId id, FfmCmChannel channel, FfmQp qp, ConnectionInfo info) {
        this.id = id;
        this.channel = channel;
        this.qp = qp;
        this.info = info;
    }

    @Override
    public QueuePair queuePair() {
        return qp;
    }

    @Override
    public ConnectionInfo info() {
        return info;
    }

    /** Open until closed or the peer disconnected (a DISCONNECTED event on the connection's own channel). */
    @Override
    public synchronized boolean isOpen() {
        if (open && !peerGone) {
            try {
                FfmCmChannel.Event ev = channel.poll();
                if (ev != null && ev.type() == RdmaCm.DISCONNECTED) {
                    peerGone = true;
                    qp.disconnected();
                }
            } catch (RdmaException e) {
                LOG.debug("rdma_get_cm_event: {}", e.getMessage());
            }
        }
        return open && !peerGone;
    }

    @Override
    public synchronized void close() {
        if (!open) {
            return;
        }
        open = false;
        try {
            if (!peerGone) {
                id.disconnect();
                try {
                    channel.expect(RdmaCm.DISCONNECTED, null, DISCONNECT_WAIT_MS);
                } catch (RdmaException e) {
                    LOG.debug("close: {}", e.getMessage());
                }
            }
        } catch (RdmaException e) {
            LOG.debug("rdma_disconnect: {}", e.getMessage());
        } finally {
            qp.disconnected();
            id.close();
            channel.close();
        }
    }
}
