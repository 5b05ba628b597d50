package org.jwarp.disni.impl;

import com.ibm.disni.verbs.RdmaCmId;
import java.io.IOException;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionInfo;
import org.jwarp.verbs.QueuePair;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An established rdma_cm connection. Closing it disconnects (RFC 5040 section 5.3 graceful
 * close of the stream; outstanding WRs flush), destroys the QP and the id.
 */
final class DisniConnection implements Connection {
    private static final Logger LOG = LoggerFactory.getLogger(DisniConnection.class);
    private static final long DISCONNECT_WAIT_NANOS = 2_000_000_000L;
    private final DisniDevice dev;
    private final RdmaCmId id;
    private final DisniQp qp;
    private final ConnectionInfo info;
    private volatile boolean open = true;

    DisniConnection(DisniDevice dev, RdmaCmId id, DisniQp qp, ConnectionInfo info) {
        this.dev = dev;
        this.id = id;
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

    @Override
    public boolean isOpen() {
        if (open) {
            CmEvent ev = dev.dispatcher.pollEvent(id);
            if (ev != null && (ev.type() == CmEvent.DISCONNECTED || ev.type() == CmEvent.DEVICE_REMOVAL)) {
                qp.failed();
                return false;
            }
        }
        return open && qp.state() != QueuePair.QpState.ERR;
    }

    @Override
    public void close() {
        if (!open) {
            return;
        }
        open = false;
        qp.failed();
        try {
            dev.dispatcher.locked(() -> dev.cm.disconnect(id));
        } catch (IOException e) {
            LOG.debug("rdma_disconnect: {}", e.toString());
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
    }

    private void detachFromCqs() {
        // the CQs keep a QP list for read accounting; drop this QP from every CQ of the device
        dev.detachEverywhere(qp);
    }
}
