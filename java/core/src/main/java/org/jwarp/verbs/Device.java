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
    /** {@return the device's identity and limits ({@code ibv_query_device}), immutable} */
    DeviceInfo info();

    /**
     * Allocates a protection domain ({@code ibv_alloc_pd}).
     *
     * @return the new domain
     * @throws RdmaException when the device is closed or refuses
     */
    ProtectionDomain allocateProtectionDomain() throws RdmaException;

    /**
     * A completion queue ({@code ibv_create_cq}) with room for {@code entries} completions. Size it
     * for the sum of the queue depths completing into it: an overrun is fatal (see
     * {@link CompletionQueue}).
     *
     * @param entries the completions the CQ must hold, at most {@link DeviceInfo#maxCqe()}
     * @return the new CQ
     * @throws RdmaException when the device is closed or cannot create it
     */
    CompletionQueue createCompletionQueue(int entries) throws RdmaException;

    /**
     * A completion queue whose completion events go to {@code channel} (see
     * {@link CompletionQueue#requestNotify}); {@code channel} null is {@link #createCompletionQueue(int)}.
     *
     * @param entries the completions the CQ must hold
     * @param channel the channel of this device that receives the CQ's events, or null
     * @return the new CQ
     * @throws RdmaException when the device is closed or cannot create it
     */
    CompletionQueue createCompletionQueue(int entries, CompletionChannel channel) throws RdmaException;

    /**
     * A completion queue as {@link #createCompletionQueue(int, CompletionChannel)}, in
     * single-consumer mode when {@code singleConsumer} is true: {@link CompletionQueue#poll},
     * {@link CompletionQueue#spin} and {@link CompletionQueue#await} then come from one thread at a
     * time (the contract, and what breaking it does, is in {@link CompletionQueue}, "Single-consumer
     * mode"), and a provider may poll without a lock. The default ignores the option and makes a CQ
     * that any thread may use: soft keeps its thread-safe CQ
     * ({@link CompletionQueue#singleConsumer()} is false there); DiSNI and ffm poll without a lock.
     *
     * @param entries        the completions the CQ must hold
     * @param channel        the channel of this device that receives the CQ's events, or null
     * @param singleConsumer true for a single-consumer CQ, false for the thread-safe one
     * @return the new CQ
     * @throws RdmaException when the device is closed or cannot create it
     */
    default CompletionQueue createCompletionQueue(int entries, CompletionChannel channel, boolean singleConsumer)
            throws RdmaException {
        return createCompletionQueue(entries, channel);
    }

    /**
     * A completion queue as {@link #createCompletionQueue(int, CompletionChannel, boolean)} whose
     * {@link CompletionQueue#await} waits by {@code await}: spin, then yield, then block (see
     * {@link AwaitStrategy}); null takes the provider's default. The default ignores the strategy:
     * DiSNI and {@code ffm} block in the kernel's completion channel. Soft uses it (its provider
     * default comes from {@code jwarp.soft.pollSpinMicros} and {@code jwarp.soft.pollYields}).
     *
     * @param entries        the completions the CQ must hold
     * @param channel        the channel of this device that receives the CQ's events, or null
     * @param singleConsumer true for a single-consumer CQ, false for the thread-safe one
     * @param await          how an awaiting thread waits on the empty CQ, or null for the provider's default
     * @return the new CQ
     * @throws RdmaException when the device is closed or cannot create it
     */
    default CompletionQueue createCompletionQueue(int entries, CompletionChannel channel, boolean singleConsumer,
                                                  AwaitStrategy await) throws RdmaException {
        return createCompletionQueue(entries, channel, singleConsumer);
    }

    /**
     * A completion channel ({@code ibv_create_comp_channel}) for CQs of this device.
     *
     * @return the new channel
     * @throws RdmaException when the device is closed or cannot create it
     */
    CompletionChannel createCompletionChannel() throws RdmaException;

    /**
     * Sets the listener of this device's asynchronous events (QP fatal, CQ error, SRQ limit,
     * connection established / peer disconnected / closed), run on {@code executor}; null removes
     * it. Events raised while no listener is set are dropped (logged at debug level).
     *
     * <p>Events are handed to {@code executor} in order from one dispatcher thread per device,
     * never from a provider I/O thread or under a provider lock, so a direct executor
     * ({@code Runnable::run}) is safe.
     *
     * @param listener the listener, or null to remove it
     * @param executor where the listener runs; required with a listener
     * @throws IllegalArgumentException when {@code listener} is set and {@code executor} is null
     * @throws IllegalStateException    when a listener is set on a closed device (soft)
     */
    void setEventListener(AsyncEventListener listener, java.util.concurrent.Executor executor);

    /** {@return rdma_cm on this device: listen/accept/reject and connect} */
    ConnectionManager connectionManager();

    /**
     * Closes the device ({@code ibv_close_device}) and everything made from it: connections,
     * listeners, queue pairs, CQs, channels, domains and their regions. Call it once, after the
     * threads using the device have stopped.
     */
    @Override
    void close();
}
