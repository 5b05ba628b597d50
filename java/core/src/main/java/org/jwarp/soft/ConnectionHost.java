package org.jwarp.soft;

import java.net.InetAddress;

import org.jwarp.soft.loop.Reactor;
import org.jwarp.soft.tx.DirectBufferPool;
import org.jwarp.verbs.RdmaException;

/**
 * What the connection side (manager, listener, stream) needs of its device: the settings, the
 * transmit staging pool, a reactor for each new connection, the source address of initiated
 * connections, and the registry the device closes on its own close. {@link SoftDevice} hands out
 * a private implementation, so the connection classes never name the device or the provider.
 */
interface ConnectionHost {
    SoftConfig config();

    /** Where initiated connections leave from, or null for the kernel's route. */
    InetAddress sourceAddress();

    DirectBufferPool buffers();

    /** The event loop a new listener or connection is driven by. */
    Reactor nextReactor();

    /** Throws when the device is closed. */
    void checkOpen() throws RdmaException;

    /** Registers a listener or connection the device closes first when it closes. */
    void track(AutoCloseable c);

    void forget(AutoCloseable c);
}
