package org.jwarp.soft;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.jwarp.negotiation.InitiatorNegotiator;
import org.jwarp.soft.cm.CmParameters;
import org.jwarp.soft.loop.Reactor;
import org.jwarp.soft.verbs.SoftQueuePair;
import org.jwarp.verbs.ConnectionManager;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.ListenerConfig;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaTimeoutException;

/**
 * rdma_cm for the embedded provider: listens, and connects with the negotiator
 * {@link CmParameters} makes of the {@link ConnectionParameters}, running setup on a reactor.
 */
final class SoftConnectionManager implements ConnectionManager {
    private final StreamHost device;

    SoftConnectionManager(StreamHost device) {
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
            neg = new InitiatorNegotiator(CmParameters.initiatorConfig(params));
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
}
