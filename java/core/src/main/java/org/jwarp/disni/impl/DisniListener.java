package org.jwarp.disni.impl;

import com.ibm.disni.verbs.RdmaCmId;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.jwarp.provider.CmNegotiation;
import org.jwarp.provider.NegotiatedRequest;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionInfo;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.ConnectionRequest;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaTimeoutException;
import org.jwarp.mpa.MpaDecodeException;
import org.jwarp.negotiation.NegotiationAction;
import org.jwarp.negotiation.NegotiationDecision;
import org.jwarp.negotiation.NegotiationOutcome;
import org.jwarp.verbs.ConnectionTerminatedException;
import org.jwarp.disni.natives.JwarpNative;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A listening rdma_cm id. Each CONNECT_REQUEST goes through the project's RFC 6581 section 9
 * responder engine ({@link CmNegotiation}): the initiator's IRD/ORD as the kernel's MPA layer
 * reported them (iWARP) or as {@link org.jwarp.negotiation.CmPrivateData} carried them (RoCE) are
 * validated before the ULP sees the request; accept and reject use the engine's decision.
 */
final class DisniListener implements Listener {
    private static final Logger LOG = LoggerFactory.getLogger(DisniListener.class);
    private final DisniDevice dev;
    private final RdmaCmId id;
    private final InetSocketAddress local;
    private volatile boolean open = true;

    DisniListener(DisniDevice dev, RdmaCmId id, InetSocketAddress local) {
        this.dev = dev;
        this.id = id;
        this.local = local;
    }

    @Override
    public InetSocketAddress localAddress() {
        return local;
    }

    @Override
    public ConnectionRequest next(Duration timeout) throws RdmaException, InterruptedException {
        if (!open) {
            throw new RdmaException("listener is closed");
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            CmEvent ev = left > 0 ? dev.dispatcher.awaitListen(id, Duration.ofNanos(left)) : null;
            if (ev == null) {
                throw new RdmaTimeoutException("no connection request on " + local + " within " + timeout);
            }
            if (ev.type() != CmEvent.CONNECT_REQUEST || ev.id() == null) {
                LOG.debug("listener {} ignores {}", local, ev);
                continue;
            }
            InetSocketAddress remote;
            try {
                remote = dev.dispatcher.locked(() -> (InetSocketAddress) dev.cm.getDstAddr(ev.id()));
            } catch (IOException e) {
                remote = null;
            }
            try {
                return new Request(ev.id(), remote, dev.connections.negotiation.responder(ev));
            } catch (MpaDecodeException | IllegalArgumentException bad) {
                LOG.warn("rejecting the request from {}: {}", remote, bad.getMessage());
                rejectQuietly(ev.id(), new byte[0]);
            }
        }
    }

    private void rejectQuietly(RdmaCmId child, byte[] pd) {
        try {
            long p = CmDispatcher.ptr(child);
            dev.dispatcher.locked(() -> {
                JwarpNative.reject(p, pd);
                return null;
            });
        } catch (IOException e) {
            LOG.warn("rdma_reject: {}", e.toString());
        }
        dev.dispatcher.destroy(child, false);
    }

    @Override
    public void close() {
        if (!open) {
            return;
        }
        open = false;
        CmEvent ev;
        while ((ev = dev.dispatcher.pollEvent(id)) != null) {
            if (ev.type() == CmEvent.CONNECT_REQUEST && ev.id() != null) {
                rejectQuietly(ev.id(), new byte[0]);
            }
        }
        dev.dispatcher.destroy(id, false);
        dev.forget(this);
    }

    /** One pending request; exactly one of accept/reject. */
    final class Request extends NegotiatedRequest {
        private final RdmaCmId child;

        Request(RdmaCmId child, InetSocketAddress remote, CmNegotiation.Responder neg) {
            super(neg, remote);
            this.child = child;
        }

        @Override
        public synchronized Connection accept(QueuePairConfig qpc, ConnectionParameters params) throws RdmaException {
            decide();
            NegotiationDecision d;
            try {
                d = neg.accept(params);
            } catch (IllegalArgumentException | IllegalStateException e) {
                rejectQuietly(child, new byte[0]);
                throw e;
            }
            NegotiationOutcome o = d.outcome();
            if (d.action() != NegotiationAction.ESTABLISH) {
                byte[] rej = d.frame() != null ? neg.privateData(d) : new byte[0];
                rejectQuietly(child, rej);
                if (d.term() != null) {
                    throw new ConnectionTerminatedException("accept from " + remote + ": " + o.reason(), d.term(), false);
                }
                throw new RdmaException("accept from " + remote + ": " + o.reason());
            }
            int ird = Math.min(o.ird(), CmNegotiation.CONN_PARAM_MAX);
            int ord = Math.min(o.ord(), CmNegotiation.CONN_PARAM_MAX);
            byte[] out = neg.privateData(d);
            long deadline = System.nanoTime() + DisniConnectionManager.ACCEPT_TIMEOUT.toNanos();
            DisniQp qp = null;
            boolean ok = false;
            try {
                qp = dev.createQp(child, qpc);
                if (qpc.beforeConnect() != null) {
                    qpc.beforeConnect().prepare(qp); // receives posted before rdma_accept
                }
                long p = CmDispatcher.ptr(child);
                dev.dispatcher.locked(() -> {
                    JwarpNative.accept(p, ird, ord, params.retryCount(), params.rnrRetryCount(), out);
                    return null;
                });
                CmEvent ev = dev.dispatcher.await(child, deadline, "accept from " + remote);
                DisniConnectionManager.expect(ev, CmEvent.ESTABLISHED, remote, "accept");
                LOG.debug("accept from {}: {} (event rr={} id={})", remote, o, ev.responderResources(),
                        ev.initiatorDepth());
                qp.established(ord);
                ConnectionInfo ci = CmNegotiation.info(local, remote, o, neg.peerIrd(), neg.peerOrd(),
                        neg.peerPrivateData(), dev.roce);
                DisniConnection c = new DisniConnection(dev, child, qp, ci);
                dev.track(c);
                ok = true;
                return c;
            } catch (IOException e) {
                if (e instanceof RdmaException r) {
                    throw r;
                }
                throw new RdmaException("accept from " + remote + ": " + e.getMessage(), e);
            } finally {
                if (!ok) {
                    if (qp != null) {
                        qp.failed();
                        DisniDevice.detach(qp, qpc);
                    }
                    dev.dispatcher.destroy(child, qp != null);
                }
            }
        }

        @Override
        public synchronized void reject(byte[] privateData) throws RdmaException {
            decide();
            byte[] out;
            try {
                out = neg.privateData(neg.reject(privateData));
            } catch (IllegalArgumentException e) {
                rejectQuietly(child, new byte[0]);
                throw e;
            }
            try {
                long p = CmDispatcher.ptr(child);
                dev.dispatcher.locked(() -> {
                    JwarpNative.reject(p, out);
                    return null;
                });
            } catch (IOException e) {
                throw new RdmaException("rdma_reject to " + remote + ": " + e.getMessage(), e);
            } finally {
                dev.dispatcher.destroy(child, false);
            }
        }
    }
}
