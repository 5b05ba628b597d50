package org.jwarp.soft.cq;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.jwarp.ground.SnapshotArrays;
import org.jwarp.provider.ChannelDispatcher;
import org.jwarp.verbs.CompletionChannel;
import org.jwarp.verbs.CompletionQueue;

/**
 * The embedded provider's completion channel ({@code ibv_comp_channel} semantics, RFC 5040 §5.5 /
 * §6.9 events): an armed {@link SoftCompletionQueue} that receives a matching completion puts
 * itself here once (under its own lock, so arming and completing never race) and wakes one waiter.
 * The queue of pending events grows only when more CQs are armed than ever before, so steady
 * operation allocates nothing.
 *
 * <p>Thread-safe: any number of threads may wait in {@link #next}; each event goes to one.
 */
public final class SoftCompletionChannel implements CompletionChannel {
    private final CqDevice device;
    private final ArrayDeque<SoftCompletionQueue> pending = new ArrayDeque<>();
    private final Object lock = new Object();
    private boolean closed;
    private long events;
    private static final SoftCompletionQueue[] NO_CQS = new SoftCompletionQueue[0];
    /** CQs created on this channel (copy-on-write: creating and closing a CQ is cold). */
    private volatile SoftCompletionQueue[] cqs = NO_CQS;

    public SoftCompletionChannel(CqDevice device) {
        this.device = device;
    }

    /** An armed CQ's event (called under the CQ's lock; never takes a CQ lock). */
    void signal(SoftCompletionQueue cq) {
        synchronized (lock) {
            if (closed) {
                return;
            }
            pending.add(cq);
            lock.notify();
        }
    }

    void attach(SoftCompletionQueue cq) {
        synchronized (lock) {
            cqs = SnapshotArrays.with(cqs, cq);
        }
    }

    void detach(SoftCompletionQueue cq) {
        synchronized (lock) {
            cqs = SnapshotArrays.without(cqs, cq, NO_CQS);
        }
    }

    /**
     * Waits for an armed CQ's event. Before it blocks, the streams its CQs' pollers hold idle go
     * back to their reactors (taken outside this lock: a completion takes a stream's I/O lock,
     * then the CQ's, then this one), so the reactors read and answer them while this thread sleeps.
     */
    @Override
    public CompletionQueue next(long timeout, TimeUnit unit) throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        boolean empty;
        synchronized (lock) {
            empty = pending.isEmpty() && !closed;
        }
        if (empty) {
            SoftCompletionQueue[] a = cqs;
            for (SoftCompletionQueue cq : a) {
                cq.handBack();
            }
        }
        synchronized (lock) {
            while (pending.isEmpty() && !closed) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return null;
                }
                TimeUnit.NANOSECONDS.timedWait(lock, left);
            }
            SoftCompletionQueue cq = pending.poll();
            if (cq != null) {
                events++;
            }
            return cq;
        }
    }

    @Override
    public AutoCloseable listen(CompletionHandler handler, Executor executor) {
        return listeners.listen(this, handler, executor);
    }

    private final ChannelDispatcher.Listeners listeners = new ChannelDispatcher.Listeners();

    @Override
    public long events() {
        synchronized (lock) {
            return events;
        }
    }

    @Override
    public void close() {
        listeners.closeAll();
        synchronized (lock) {
            closed = true;
            pending.clear();
            lock.notifyAll();
        }
        if (device != null) {
            device.forget(this);
        }
    }
}
