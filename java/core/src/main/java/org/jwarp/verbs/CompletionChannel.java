package org.jwarp.verbs;

import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * A completion channel ({@code ibv_comp_channel}): completion events of many completion queues
 * delivered to one place, so one thread can sleep until any of them has work (RFC 5040 §5.5
 * completions; §6.9 solicited events). A CQ created on the channel
 * ({@link Device#createCompletionQueue(int, CompletionChannel)}) sends one event each time it is
 * armed with {@link CompletionQueue#requestNotify(boolean)} and then receives a completion that
 * matches the arming (any completion; or, solicited-only, a Send with Solicited Event or an error
 * completion). An event is only a hint: the consumer polls the CQ afterwards.
 *
 * <p><b>The poll–arm–poll rule.</b> A completion that arrived before the arming raises no event.
 * A consumer therefore drains the CQ, arms it, then polls it once more before it sleeps:
 * <pre>{@code
 * while (true) {
 *     CompletionQueue cq = channel.next(1, TimeUnit.SECONDS);   // null on timeout
 *     if (cq == null) continue;
 *     do { n = cq.poll(wcs, wcs.length); handle(wcs, n); } while (n > 0);
 *     cq.requestNotify(false);
 *     while ((n = cq.poll(wcs, wcs.length)) > 0) handle(wcs, n); // completions that raced the arming
 * }
 * }</pre>
 * Every completion is then found by a poll or announced by an event; none is lost.
 *
 * <p>Events are acknowledged by {@link #next} itself ({@code ibv_get_cq_event} followed by
 * {@code ibv_ack_cq_events}), so a CQ of the channel may be closed at any time after its last
 * event was taken.
 *
 * <p>Thread-safety: {@link #next} may run from several threads at once; each event goes to exactly
 * one of them. {@link #listen} starts one dispatching thread per call. {@link #close()} comes once,
 * after the channel's CQs were closed; a thread waiting in {@code next} then returns null (soft;
 * {@code ffm}: within 100 ms, and the close waits up to 2 s for the waiters to leave before it
 * destroys the channel) or at its timeout (DiSNI: within 100 ms).
 */
public interface CompletionChannel extends AutoCloseable {
    /**
     * Waits up to {@code timeout} for the next completion event of any CQ of this channel, and
     * acknowledges it. The CQ is disarmed by the event: poll it, re-arm it with
     * {@link CompletionQueue#requestNotify(boolean)} and poll it again (the poll–arm–poll rule).
     *
     * @param timeout longest wait, in {@code unit}; 0 or less checks once without waiting
     * @param unit    the unit of {@code timeout}
     * @return the CQ that raised the event, or null on timeout or when the channel is closed
     * @throws InterruptedException when the waiting thread is interrupted
     */
    CompletionQueue next(long timeout, TimeUnit unit) throws InterruptedException;

    /**
     * The callback form: a daemon thread waits on this channel and, for each event, runs
     * {@code handler} with the CQ on {@code executor}. The handler should poll the CQ, re-arm it
     * and poll again (the poll–arm–poll rule). Events of one CQ are handed over one at a time:
     * the next one is taken only after the handler for the previous one returned, so a handler
     * never runs twice at once for the same CQ on a single-threaded executor. Closing the
     * returned handle stops the thread (within 100 ms); no handler starts after that. A
     * RuntimeException thrown by the handler is logged and the next event is still handed over.
     *
     * @param handler  run once per event with the CQ that raised it
     * @param executor where the handler runs (its own thread pool, never a provider's I/O thread)
     * @return the handle whose {@code close()} stops the dispatching thread
     */
    AutoCloseable listen(CompletionHandler handler, Executor executor);

    /**
     * {@return the number of events taken from this channel so far} A monotonic count, for
     * diagnostics and tests.
     */
    long events();

    /**
     * Destroys the channel. Call it once, after every CQ created on it was closed; threads waiting
     * in {@link #next} then return null (soft; {@code ffm}: within 100 ms) or at their timeout (DiSNI:
     * within 100 ms).
     */
    @Override
    void close();

    /** What the callback form calls for each event. */
    @FunctionalInterface
    interface CompletionHandler {
        /**
         * Handles one completion event: poll {@code cq}, re-arm it, poll it again.
         *
         * @param cq the completion queue that raised the event
         */
        void onCompletionEvent(CompletionQueue cq);
    }
}
