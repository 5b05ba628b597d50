package org.jwarp.verbs;

import java.util.concurrent.TimeUnit;

/**
 * A completion queue (ibv_cq; the completions of RFC 5040 §5.5): poll without blocking, or wait for
 * completions with a timeout.
 *
 * <p>Thread-safety: {@link #poll} and {@link #await} may run from several threads at once, on every
 * provider; every completion is returned to exactly one caller, and completions of one work queue
 * come out in their order. Soft: one awaiting thread at a time reads the streams' sockets (the
 * leader), the others park on the CQ and are woken per completion; a close wakes them all. DiSNI:
 * polls of one CQ are serialized, and an awaiting thread waits in one native call (poll, arm, poll,
 * block on the CQ's completion channel, poll) holding that serialization for at most 100 ms at a
 * time, so a concurrent poll, spin or second await on the same CQ may wait up to 100 ms (or until
 * a completion ends the wait); an interrupt is seen within 100 ms. {@code ffm}: polls of one CQ
 * are serialized for one {@code ibv_poll_cq} each; an awaiting thread polls, arms and polls under
 * that serialization, then sleeps outside it on the CQ's own completion channel in slices of at
 * most 100 ms (one sleeper at a time, the other awaiting threads queue behind it and arm again
 * when an event disarmed the CQ meanwhile), so a concurrent poll or spin is not held up by a
 * sleeper; an interrupt is seen within 100 ms. With {@code -Djwarp.ffm.nativeLib} naming jwarp's
 * native library, {@code ffm} waits as DiSNI does instead: the whole sequence in one downcall
 * ({@code jw_cq_await}) under the serialization, at most 100 ms at a time. Every provider's CQ may be closed under a waiter,
 * which then returns at once: 0, or (soft) the completions still queued.
 * {@link #requestNotify} may be called from any thread. On a CQ created on a
 * {@link CompletionChannel}, DiSNI's and {@code ffm}'s {@link #await} poll with short sleeps (the
 * channel's events belong to the channel's consumer); soft's is unchanged.
 *
 * <p><b>Single-consumer mode</b> ({@link Device#createCompletionQueue(int, CompletionChannel, boolean)},
 * {@link QueuePairConfig#withSingleConsumer}). An application whose CQ and queue pairs are driven by
 * one thread (perftest's loop, a reactor per connection) may say so at creation, and a provider may
 * then poll and post without locks. The contract:
 * <ul>
 *   <li>One thread at a time, the owner, calls {@link #poll}, {@link #spin} and {@link #await} of a
 *       single-consumer CQ and {@link QueuePair#postSend} and {@link QueuePair#postRecv} of every
 *       single-consumer QP completing into it (a poll maps a QP's completions back to its requests,
 *       so it touches the QP's queues). The owner may change across a happens-before edge (a lock,
 *       a volatile write and read, a thread start or join, a concurrent queue): receives posted in
 *       the {@link QueuePairConfig.BeforeConnect} hook on the connecting thread, then posts and polls
 *       on the application's thread, keep it.</li>
 *   <li>Any thread, any time: {@link #capacity}, {@link #channel}, {@link #singleConsumer},
 *       {@link #requestNotify}, and the QP's {@code qpNum}, {@code state}, {@code caps} and
 *       {@code context}.</li>
 *   <li>{@link #close}: from the owner, from any thread after the owner stopped polling (with a
 *       happens-before edge), or from any thread while the owner waits in {@link #await}, which then
 *       returns 0 as on any CQ. Never while the owner is inside {@link #poll} or {@link #spin}. A
 *       single-consumer QP's {@link Connection} is closed the same way: by the owner, or after it
 *       stopped posting and polling.</li>
 *   <li>A QP asked for single-consumer should complete into single-consumer CQs: a CQ any thread
 *       may poll would let another thread map the QP's completions while its owner posts, which
 *       the contract forbids all the same.</li>
 *   <li>Broken contract (two threads inside the calls of one CQ or QP at once, or a close during a
 *       poll): undefined. Completions may map to the wrong requests, queue slots may leak, and on
 *       DiSNI and {@code ffm} a CQ destroyed under a running poll may crash the JVM. With Java
 *       assertions enabled for the provider ({@code -ea}, as the test suites run), the DiSNI and
 *       {@code ffm} providers check it: the second of two overlapping calls on one CQ or QP, and a
 *       close from another thread during a poll or spin, throw
 *       {@link java.util.ConcurrentModificationException} (best effort: it sees
 *       calls that overlap, not every unordered change of thread). Without {@code -ea} the check is
 *       compiled out and costs nothing.</li>
 *   <li>Provider difference: DiSNI and {@code ffm} poll, spin and post without taking a monitor
 *       and still allocate nothing ({@link #await} keeps its per-step lock, so a close can end the
 *       wait); soft accepts the option and keeps its thread-safe CQs and QPs, on which the
 *       contract is simply not needed. Code that follows it runs on every provider.</li>
 * </ul>
 *
 * <p>Overrun (ibv IBV_EVENT_CQ_ERR). Size a CQ for the sum of the queue depths that complete into
 * it. A completion that finds the CQ full is lost, and the application gets exactly this:
 * <ul>
 *   <li>the completions already in the CQ, still pollable, in order;</li>
 *   <li>one {@link AsyncEvent.Type#CQ_ERROR} event naming this CQ ({@link AsyncEvent#cq()}), at the
 *       first overrun;</li>
 *   <li>soft provider: every queue pair completing into the CQ goes to ERR, one
 *       {@link AsyncEvent.Type#QP_FATAL} event each (then {@code CLOSED}), its connection closes
 *       and its outstanding WRs flush. The flushed completions enter the CQ only while it has room:
 *       those that find it full are lost like the first one (as with ibverbs, no WR_FLUSH_ERR is
 *       owed for them), so poll what is there and do not wait for the rest;</li>
 *   <li>DiSNI and {@code ffm}: the kernel's CQ_ERROR only; the queue pairs are the device's (rxe leaves them as they
 *       are, siw ends the stream whose receive found the CQ full, so both sides see the connection
 *       end).</li>
 * </ul>
 * A CQ that overran is not reusable in a defined way: close the connections that use it, then the CQ.
 *
 * <p>Failures. A failure on a queue pair's data path (a TERM received or sent, RFC 5040 §7 and
 * RFC 5041 §7.2; a lost stream) is never thrown out of {@link #poll}, {@link #spin} or
 * {@link #await}, whichever thread meets it: it surfaces the same way through all three, as the
 * error completion of the WR concerned, the QP's other outstanding WRs flushed
 * ({@link WcStatus#WR_FLUSH_ERR}), the QP in {@link QueuePair.QpState#ERR}, the TERM at the peer,
 * and the QP event the device raises ({@link AsyncEvent.Type#QP_FATAL} on the soft provider; on
 * DiSNI and {@code ffm} what the kernel device raises), while the other QPs on the CQ go on. The only exception
 * {@link #poll} and {@link #spin} throw for a CQ that cannot be polled is
 * {@link IllegalStateException}: DiSNI and {@code ffm}, a closed CQ or {@code ibv_poll_cq} failing
 * (the device failed); soft, never (a closed soft CQ returns the completions still queued, then 0).
 */
public interface CompletionQueue extends AutoCloseable {
    /**
     * {@return the number of completions this CQ holds at most} At least the {@code entries}
     * asked of {@link Device#createCompletionQueue(int)}; a device may round it up.
     */
    int capacity();

    /**
     * Takes up to {@code max} completions without blocking ({@code ibv_poll_cq}) and copies them
     * into {@code out[0..n)}, oldest first; allocates nothing. Entries of {@code out} past the
     * returned count are left as they were.
     *
     * @param out the caller's preallocated completions, overwritten in place
     * @param max the most completions to take, at most {@code out.length}
     * @return the number of completions taken, 0 when the CQ is empty
     * @throws IllegalStateException DiSNI, {@code ffm}: the CQ is closed or the device failed the poll (see
     *                               Failures above; a QP's failure is never thrown here)
     */
    int poll(WorkCompletion[] out, int max);

    /**
     * Busy-polls ({@link #poll} without blocking or pausing, perftest's spin) until at least one
     * completion is taken or a bound is reached: {@code maxPolls} empty polls, or, when
     * {@code maxNanos > 0}, about {@code maxNanos} nanoseconds (the clock is read only every few
     * dozen polls, so this bound may be overshot by that many polls). Allocates nothing. The
     * calling thread burns its CPU for the whole wait and does not see an interrupt before the
     * bound: keep the bounds short and call again.
     *
     * <p>Provider difference: DiSNI spins in one native call ({@code ibv_poll_cq} in a loop), and
     * {@code ffm} in one Java loop of downcalls, each holding the CQ's lock for the whole spin, so
     * a concurrent {@link #poll}, {@link #await} or {@link #close} on the same CQ waits until the
     * spin ends (at most the bound). The default (the soft provider) loops over {@link #poll},
     * which other threads may enter between two polls.
     *
     * <p>A failure of a QP's data path met during the spin surfaces as through {@link #poll} and
     * {@link #await} (error and flushed completions, QP in ERR, the QP event; see Failures above),
     * never as an exception.
     *
     * @param out      the caller's preallocated completions, overwritten in place
     * @param max      the most completions to take, at most {@code out.length}
     * @param maxPolls the most polls before giving up, at least 1
     * @param maxNanos the longest spin in nanoseconds, 0 for no time bound (then {@code maxPolls} ends it)
     * @return the number of completions taken, 0 when a bound was reached with the CQ empty
     * @throws IllegalArgumentException when {@code maxPolls < 1} or {@code maxNanos < 0}
     * @throws IllegalStateException    as {@link #poll} (DiSNI, {@code ffm}: the CQ is closed or the device failed the poll)
     */
    default int spin(WorkCompletion[] out, int max, long maxPolls, long maxNanos) {
        if (maxPolls < 1 || maxNanos < 0) {
            throw new IllegalArgumentException("spin: maxPolls must be >= 1 and maxNanos >= 0, got " + maxPolls
                    + ", " + maxNanos);
        }
        long start = maxNanos > 0 ? System.nanoTime() : 0;
        for (long polls = 1; ; polls++) {
            int n = poll(out, max);
            if (n > 0 || polls >= maxPolls) {
                return n;
            }
            if (maxNanos > 0 && (polls & 63) == 0 && System.nanoTime() - start >= maxNanos) {
                return 0;
            }
        }
    }

    /**
     * Like {@link #poll} but waits up to {@code timeout} for at least one completion.
     *
     * @param out     the caller's preallocated completions, overwritten in place
     * @param max     the most completions to take, at most {@code out.length}
     * @param timeout longest wait, in {@code unit}
     * @param unit    the unit of {@code timeout}
     * @return the number of completions taken, 0 on timeout (or when the CQ was closed meanwhile)
     * @throws InterruptedException when the waiting thread is interrupted
     */
    int await(WorkCompletion[] out, int max, long timeout, TimeUnit unit) throws InterruptedException;

    /**
     * Drives the provider's receive path for this CQ's queue pairs on the calling thread, without
     * taking any completion: the call a thread makes while it waits on memory instead of on the
     * CQ (the last byte of an RDMA Write, ib_write_lat's loop), like libfabric's manual progress
     * or {@code ucp_worker_progress}. Never blocks, allocates nothing.
     *
     * <p>Provider difference: an RNIC or the kernel (DiSNI on siw, rxe, iWARP hardware) places
     * data by itself, so there this does nothing. The soft provider places data on a thread: a
     * thread that polls an empty CQ takes over reading its streams' sockets (see
     * {@code SoftCompletionQueue}), and keeps them while it is away for up to the poll lease
     * ({@code jwarp.soft.pollLeaseMicros}, then the provider's own thread takes them back). A
     * thread that spins on memory after polling should therefore call this in its spin loop; then
     * a Write is placed by the spinning thread as soon as it arrives, not after the lease.
     */
    default void progress() {
        // RNICs and kernel providers place data without the application's help
    }

    /**
     * Arms the CQ ({@code ibv_req_notify_cq}): the next completion added to it, or with
     * {@code solicitedOnly} the next Send with Solicited Event received (RFC 5040 §6.9) or the next
     * error completion, raises one event on the CQ's {@link CompletionChannel}. One-shot: re-arm
     * after each event. Completions already in the CQ raise nothing (poll after arming, see
     * {@link CompletionChannel}).
     *
     * <p>Provider difference: kernel siw never raises a solicited-only event for a receive, so on
     * siw devices the DiSNI and {@code ffm} providers arm for every completion instead (the waiter may wake for an
     * unsolicited Send; it never sleeps through a solicited one).
     *
     * @param solicitedOnly true: raise the event only for a solicited Send or an error completion;
     *                      false: for any completion
     * @throws IllegalStateException when the CQ was created without a completion channel
     * @throws RdmaException         when the device refuses the arming ({@code ibv_req_notify_cq} failed)
     */
    void requestNotify(boolean solicitedOnly) throws RdmaException;

    /**
     * {@return whether this CQ runs in single-consumer mode} True only where the provider exploits
     * the option ({@link Device#createCompletionQueue(int, CompletionChannel, boolean)}): DiSNI and
     * ffm. Soft reports false, also for a CQ asked for single-consumer (it stays thread-safe there).
     */
    default boolean singleConsumer() {
        return false;
    }

    /** {@return the channel this CQ was created on, or null when it has none} */
    CompletionChannel channel();

    /**
     * Destroys the CQ. Close the connections completing into it first. A thread awaiting on it
     * returns at once: 0, or (soft) the completions still queued.
     */
    @Override
    void close();
}
