package org.jwarp.soft.cq;

import java.util.concurrent.TimeUnit;

import org.jwarp.ground.SnapshotArrays;
import org.jwarp.soft.verbs.CompletionSink;
import org.jwarp.soft.verbs.SoftQueuePair;
import org.jwarp.verbs.AsyncEvent;
import org.jwarp.verbs.AwaitStrategy;
import org.jwarp.verbs.CompletionChannel;
import org.jwarp.verbs.CompletionQueue;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Completion queue of the embedded provider (completions of RFC 5040 §5.5; the verbs CQ of
 * RDMAC/ibv_cq). A fixed ring of preallocated {@link WorkCompletion} slots: the reactor thread
 * fills a slot in place, consumers copy it out, so neither side allocates.
 *
 * <p>A full CQ is an overrun (ibv IBV_EVENT_CQ_ERR), never silent: the completion is dropped and
 * counted in {@link #overruns()}, the device raises {@link AsyncEvent.Type#CQ_ERROR}, and every
 * queue pair using the CQ goes to ERR and flushes (its stream is torn down on its reactor), so no
 * consumer waits for a completion that was lost. Kernel devices differ: rxe raises the CQ event
 * and leaves its QPs as they are; siw 6.1 raises it and ends the stream whose receive found the CQ
 * full (the peer sees a disconnect), other QPs on the CQ stay as they are. Size CQs for the sum of the queue depths that use them.
 *
 * <p>Notification ({@link #requestNotify}, {@code ibv_req_notify_cq}): arming and adding a
 * completion both happen under the CQ lock, so a completion is either in the ring before the
 * arming (found by the poll that follows it) or raises the event on the CQ's
 * {@link SoftCompletionChannel}.
 *
 * <h2>Receive polling (leader/follower, {@link CqPoller})</h2>
 * Without it every received message costs two thread hand-offs: the reactor wakes from select,
 * reads, runs the engine and fills the CQ, then wakes the thread blocked in {@link #await}. A
 * plain TCP ping-pong thread reads its own socket instead. So a thread that awaits on an empty
 * CQ first becomes the CQ's <em>leader</em> (one at a time, by try-lock; the others park on the
 * monitor): it waits by the CQ's {@link AwaitStrategy}, spinning for up to its spin time and then
 * yielding up to its yield count, each turn reading the readable sockets without blocking (a
 * completion produced by another thread may land as well), then blocks in the CQ's own selector,
 * where every stream of the CQ is registered, and reads only the sockets it reports readable,
 * each under that stream's I/O lock taken without waiting (a busy lock means the reactor or a
 * poster drives the stream just now, and that driver will fill the CQ). A small message costs
 * one {@code epoll_wait} and one {@code read()}, however many streams share the CQ: no empty
 * reads, no scan of idle streams. {@link #complete} wakes a leader blocked in the selector when
 * the completion came from another thread. The I/O lock serializes readers, so bytes reach the
 * engine in order and completions enter the ring in order per queue; the park path is the
 * unchanged monitor protocol, and a thread parks only while another leads or the poller holds no
 * stream (a leader that kept the streams for a completion another thread then drained leads
 * again instead), so no wake-up is lost and no stream is left unread.
 *
 * <p>Idle phases ({@link AwaitStrategy}, per CQ; the provider's default from
 * {@code jwarp.soft.pollSpinMicros} and {@code jwarp.soft.pollYields}): a thread that does not
 * lead (another leads, or receive polling is off) spins and then yields on the ring within the
 * same bounds, trying to lead after each turn, before it parks on the monitor. Every phase is
 * bounded, so no waiter burns a core for longer than the spin plus the yields per wait.
 *
 * <p>A stream read by a poller has no OP_READ interest at its reactor (its data must not wake
 * the reactor thread for nothing). The hand-over is sticky: a leader that found a completion
 * keeps the streams, because its thread usually comes back within microseconds (a ping-pong).
 * The reactor stays responsible for liveness: when no thread has led or polled this CQ for
 * {@code SoftConfig.pollLeaseMicros}, it takes the CQ's streams back (peers that only need the
 * reactor: Read Requests to answer, Writes to place, a TERM, a close); that check costs one test
 * per CQ per reactor turn, not one per stream. A thread about to sleep on the CQ's completion
 * channel hands them back at once, and an empty {@link #poll} claims them only for a thread that
 * keeps polling ({@link CqPoller#pollProgress}), so event-driven consumers pay no lease. EOF, I/O
 * errors and TERMs met by a poller are handed to the reactor at once, which tears down and flushes as always. Deadlines keep a stream
 * on the reactor (the responder's RTR timer). {@link #poll} (spin mode) takes the streams over
 * too and reads the readable ones without blocking ({@code selectNow}). No step allocates.
 *
 * <p>Progress contract for threads that wait on memory: a thread that polled this CQ and then
 * spins on a buffer for a peer's RDMA Write (ib_write_lat's loop) still holds the streams, and a
 * Write to them waits until the lease runs out, the reactor's next tick (whole milliseconds) and
 * a free core for the reactor thread (with every core busy spinning, the scheduler's wake-up
 * latency: several milliseconds were measured on two cores). Such a loop calls {@link #progress}
 * (a no-op on RNICs and kernel devices): the spinning thread then places the Write itself, at
 * the cost of one non-blocking {@code read()} per call.
 */
public final class SoftCompletionQueue implements CompletionSink, CompletionQueue {
    private static final Logger LOG = LoggerFactory.getLogger(SoftCompletionQueue.class);

    private final WorkCompletion[] ring;
    private final Object lock = new Object();
    private final CqDevice device;
    /** Written under {@link #lock}; volatile so an empty poll need not take it. */
    private volatile long head;
    private volatile long tail;
    private long overruns;
    /** Threads parked on the monitor; written under {@link #lock}, read racily by a leader. */
    private volatile int waiters;
    private volatile boolean closed;

    private static final PolledStream[] NO_STREAMS = new PolledStream[0];
    /** Streams of the QPs using this CQ (copy-on-write: attach and close are cold). */
    private volatile PolledStream[] streams = NO_STREAMS;
    private final Object streamsLock = new Object();
    /** Receive polling by waiting threads (leader, selector, leases). */
    private final CqPoller poller;
    /** How {@link #await} waits on an empty CQ: spin this long, then yield {@link #yields} times, then block. */
    private final AwaitStrategy strategy;
    private final long spinNanos;
    private final int yields;
    private final boolean pollOn;
    private final int maxPollStreams;

    /** Arming: {@link #ARM_NONE}, {@link #ARM_ANY} or {@link #ARM_SOLICITED}; written under {@link #lock}. */
    private int armed;
    static final int ARM_NONE = 0;
    static final int ARM_ANY = 1;
    static final int ARM_SOLICITED = 2;
    private final SoftCompletionChannel channel;
    /** Set at the first overrun: the event was raised and the QPs were sent to ERR. */
    private boolean overrun;

    /**
     * @param pollOn      receive polling: a waiting thread reads the CQ's sockets itself
     * @param await       how a waiting thread waits: spin, yield, then block
     * @param maxStreams  most streams a waiting thread polls itself
     */
    public SoftCompletionQueue(CqDevice device, int entries, SoftCompletionChannel channel, boolean pollOn,
                               AwaitStrategy await, int maxStreams) {
        this.channel = channel;
        if (entries < 1) {
            throw new IllegalArgumentException("entries: " + entries + " must be >= 1");
        }
        this.device = device;
        strategy = await;
        spinNanos = await.spinNanos();
        yields = await.yields();
        maxPollStreams = maxStreams;
        this.pollOn = pollOn;
        poller = new CqPoller(this, device, spinNanos);
        if (channel != null) {
            channel.attach(this);
        }
        ring = new WorkCompletion[entries];
        for (int i = 0; i < entries; i++) {
            ring[i] = new WorkCompletion();
        }
    }

    /** How {@link #await} waits on this CQ. */
    public AwaitStrategy awaitStrategy() {
        return strategy;
    }

    @Override
    public int capacity() {
        return ring.length;
    }

    /** Completions dropped because the CQ was full. */
    public long overruns() {
        synchronized (lock) {
            return overruns;
        }
    }

    /** Entries waiting to be polled. */
    public int size() {
        synchronized (lock) {
            return (int) (tail - head);
        }
    }

    /**
     * Producer side (reactor thread, or a closing thread when flushing). {@code qpContext} is the
     * QP's user context, stored by reference in the slot (no allocation).
     */
    @Override
    public void complete(long wrId, WcStatus status, WcOpcode opcode, int byteLength, int qpNum, Object qpContext,
                  int vendorError, int invalidatedRkey, boolean withInvalidate, boolean solicited) {
        synchronized (lock) {
            if (closed) {
                return;
            }
            if (tail - head == ring.length) {
                overruns++;
                if (overrun) {
                    LOG.debug("CQ overrun ({} entries): dropped completion wr {} {} {} of QP {}", ring.length, wrId,
                            opcode, status, qpNum);
                } else {
                    LOG.error("CQ overrun ({} entries): dropped completion wr {} {} {} of QP {}; its QPs go to ERR",
                            ring.length, wrId, opcode, status, qpNum);
                    overrun = true;
                    onOverrun(qpNum);
                }
                return;
            }
            WorkCompletion wc = ring[(int) (tail % ring.length)];
            wc.wrId = wrId;
            wc.status = status;
            wc.opcode = opcode;
            wc.byteLength = byteLength;
            wc.qpNum = qpNum;
            wc.vendorError = vendorError;
            wc.invalidatedRkey = invalidatedRkey;
            wc.withInvalidate = withInvalidate;
            wc.solicited = solicited;
            wc.qpContext = qpContext;
            tail++;
            int a = armed;
            if (a != ARM_NONE && (a == ARM_ANY || status != WcStatus.SUCCESS || (solicited && opcode == WcOpcode.RECV))) {
                armed = ARM_NONE; // one-shot, as ibv_req_notify_cq
                channel.signal(this);
            }
            if (waiters > 0) {
                lock.notify();
            }
            poller.wakeIfBlocked(); // a leader blocked on the sockets: this completion came from elsewhere
        }
    }

    /**
     * First overrun (CQ lock held, and the producing QP's): raises CQ_ERROR and sends every stream
     * of this CQ to ERR on its own reactor, outside these locks (another QP's lock is never taken
     * here: its thread may be waiting for this CQ's lock).
     */
    private void onOverrun(int qpNum) {
        if (device == null) {
            return;
        }
        device.events().raise(new AsyncEvent(AsyncEvent.Type.CQ_ERROR, qpNum, null, this, null,
                "CQ overrun: " + ring.length + " entries full; its QPs go to ERR and flush"));
        for (PolledStream s : streams) {
            try {
                s.reactor().execute(() -> s.failFatal(new RdmaException(OVERRUN_CAUSE + " (" + ring.length + " entries)")));
            } catch (IllegalStateException e) {
                LOG.debug("reactor gone while failing a stream after a CQ overrun");
            }
        }
    }

    /** Failure message of the streams a CQ overrun sent to ERR (QP_FATAL). */
    static final String OVERRUN_CAUSE = "completion queue overrun";

    @Override
    public void requestNotify(boolean solicitedOnly) throws RdmaException {
        if (channel == null) {
            throw new IllegalStateException("requestNotify: this CQ was created without a completion channel");
        }
        synchronized (lock) {
            if (closed) {
                throw new RdmaException("requestNotify: completion queue is closed");
            }
            armed = solicitedOnly ? ARM_SOLICITED : ARM_ANY;
        }
    }

    @Override
    public CompletionChannel channel() {
        return channel;
    }

    /** A stream attached to {@code qp} (RFC 5040 §6.1): the QP's CQs poll its socket from now on. */
    public static void addStream(SoftQueuePair qp, PolledStream s) {
        SoftCompletionQueue send = (SoftCompletionQueue) qp.sendCq();
        SoftCompletionQueue recv = (SoftCompletionQueue) qp.recvCq();
        send.addStream(s);
        if (recv != send) {
            recv.addStream(s);
        }
    }

    /** The stream closed: the CQs of its QP no longer poll it. */
    public static void removeStream(SoftQueuePair qp, PolledStream s) {
        SoftCompletionQueue send = (SoftCompletionQueue) qp.sendCq();
        SoftCompletionQueue recv = (SoftCompletionQueue) qp.recvCq();
        send.removeStream(s);
        if (recv != send) {
            recv.removeStream(s);
        }
    }

    /** A QP using this CQ got its stream (established). */
    void addStream(PolledStream s) {
        synchronized (streamsLock) {
            PolledStream[] a = streams;
            for (PolledStream x : a) {
                if (x == s) {
                    return;
                }
            }
            streams = SnapshotArrays.with(a, s);
        }
    }

    /** The stream closed. */
    void removeStream(PolledStream s) {
        synchronized (streamsLock) {
            streams = SnapshotArrays.without(streams, s, NO_STREAMS);
        }
    }

    /** Streams attached (tests, diagnostics). */
    int streamCount() {
        return streams.length;
    }

    /** True when receive polling applies to this CQ now. */
    private boolean pollable(PolledStream[] ss) {
        return pollOn && ss.length > 0 && ss.length <= maxPollStreams;
    }

    PolledStream[] streams() {
        return streams;
    }

    boolean hasCompletion() {
        return tail != head;
    }

    boolean isClosed() {
        return closed;
    }

    boolean hasWaiters() {
        return waiters > 0;
    }

    /** Ring, waiters and poller state (stall reports in tests; racy reads). */
    String debugState() {
        return "CQ[" + (tail - head) + " queued, " + overruns + " overruns, " + waiters + " parked, streams "
                + streams.length + ", " + poller.debugState() + "]";
    }

    /** Test hook: runs on an awaiting thread right after it led (null in production). */
    private Runnable afterLead;

    /** Tests: sets the hook run on an awaiting thread right after it led. */
    void afterLead(Runnable hook) {
        afterLead = hook;
    }

    /** True while a leader blocks in the CQ's selector (tests). */
    boolean pollerBlocked() {
        return poller.blocked;
    }

    /** True while a thread leads (tests). */
    boolean pollerLed() {
        return poller.leader.isLocked();
    }

    @Override
    public int poll(WorkCompletion[] out, int max) {
        if (tail == head) {
            PolledStream[] ss = streams;
            if (!pollable(ss)) {
                return 0; // empty: no lock (a racing completion is seen by the next poll)
            }
            poller.pollProgress(ss);
            if (tail == head) {
                return 0;
            }
        }
        poller.tookCompletion();
        synchronized (lock) {
            return drain(out, max);
        }
    }

    /** A thread is about to block on this CQ's channel: streams a poller holds idle go back to their reactors. */
    void handBack() {
        poller.handBack();
    }

    /**
     * Manual progress (see {@link CompletionQueue#progress}): the non-blocking pass an empty
     * {@link #poll} makes (the CQ's streams claimed, the readable ones read on this thread),
     * without taking completions; a Write that arrived is placed before this returns.
     */
    @Override
    public void progress() {
        PolledStream[] ss = streams;
        if (!closed && pollable(ss)) {
            poller.progress(ss);
        }
    }

    private int drain(WorkCompletion[] out, int max) {
        int n = (int) Math.min(Math.min(max, out.length), tail - head);
        for (int i = 0; i < n; i++) {
            WorkCompletion slot = ring[(int) (head % ring.length)];
            out[i].copyFrom(slot);
            slot.qpContext = null; // the ring keeps no application object alive
            head++;
        }
        return n;
    }

    @Override
    public int await(WorkCompletion[] out, int max, long timeout, TimeUnit unit) throws InterruptedException {
        long start = System.nanoTime();
        long deadline = start + unit.toNanos(timeout);
        long spinEnd = start + spinNanos;
        int yieldsLeft = yields;
        while (true) {
            if (tail == head && !closed && pollable(streams) && poller.leader.tryLock()) {
                try {
                    poller.lead(start, deadline, spinNanos, yields);
                } finally {
                    poller.leader.unlock();
                }
                Runnable hook = afterLead;
                if (hook != null) {
                    hook.run();
                }
            } else if (tail == head && !closed) {
                // Not leading (another thread reads the sockets, or polling is off): the same
                // bounded phases on the ring before parking, each pass trying to lead again.
                long now = System.nanoTime();
                if (now - deadline < 0 && (now - spinEnd < 0 || yieldsLeft > 0)) {
                    if (Thread.interrupted()) {
                        throw new InterruptedException();
                    }
                    if (now - spinEnd < 0) {
                        Thread.onSpinWait();
                    } else {
                        yieldsLeft--;
                        Thread.yield();
                    }
                    continue;
                }
            }
            synchronized (lock) {
                if (tail != head || closed) {
                    return drain(out, max);
                }
                long nanos = deadline - System.nanoTime();
                if (nanos <= 0) {
                    return 0;
                }
                // Never park while the poller holds streams and nobody leads (a lead that kept them
                // for a completion another thread then drained): their OP_READ is off at the
                // reactor, so lead again. A thread leading now releases them when it leaves with a
                // waiter here (this check and the park are one monitor section: a completion it
                // kept them for would be seen above).
                if (poller.held.get() > 0 && !poller.leader.isLocked() && pollable(streams)) {
                    start = System.nanoTime();
                    continue;
                }
                waiters++;
                try {
                    // monitor wait: parking allocates nothing on the Java heap
                    TimeUnit.NANOSECONDS.timedWait(lock, nanos);
                } finally {
                    waiters--;
                }
                if (tail != head || closed) {
                    return drain(out, max);
                }
            }
        }
    }

    @Override
    public void close() {
        synchronized (lock) {
            closed = true;
            lock.notifyAll();
        }
        if (channel != null) {
            channel.detach(this);
        }
        poller.close();
        if (device != null) {
            device.forget(this);
        }
    }
}
