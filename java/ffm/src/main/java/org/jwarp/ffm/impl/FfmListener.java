package org.jwarp.ffm.impl;

import java.net.InetSocketAddress;
import java.time.Duration;
import org.jwarp.mpa.MpaDecodeException;
import org.jwarp.negotiation.NegotiationAction;
import org.jwarp.negotiation.NegotiationDecision;
import org.jwarp.negotiation.NegotiationOutcome;
import org.jwarp.provider.CmNegotiation;
import org.jwarp.provider.NegotiatedRequest;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionInfo;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.ConnectionRequest;
import org.jwarp.verbs.ConnectionTerminatedException;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.RdmaException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A listening rdma_cm id of the {@code ffm} provider. Each request's id moves to its own event
 * channel ({@code rdma_migrate_id}) before it is handed out, so its accept and disconnection never
 * mix with the listener's requests. The responder side of {@link CmNegotiation} decides IRD/ORD
 * and builds the reply's private data (RFC 6581 §9.1).
 */
final class FfmListener implements Listener {
    private static final Logger LOG = LoggerFactory.getLogger(FfmListener.class);
    private static final long ACCEPT_TIMEOUT_MS = 30_000;

    private final FfmDevice dev;
    private final FfmCmChannel channel;
    private final FfmCmId id;
    private final InetSocketAddress local;

    private FfmListener(FfmDevice dev, FfmCmChannel channel, FfmCmId id, InetSocketAddress local) {
        this.dev = dev;
        this.channel = channel;
        this.id = id;
        this.local = local;
    }

    static FfmListener open(FfmDevice dev, InetSocketAddress address, int backlog) throws RdmaException {
        FfmCmChannel ch = FfmCmChannel.create();
        FfmCmId id = null;
        try {
            id = FfmCmId.create(ch);
            id.listen(address, backlog);
            InetSocketAddress bound = FfmAddresses.local(id.id); // the port the kernel chose for port 0
            return new FfmListener(dev, ch, id, bound != null ? bound : address);
        } catch (RdmaException | RuntimeException e) {
            if (id != null) {
                id.close();
            }
            ch.close();
            throw e;
        }
    }

    @Override
    public InetSocketAddress localAddress() {
        return local;
    }

    @Override
    public ConnectionRequest next(Duration timeout) throws RdmaException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            FfmCmChannel.Event ev;
            synchronized (this) {
                ev = channel.next(FfmDevice.remainingMs(deadline), "a connection request on " + local);
            }
            if (ev.type() != RdmaCm.CONNECT_REQUEST) {
                LOG.debug("listener on {}: {} ignored", local, ev.name());
                continue;
            }
            FfmCmChannel own = FfmCmChannel.create();
            FfmCmId child = FfmCmId.requested(channel, ev).migrate(own);
            CmNegotiation.Responder neg;
            try {
                neg = dev.negotiation.responder(ev);
            } catch (MpaDecodeException | IllegalArgumentException bad) {
                LOG.info("connection request on {} refused: {}", local, bad.getMessage());
                try {
                    child.reject();
                } finally {
                    child.close();
                    own.close();
                }
                continue;
            }
            return new Request(child, own, neg, FfmAddresses.peer(child.id));
        }
    }

    @Override
    public synchronized void close() {
        id.close();
        channel.close();
    }

    /** One request, answered once by accept or reject. */
    private final class Request extends NegotiatedRequest {
        private final FfmCmId child;
        private final FfmCmChannel own;

        Request(FfmCmId child, FfmCmChannel own, CmNegotiation.Responder neg, InetSocketAddress remote) {
            super(neg, remote);
            this.child = child;
            this.own = own;
        }

        @Override
        public synchronized Connection accept(QueuePairConfig qpc, ConnectionParameters params) throws RdmaException {
            decide();
            boolean ok = false;
            try {
                NegotiationDecision d = neg.accept(params);
                NegotiationOutcome o = d.outcome();
                if (d.action() != NegotiationAction.ESTABLISH) {
                    child.reject(d.frame() != null ? neg.privateData(d) : new byte[0]);
                    if (d.term() != null) {
                        throw new ConnectionTerminatedException("accept on " + local + ": " + o.reason(), d.term(), false);
                    }
                    throw new RdmaException("accept on " + local + ": " + o.reason());
                }
                int ird = Math.min(o.ird(), CmNegotiation.CONN_PARAM_MAX);
                int ord = Math.min(o.ord(), CmNegotiation.CONN_PARAM_MAX);
                FfmQp qp = dev.createQp(child, qpc);
                if (qpc.beforeConnect() != null) {
                    qpc.beforeConnect().prepare(qp); // receives posted before rdma_accept
                }
                child.accept(ird, ord, neg.privateData(d), params.retryCount(), params.rnrRetryCount());
                FfmCmChannel.Event ev = own.next(ACCEPT_TIMEOUT_MS, "ESTABLISHED after accept on " + local);
                if (ev.type() != RdmaCm.ESTABLISHED) {
                    throw new RdmaException("accept on " + local + ": " + ev.name() + " (status " + ev.status() + ")");
                }
                qp.established(ord);
                qp.context(qpc.context());
                // rdma_get_local_addr of the new id: on a wildcard listener the device's address, not 0.0.0.0
                InetSocketAddress bound = FfmAddresses.local(child.id);
                ConnectionInfo ci = CmNegotiation.info(bound != null ? bound : local, remote, o, neg.peerIrd(), neg.peerOrd(),
                        neg.peerPrivateData(), dev.roce);
                FfmConnection c = new FfmConnection(dev, child, own, qp, ci);
                ok = true;
                return c;
            } catch (IllegalArgumentException | IllegalStateException e) {
                if (!ok) {
                    try {
                        child.reject();
                    } catch (RdmaException ignored) {
                        LOG.debug("rdma_reject after a refused accept: {}", ignored.getMessage());
                    }
                }
                throw e;
            } finally {
                if (!ok) {
                    child.close();
                    own.close();
                }
            }
        }

        @Override
        public synchronized void reject(byte[] privateData) throws RdmaException {
            decide();
            try {
                NegotiationDecision d = neg.reject(privateData);
                child.reject(neg.privateData(d));
            } finally {
                child.close();
                own.close();
            }
        }
    }
}
