package org.jwarp.soft;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.jwarp.mpa.EnhancedConnectionData;
import org.jwarp.mpa.MpaFrameLimits;
import org.jwarp.negotiation.InitiatorConfig;
import org.jwarp.negotiation.InitiatorNegotiator;
import org.jwarp.negotiation.ResponderConfig;
import org.jwarp.soft.loop.Reactor;
import org.jwarp.soft.verbs.SoftQueuePair;
import org.jwarp.verbs.ConnectionManager;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.ListenerConfig;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaTimeoutException;
import org.jwarp.ground.RtrType;

/**
 * rdma_cm for the embedded provider: maps {@link ConnectionParameters} onto the RFC 6581
 * negotiators (responder_resources = IRD, initiator_depth = ORD, §9.1; peer-to-peer and RTR
 * types, §9.2) and runs setup on a reactor. Following the Linux siw interop rules, an initiator
 * always offers RFC 6581 enhanced data, offers CRC by default, and uses ORD ≥ 1 in P2P mode when
 * a Read RTR is offered.
 */
final class SoftConnectionManager implements ConnectionManager {
    /** IRD and ORD ceiling of every connection, the same as Linux siw's (SIW_MAX_IRD_QP / SIW_MAX_ORD_QP). */
    static final int MAX_IRD_ORD = 128;

    private final ConnectionHost device;

    SoftConnectionManager(ConnectionHost device) {
        this.device = device;
    }

    @Override
    public Listener listen(InetSocketAddress address, int backlog) throws RdmaException {
        return listen(address, ListenerConfig.of(backlog));
    }

    /** Listens with {@code config}; its idle timeout is enforced by the listener ({@link SoftListener}). */
    @Override
    public Listener listen(InetSocketAddress address, ListenerConfig config) throws RdmaException {
        device.checkOpen();
        try {
            SoftListener l = new SoftListener(device, device.nextReactor(), address, config.backlog(),
                    config.idleTimeout().toNanos());
            device.track(l);
            return l;
        } catch (IOException e) {
            throw new RdmaException("cannot listen on " + address + ": " + e.getMessage(), e);
        }
    }

    @Override
    public SoftConnection connect(InetSocketAddress remote, QueuePairConfig qp, ConnectionParameters params,
                                  Duration timeout) throws RdmaException {
        device.checkOpen();
        if (remote.isUnresolved()) {
            throw new RdmaException("cannot resolve " + remote.getHostString());
        }
        SoftQueuePair q = new SoftQueuePair(qp);
        q.runBeforeConnect();
        InitiatorNegotiator neg;
        try {
            neg = new InitiatorNegotiator(initiatorConfig(params));
        } catch (IllegalArgumentException e) {
            throw new RdmaException("connect: " + e.getMessage(), e);
        }
        Reactor r = device.nextReactor();
        SoftStream s = SoftStream.initiator(device, r, remote, q, neg);
        r.execute(s.setup::startConnect);
        try {
            return s.established.get(timeout.toMillis(), TimeUnit.MILLISECONDS); // tracked by the stream
        } catch (TimeoutException e) {
            r.execute(() -> s.closer.teardown(new RdmaTimeoutException("connect timed out"), false));
            throw new RdmaTimeoutException("no connection to " + remote + " within " + timeout.toMillis() + " ms");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            r.execute(() -> s.closer.teardown(new RdmaException("interrupted"), false));
            throw new RdmaException("interrupted while connecting to " + remote);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RdmaException re) {
                throw re;
            }
            throw new RdmaException("connect to " + remote + " failed: " + e.getCause(), e.getCause());
        }
    }

    static InitiatorConfig initiatorConfig(ConnectionParameters p) {
        int ord = p.ord();
        if (p.peerToPeer() && ord == 0 && p.rtrTypes().contains(RtrType.READ)) {
            ord = 1; // siw rule: a Read RTR takes one ORQ slot
        }
        int ird = deviceCapped(p.ird());
        InitiatorConfig.Builder b = InitiatorConfig.builder()
                .ird(ird)
                .ord(deviceCapped(ord))
                .maxIrd(ird == EnhancedConnectionData.NO_NEGOTIATION ? ird : MAX_IRD_ORD)
                .peerToPeer(p.peerToPeer())
                .rtrTypes(p.peerToPeer() ? p.rtrTypes() : Set.of())
                .enhanced(true)
                .crc(p.crc())
                .markers(false)
                .limits(MpaFrameLimits.RFC)
                .ulpPrivateData(p.privateData())
                // RFC 6581 §10: the Rev 1 retry only where unenhanced MPA works for the ULP (no RTR needed)
                .fallbackToUnenhanced(!p.peerToPeer());
        return b.build();
    }

    static ResponderConfig responderConfig(ConnectionParameters p) {
        Set<RtrType> rtr = p.rtrTypes().isEmpty() ? EnumSet.allOf(RtrType.class) : p.rtrTypes();
        return ResponderConfig.builder()
                .maxIrd(deviceCapped(p.ird()))
                .ord(deviceCapped(p.ord()))
                .rtrTypes(rtr)
                .crc(p.crc())
                .markers(false)
                .limits(MpaFrameLimits.RFC)
                .ulpPrivateData(p.privateData())
                .build();
    }

    /**
     * RFC 6581 §9.1: the IRD/ORD put in a Request or Reply is what the data path enforces, so values
     * above the device's {@link #MAX_IRD_ORD} are lowered to it before they are
     * advertised; {@code 0x3FFF} (no automatic negotiation) passes unchanged.
     */
    static int deviceCapped(int v) {
        return v == EnhancedConnectionData.NO_NEGOTIATION ? v : Math.min(v, MAX_IRD_ORD);
    }
}
