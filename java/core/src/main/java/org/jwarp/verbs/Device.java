package org.jwarp.verbs;

/**
 * An opened device (ibv_context; the RNIC of RFC 5040 §8): allocates protection domains and
 * completion queues, and connects.
 *
 * <p>Thread-safety: {@link #info()} (immutable) and {@link #connectionManager()} may be called from
 * any thread; {@link #allocateProtectionDomain()} and {@link #createCompletionQueue} may run from
 * several threads at once, on both providers. {@link #close()} closes everything made from the
 * device; call it once, after the threads that use the device and its objects have stopped (an
 * object created while it runs may outlive it).
 */
public interface Device extends AutoCloseable {
    DeviceInfo info();

    ProtectionDomain allocateProtectionDomain() throws RdmaException;

    /** A completion queue with room for {@code entries} completions. */
    CompletionQueue createCompletionQueue(int entries) throws RdmaException;

    /** rdma_cm on this device: listen/accept/reject and connect. */
    ConnectionManager connectionManager();

    @Override
    void close();
}
