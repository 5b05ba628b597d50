package org.jwarp.disni.impl;

import com.ibm.disni.verbs.RdmaCmId;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Set;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionInfo;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.ConnectionRequest;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaTimeoutException;
import org.jwarp.negotiation.RtrType;
import org.jwarp.disni.natives.JwarpNative;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A listening rdma_cm id. Requests carry the initiator's IRD/ORD (RFC 6581 section 9.1): on
 * iWARP as rdma_cm reports the MPA values, checked for range; on RoCE from the jwarp
 * {@link RoceEnvelope}.
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
            try {
                return request(ev);
            } catch (IllegalStateException bad) {
                LOG.warn("rejecting request with invalid IRD/ORD: {}", bad.getMessage());
                rejectQuietly(ev.id(), new byte[0]);
            }
        }
    }

    private Request request(CmEvent ev) throws RdmaException {
        InetSocketAddress remote;
        try {
            remote = dev.dispatcher.locked(() -> (InetSocketAddress) dev.cm.getDstAddr(ev.id()));
        } catch (IOException e) {
            remote = null;
        }
        if (dev.roce) {
            RoceEnvelope.Decoded d = RoceEnvelope.decode(ev.privateData());
            if (d == null) {
                return new Request(ev.id(), remote, IrdOrd.UNKNOWN, IrdOrd.UNKNOWN, false, Set.of(), ev.privateData());
            }
            return new Request(ev.id(), remote, d.ird(), d.ord(), d.peerToPeer(), d.rtr(), d.ulpData());
        }
        int[] peer = IrdOrd.peerFromRequest(ev.responderResources(), ev.initiatorDepth());
        int peerIrd = peer[0];
        int peerOrd = peer[1];
        return new Request(ev.id(), remote, peerIrd, peerOrd, false, Set.of(), ev.privateData());
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
    final class Request implements ConnectionRequest {
        private final RdmaCmId child;
        private final InetSocketAddress remote;
        private final int peerIrd;
        private final int peerOrd;
        private final boolean p2p;
        private final Set<RtrType> rtr;
        private final byte[] pd;
        private boolean decided;

        Request(RdmaCmId child, InetSocketAddress remote, int peerIrd, int peerOrd, boolean p2p, Set<RtrType> rtr,
                byte[] pd) {
            this.child = child;
            this.remote = remote;
            this.peerIrd = peerIrd;
            this.peerOrd = peerOrd;
            this.p2p = p2p;
            this.rtr = rtr;
            this.pd = pd;
        }

        @Override
        public InetSocketAddress remote() {
            return remote;
        }

        @Override
        public int peerIrd() {
            return peerIrd;
        }

        @Override
        public int peerOrd() {
            return peerOrd;
        }

        @Override
        public boolean peerToPeer() {
            return p2p;
        }

        @Override
        public Set<RtrType> offeredRtrTypes() {
            return rtr;
        }

        @Override
        public byte[] privateData() {
            return pd.clone();
        }

        private void decide() throws RdmaException {
            if (decided) {
                throw new RdmaException("connection request from " + remote + " was already accepted or rejected");
            }
            decided = true;
        }

        @Override
        public synchronized Connection accept(QueuePairConfig qpc, ConnectionParameters params) throws RdmaException {
            decide();
            var info = dev.info();
            int ord = IrdOrd.ordWithin(IrdOrd.offer(params.ord(), info.maxQpInitRdAtom()), peerIrd);
            int ird = IrdOrd.responderIrd(IrdOrd.offer(params.ird(), info.maxQpRdAtom()), peerOrd, info.maxQpRdAtom());
            byte[] out = dev.roce
                    ? RoceEnvelope.encode(ird, ord, p2p && params.peerToPeer(), params.rtrTypes(), params.privateData(),
                            RoceEnvelope.IB_REP_PRIVATE_DATA, "connect reply")
                    : DisniDevice.iwarpPrivateData(params.privateData());
            long deadline = System.nanoTime() + DisniDevice.ACCEPT_TIMEOUT.toNanos();
            DisniQp qp = null;
            boolean ok = false;
            try {
                qp = dev.createQp(child, qpc);
                long p = CmDispatcher.ptr(child);
                dev.dispatcher.locked(() -> {
                    JwarpNative.accept(p, ird, ord, params.retryCount(), params.rnrRetryCount(), out);
                    return null;
                });
                CmEvent ev = dev.dispatcher.await(child, deadline, "accept from " + remote);
                DisniDevice.expect(ev, CmEvent.ESTABLISHED, remote, "accept");
                qp.established(ord);
                ConnectionInfo ci = new ConnectionInfo(local, remote, ird, ord, peerIrd, peerOrd, p2p, null, false,
                        dev.roce ? 0 : 2, pd);
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
                        DisniDevice.detach(qp, qpc);
                    }
                    dev.dispatcher.destroy(child, qp != null);
                }
            }
        }

        @Override
        public synchronized void reject(byte[] privateData) throws RdmaException {
            decide();
            byte[] data = privateData == null ? new byte[0] : privateData;
            byte[] out = dev.roce
                    ? RoceEnvelope.encode(0, 0, false, Set.of(), data, RoceEnvelope.IB_REJ_PRIVATE_DATA, "reject")
                    : DisniDevice.iwarpPrivateData(data);
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
