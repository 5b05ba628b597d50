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
    /** {@return the provider's name, as {@link Rdma#open(String)} takes it} */
    String name();

    /**
     * The devices this provider can open, with their limits ({@code ibv_get_device_list} and
     * {@code ibv_query_device}).
     *
     * @return the devices, one entry each
     * @throws RdmaException when the devices cannot be listed
     */
    List<DeviceInfo> devices() throws RdmaException;

    /**
     * Opens the device that serves {@code localAddress} (rdma_cm address-to-device binding). The
     * soft provider serves every local address.
     *
     * @param localAddress a local address of the device: connections are made and listened for
     *                     from it
     * @return the open device; close it when done
     * @throws RdmaException when no device serves the address or it cannot be opened
     */
    Device open(InetAddress localAddress) throws RdmaException;

    /** Closes every device, connection and registration the provider created; call it once. */
    @Override
    void close();
}
