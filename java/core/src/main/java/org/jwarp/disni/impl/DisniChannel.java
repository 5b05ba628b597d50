package org.jwarp.disni.impl;

import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.RdmaVerbs;
import java.io.IOException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.jwarp.disni.natives.JwarpNative;
import org.jwarp.ground.SnapshotArrays;
import org.jwarp.provider.ChannelDispatcher;
import org.jwarp.verbs.CompletionChannel;
import org.jwarp.verbs.CompletionQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A consumer's completion channel: one {@code ibv_comp_channel} (O_NONBLOCK) shared by many CQs.
 * {@link #next} polls its fd in slices of at most 100 ms, takes one event with
 * {@code ibv_get_cq_event} and maps the {@code ibv_cq} back to its {@link DisniCq} by a scan of
 * the channel's CQs (copy-on-write array: no allocation per event), which counts the event and
 * acknowledges {@link DisniCq#CHANNEL_ACK_BATCH} at a time ({@code ibv_ack_cq_events} takes the
 * CQ's lock and signals a condition variable), the rest when it closes.
 *
 * <p>Thread-safe: several threads may wait; the fd is non-blocking, so an event another thread
 * took makes the loser poll again.
 */
final class DisniChannel implements CompletionChannel {
    private static final Logger LOG = LoggerFactory.getLogger(DisniChannel.class);
    private static final int SLICE_MS = 100;
    private final DisniDevice device;
    private final RdmaVerbs verbs;
    final IbvCompChannel channel;
    private final long chPtr;
    private static final DisniCq[] NO_CQS = new DisniCq[0];
    private volatile DisniCq[] cqs = NO_CQS;
    private volatile boolean open = true;
    /** Threads inside {@link #next}: close waits for them before it destroys the channel. */
    private final java.util.concurrent.atomic.AtomicInteger inside = new java.util.concurrent.atomic.AtomicInteger();
    private final java.util.concurrent.atomic.AtomicLong events = new java.util.concurrent.atomic.AtomicLong();

    DisniChannel(DisniDevice device, RdmaVerbs verbs, IbvCompChannel channel) {
        this.device = device;
        this.verbs = verbs;
        this.channel = channel;
        this.chPtr = CmDispatcher.ptr(channel);
    }

    synchronized void add(DisniCq cq) {
        cqs = SnapshotArrays.with(cqs, cq);
    }

    synchronized void forget(DisniCq cq) {
        cqs = SnapshotArrays.without(cqs, cq, NO_CQS);
    }

    @Override
    public CompletionQueue next(long timeout, TimeUnit unit) throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        inside.incrementAndGet();
        try {
            return take(deadline);
        } finally {
            inside.decrementAndGet();
        }
    }

    private CompletionQueue take(long deadline) throws InterruptedException {
        while (open) {
            long left = deadline - System.nanoTime();
            int ms = (int) Math.max(0, Math.min(SLICE_MS, TimeUnit.NANOSECONDS.toMillis(left + 999_999L)));
            long r = JwarpNative.compChannelNext(chPtr, ms);
            if (r < 0) {
                throw new IllegalStateException("ibv_get_cq_event failed with errno " + (-r));
            }
            if (r > 0) {
                events.incrementAndGet();
                for (DisniCq c : cqs) {
                    if (c.ptr() == r) {
                        c.channelEventTaken();
                        return c;
                    }
                }
                ackUnknown(r);
            }
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            if (System.nanoTime() - deadline >= 0) {
                return null;
            }
        }
        return null;
    }

    /** Count of one, for acknowledging an event of a CQ this channel does not know (guarded by itself). */
    private final java.nio.ByteBuffer oneEvent = java.nio.ByteBuffer.allocateDirect(8).order(java.nio.ByteOrder.nativeOrder());

    /** An event of a CQ not (or no longer) in {@link #cqs}: acknowledged at once, never kept. */
    private void ackUnknown(long cq) {
        LOG.debug("completion event of an unknown CQ 0x{}", Long.toHexString(cq));
        synchronized (oneEvent) {
            oneEvent.putInt(0, 1);
            int rc = JwarpNative.cqAckEvents(cq, com.ibm.disni.util.MemoryUtils.getAddress(oneEvent));
            if (rc < 0) {
                LOG.warn("acknowledging an unknown CQ's completion event failed ({})", rc);
            }
        }
    }

    @Override
    public AutoCloseable listen(CompletionHandler handler, Executor executor) {
        return listeners.listen(this, handler, executor);
    }

    private final ChannelDispatcher.Listeners listeners = new ChannelDispatcher.Listeners();

    @Override
    public long events() {
        return events.get();
    }

    @Override
    public void close() {
        if (!open) {
            return;
        }
        open = false;
        listeners.closeAll();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        while (inside.get() > 0 && System.nanoTime() - until < 0) {
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000L); // a waiter leaves within one slice
        }
        try {
            int rc = verbs.destroyCompChannel(channel);
            if (rc != 0) {
                LOG.warn("ibv_destroy_comp_channel returned {} (a CQ still uses it?): the native channel leaked", rc);
            }
        } catch (IOException e) {
            LOG.warn("ibv_destroy_comp_channel: {}", e.toString());
        }
        device.forget(this);
    }
}
