package org.jwarp.verbs;

import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * A listening rdma_cm id (the passive side of RFC 6581 §9 connection setup). Closing it rejects
 * every pending request.
 *
 * <p>Thread-safety: {@link #next} may run from several threads at once, on both providers; each
 * connection request goes to exactly one of them, and each request is accepted or rejected once.
 * A {@code next} that is waiting when the listener is closed ends with an {@link RdmaException}
 * (soft: within 100 ms; DiSNI: at its timeout at the latest). {@link #localAddress()} may be called
 * from any thread.
 */
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
