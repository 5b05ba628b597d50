package org.jwarp.soft.cm;

import java.net.InetAddress;

import org.jwarp.soft.loop.Reactor;
import org.jwarp.verbs.RdmaException;

/**
 * What connection setup and the connection side above it need of their device: the setup
 * settings, a reactor for each new connection, the source address of initiated connections, and
 * the registry the device closes on its own close. The device hands out a private
 * implementation, so neither names the device or the provider.
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
}
