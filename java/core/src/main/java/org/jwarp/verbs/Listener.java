package org.jwarp.verbs;

import java.net.InetSocketAddress;
import java.time.Duration;

/** A listening rdma_cm id. Closing it rejects every pending request. */
public interface Listener extends AutoCloseable {
    InetSocketAddress localAddress();

    /**
     * Waits up to {@code timeout} for a connection request whose MPA request frame has arrived and
     * been validated.
     *
     * @throws RdmaTimeoutException when nothing arrives in time
     */
    ConnectionRequest next(Duration timeout) throws RdmaException, InterruptedException;

    @Override
    void close();
}
