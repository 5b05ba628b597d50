package org.jwarp.soft.cm;

import java.net.InetAddress;
import java.net.InetSocketAddress;

import org.jwarp.negotiation.InitiatorNegotiator;
import org.jwarp.soft.loop.Reactor;
import org.jwarp.soft.verbs.SoftQueuePair;
import org.jwarp.verbs.RdmaException;

/**
 * What connection setup and the connection side above it need of their device: the setup
 * settings, a reactor for each new connection, the source address of initiated connections, the
 * registry the device closes on its own close, and the streams themselves, which are the layer
 * above's: setup makes none, it asks for one ({@link #initiator}) or for a listener's
 * ({@link #accepted}). The device hands out a private implementation, so neither setup nor the
 * stream names the device or the provider.
 */
public interface ConnectionHost {
    CmSettings settings();

    /** Where initiated connections leave from, or null for the kernel's route. */
    InetAddress sourceAddress();

    /** The event loop a new listener or connection is driven by. */
    Reactor nextReactor();

    /** Throws when the device is closed. */
    void checkOpen() throws RdmaException;

    /** Registers a listener or connection the device closes first when it closes. */
    void track(AutoCloseable c);

    void forget(AutoCloseable c);

    /** A new initiator stream to {@code remote} driven by {@code r}; {@link StreamSetup#startConnect} begins it. */
    SetupStream initiator(Reactor r, InetSocketAddress remote, SoftQueuePair qp, InitiatorNegotiator neg);

    /**
     * The streams of a new listener driven by {@code r}; {@code idleNanos} > 0 ends established
     * ones idle that long, 0 watches none.
     *
     * @throws IllegalArgumentException when {@code idleNanos} is negative
     */
    AcceptedStreams accepted(Reactor r, long idleNanos);
}
