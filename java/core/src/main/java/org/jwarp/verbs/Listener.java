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
    /** {@return the address the listener is bound to, with the port chosen when 0 was asked} */
    InetSocketAddress localAddress();

    /**
     * Waits up to {@code timeout} for a connection request whose MPA request frame has arrived and
     * been validated.
     *
     * @param timeout the longest wait
     * @return the request, to be accepted or rejected
     * @throws RdmaTimeoutException when nothing arrives in time
     * @throws RdmaException        when the listener is closed
     * @throws InterruptedException when the waiting thread is interrupted
     */
    ConnectionRequest next(Duration timeout) throws RdmaException, InterruptedException;

    /** Stops listening ({@code rdma_destroy_id}) and rejects every pending request; a second close does nothing. */
    @Override
    void close();
}
