package org.jwarp.soft.cm;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.jwarp.negotiation.InitiatorNegotiator;
import org.jwarp.soft.loop.Reactor;
import org.jwarp.soft.verbs.SoftQueuePair;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionManager;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.ListenerConfig;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaTimeoutException;

/**
 * rdma_cm for the embedded provider: listens, and connects with the negotiator
 * {@link CmParameters} makes of the {@link ConnectionParameters}, running setup on a reactor. The
 * streams are the device's ({@link ConnectionHost#initiator}, {@link ConnectionHost#accepted}).
 */
public final class SoftConnectionManager implements ConnectionManager {
    private final ConnectionHost device;

    public SoftConnectionManager(ConnectionHost device) {
        this.device = device;
    }

    @Override
    public Listener listen(InetSocketAddress address, int backlog) throws RdmaException {
        return listen(address, ListenerConfig.of(backlog));
    }

    /** Listens with {@code config}; its idle timeout is enforced above setup ({@link AcceptedStreams}). */
    @Override
    public Listener listen(InetSocketAddress address, ListenerConfig config) throws RdmaException {
        device.checkOpen();
        try {
            Reactor r = device.nextReactor();
            AcceptedStreams accepted = device.accepted(r, config.idleTimeout().toNanos());
            SoftListener l = new SoftListener(device, r, address, config.backlog(), accepted);
            device.track(l);
            return l;
        } catch (IOException e) {
            throw new RdmaException("cannot listen on " + address + ": " + e.getMessage(), e);
        }
    }

    @Override
    public Connection connect(InetSocketAddress remote, QueuePairConfig qp, ConnectionParameters params,
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
        SetupStream s = device.initiator(r, remote, q, neg);
        StreamSetup setup = s.setup();
        r.execute(setup::startConnect);
        try {
            return s.established().get(timeout.toMillis(), TimeUnit.MILLISECONDS); // tracked by the stream
        } catch (TimeoutException e) {
            r.execute(() -> s.abandon(new RdmaTimeoutException("connect timed out")));
            throw new RdmaTimeoutException("no connection to " + remote + " within " + timeout.toMillis() + " ms");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            r.execute(() -> s.abandon(new RdmaException("interrupted")));
            throw new RdmaException("interrupted while connecting to " + remote);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RdmaException re) {
                throw re;
            }
            throw new RdmaException("connect to " + remote + " failed: " + e.getCause(), e.getCause());
        }
    }
}
