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
    void onEvent(AsyncEvent event);
}
