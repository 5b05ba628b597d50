package org.jwarp.soft;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
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
final class SoftCompletionChannel implements CompletionChannel {
    private final SoftDevice device;
    private final ArrayDeque<SoftCompletionQueue> pending = new ArrayDeque<>();
    private final Object lock = new Object();
    private boolean closed;
    private long events;

    SoftCompletionChannel(SoftDevice device) {
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

    @Override
    public CompletionQueue next(long timeout, TimeUnit unit) throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(timeout);
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
        return new ChannelDispatcher(this, handler, executor);
    }

    @Override
    public long events() {
        synchronized (lock) {
            return events;
        }
    }

    @Override
    public void close() {
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
