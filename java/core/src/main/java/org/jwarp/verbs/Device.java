package org.jwarp.verbs;

/**
 * An opened device (ibv_context; the RNIC of RFC 5040 §8): allocates protection domains and
 * completion queues, and connects.
 *
 * <p>Thread-safety: {@link #info()} (immutable) and {@link #connectionManager()} may be called from
 * any thread; {@link #allocateProtectionDomain()} and {@link #createCompletionQueue} may run from
 * several threads at once, on both providers. {@link #close()} closes everything made from the
 * device; call it once, after the threads that use the device and its objects have stopped (an
 * object created while it runs may outlive it). {@link #createCompletionChannel()} and
 * {@link #setEventListener} may be called from any thread.
 */
public interface Device extends AutoCloseable {
    DeviceInfo info();

    ProtectionDomain allocateProtectionDomain() throws RdmaException;

    /** A completion queue with room for {@code entries} completions. */
    CompletionQueue createCompletionQueue(int entries) throws RdmaException;

    /**
     * A completion queue whose completion events go to {@code channel} (see
     * {@link CompletionQueue#requestNotify}); {@code channel} null is {@link #createCompletionQueue(int)}.
     */
    CompletionQueue createCompletionQueue(int entries, CompletionChannel channel) throws RdmaException;

    /** A completion channel ({@code ibv_create_comp_channel}) for CQs of this device. */
    CompletionChannel createCompletionChannel() throws RdmaException;

    /**
     * Sets the listener of this device's asynchronous events (QP fatal, CQ error, SRQ limit,
     * connection established / peer disconnected / closed), run on {@code executor}; null removes
     * it. Events raised while no listener is set are dropped (logged at debug level).
     */
    void setEventListener(AsyncEventListener listener, java.util.concurrent.Executor executor);

    /** rdma_cm on this device: listen/accept/reject and connect. */
    ConnectionManager connectionManager();

    @Override
    void close();
}
