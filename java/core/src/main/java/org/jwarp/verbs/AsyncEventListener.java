package org.jwarp.verbs;

/**
 * Receives a device's {@link AsyncEvent}s ({@code ibv_get_async_event} and the rdma_cm connection
 * events), registered with {@link Device#setEventListener}. Called on the executor given at
 * registration, never on a provider's I/O thread; events of one device arrive in the order they
 * were raised when the executor runs tasks in order.
 *
 * <p>Thread-safety: an implementation must tolerate calls from the executor's threads.
 */
@FunctionalInterface
public interface AsyncEventListener {
    /**
     * Handles one event. May block the executor's thread, not the provider; a RuntimeException thrown
     * here is logged by the provider and the next event is still delivered.
     *
     * @param event the event, never null
     */
    void onEvent(AsyncEvent event);
}
