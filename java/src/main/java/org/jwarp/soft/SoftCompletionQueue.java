package org.jwarp.soft;

import java.util.concurrent.TimeUnit;

import org.jwarp.verbs.CompletionQueue;
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
 * <p>A full CQ is an overrun (ibv IBV_EVENT_CQ_ERR): the completion is dropped, counted in
 * {@link #overruns()} and logged; size CQs for the sum of the queue depths that use them.
 */
public final class SoftCompletionQueue implements CompletionQueue {
    private static final Logger LOG = LoggerFactory.getLogger(SoftCompletionQueue.class);

    private final WorkCompletion[] ring;
    private final Object lock = new Object();
    private final SoftDevice device;
    /** Written under {@link #lock}; volatile so an empty poll need not take it. */
    private volatile long head;
    private volatile long tail;
    private long overruns;
    private int waiters;
    private boolean closed;

    SoftCompletionQueue(SoftDevice device, int entries) {
        if (entries < 1) {
            throw new IllegalArgumentException("entries: " + entries + " must be >= 1");
        }
        this.device = device;
        ring = new WorkCompletion[entries];
        for (int i = 0; i < entries; i++) {
            ring[i] = new WorkCompletion();
        }
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

    /** Producer side (reactor thread, or a closing thread when flushing). */
    void complete(long wrId, WcStatus status, WcOpcode opcode, int byteLength, int qpNum, int vendorError,
                  int invalidatedRkey, boolean withInvalidate, boolean solicited) {
        synchronized (lock) {
            if (closed) {
                return;
            }
            if (tail - head == ring.length) {
                overruns++;
                LOG.error("CQ overrun ({} entries): dropped completion wr {} {} {} of QP {}", ring.length, wrId,
                        opcode, status, qpNum);
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
            tail++;
            if (waiters > 0) {
                lock.notify();
            }
        }
    }

    @Override
    public int poll(WorkCompletion[] out, int max) {
        if (tail == head) {
            return 0; // empty: no lock (a racing completion is seen by the next poll)
        }
        synchronized (lock) {
            return drain(out, max);
        }
    }

    private int drain(WorkCompletion[] out, int max) {
        int n = (int) Math.min(Math.min(max, out.length), tail - head);
        for (int i = 0; i < n; i++) {
            out[i].copyFrom(ring[(int) (head % ring.length)]);
            head++;
        }
        return n;
    }

    @Override
    public int await(WorkCompletion[] out, int max, long timeout, TimeUnit unit) throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        synchronized (lock) {
            while (tail == head && !closed) {
                long nanos = deadline - System.nanoTime();
                if (nanos <= 0) {
                    return 0;
                }
                waiters++;
                try {
                    // monitor wait: parking allocates nothing on the Java heap
                    TimeUnit.NANOSECONDS.timedWait(lock, nanos);
                } finally {
                    waiters--;
                }
            }
            return drain(out, max);
        }
    }

    @Override
    public void close() {
        synchronized (lock) {
            closed = true;
            lock.notifyAll();
        }
        if (device != null) {
            device.forget(this);
        }
    }
}
