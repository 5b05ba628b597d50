package org.jwarp.verbs;

import java.net.InetAddress;
import java.util.List;

/**
 * One RDMA provider (the embedded soft iWARP stack, or DiSNI over rdma-core). Closing it closes
 * every device, connection and registration it created.
 *
 * <p>Thread-safety: {@code open} and the device listing may run from several threads at once, on
 * both providers; {@code close()} comes once, after the threads using the provider have stopped.
 */
public interface RdmaProvider extends AutoCloseable {
    String name();

    /** The devices this provider can open, with their limits. */
    List<DeviceInfo> devices() throws RdmaException;

    /**
     * Opens the device that serves {@code localAddress} (rdma_cm address-to-device binding). The
     * soft provider serves every local address.
     */
    Device open(InetAddress localAddress) throws RdmaException;

    @Override
    void close();
}
