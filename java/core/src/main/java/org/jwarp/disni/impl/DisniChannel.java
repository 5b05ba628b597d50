package org.jwarp.disni.impl;

import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.RdmaVerbs;
import java.io.IOException;
import org.jwarp.disni.natives.JwarpNative;
import org.jwarp.provider.ConsumerChannel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A consumer's completion channel: one {@code ibv_comp_channel} (O_NONBLOCK) shared by many CQs.
 * {@link #next} ({@link ConsumerChannel}) polls its fd in slices of at most 100 ms and takes one
 * event with {@code ibv_get_cq_event} in one native call; the {@link DisniCq} it maps back to
 * counts the event and acknowledges {@link DisniCq#CHANNEL_ACK_BATCH} at a time
 * ({@code ibv_ack_cq_events} takes the CQ's lock and signals a condition variable), the rest when
 * it closes.
 *
 * <p>Thread-safe: several threads may wait; the fd is non-blocking, so an event another thread
 * took makes the loser poll again.
 */
final class DisniChannel extends ConsumerChannel<DisniCq> {
    private static final Logger LOG = LoggerFactory.getLogger(DisniChannel.class);
    private static final DisniCq[] NO_CQS = new DisniCq[0];
    private final DisniDevice device;
    private final RdmaVerbs verbs;
    final IbvCompChannel channel;
    private final long chPtr;
    /** Count of one, for acknowledging an event of a CQ this channel does not know (guarded by itself). */
    private final java.nio.ByteBuffer oneEvent = java.nio.ByteBuffer.allocateDirect(8).order(java.nio.ByteOrder.nativeOrder());

    DisniChannel(DisniDevice device, RdmaVerbs verbs, IbvCompChannel channel) {
        super(NO_CQS);
        this.device = device;
        this.verbs = verbs;
        this.channel = channel;
        this.chPtr = CmDispatcher.ptr(channel);
    }

    @Override
    protected long takeEvent(int ms) {
        long r = JwarpNative.compChannelNext(chPtr, ms);
        if (r < 0) {
            throw new IllegalStateException("ibv_get_cq_event failed with errno " + (-r));
        }
        return r;
    }

    @Override
    protected long address(DisniCq cq) {
        return cq.ptr();
    }

    @Override
    protected void eventTaken(DisniCq cq) {
        cq.channelEventTaken();
    }

    @Override
    protected void ackUnknown(long cq) {
        synchronized (oneEvent) {
            oneEvent.putInt(0, 1);
            int rc = JwarpNative.cqAckEvents(cq, com.ibm.disni.util.MemoryUtils.getAddress(oneEvent));
            if (rc < 0) {
                LOG.warn("acknowledging an unknown CQ's completion event failed ({})", rc);
            }
        }
    }

    @Override
    public void close() {
        if (!beginClose()) {
            return;
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
