package org.jwarp.disni.impl;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jwarp.disni.natives.JwarpNative;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One thread per verbs context reading {@code ibv_get_async_event} (the context's async fd, in
 * slices of 100 ms) and offering each event to every device opened on that context (rdma_cm hands
 * the same context to every id of a device), which raises it if it owns the QP, CQ or SRQ named.
 * Started when the first device of the context gets an event listener, stopped when the last of
 * them closes. A native error stops it and the provider forgets it (logged at error level), so a
 * device that sets a listener later starts a fresh pump.
 *
 * <p>Thread-safe.
 */
final class AsyncEventPump {
    private static final Logger LOG = LoggerFactory.getLogger(AsyncEventPump.class);
    final long context;
    final CopyOnWriteArrayList<DisniDevice> devices = new CopyOnWriteArrayList<>();
    private final Thread thread;
    private volatile boolean running = true;
    private final java.util.function.Consumer<AsyncEventPump> failed;

    /** {@code failed} is told when the pump stops on a native error (the provider then forgets it). */
    AsyncEventPump(long context, java.util.function.Consumer<AsyncEventPump> failed) {
        this.context = context;
        this.failed = failed;
        thread = new Thread(this::run, "jwarp-disni-async-events");
        thread.setDaemon(true);
        thread.start();
    }

    private void run() {
        ByteBuffer out = ByteBuffer.allocateDirect(JwarpNative.AE_SIZE).order(ByteOrder.nativeOrder());
        while (running) {
            int type = JwarpNative.asyncEvent(context, 100, out);
            if (type == JwarpNative.AE_TIMEOUT) {
                continue;
            }
            if (type < -1) {
                LOG.error("ibv_get_async_event failed with errno {}; async events of context 0x{} stop for {} device(s)",
                        -2 - type, Long.toHexString(context), devices.size());
                running = false;
                failed.accept(this);
                return;
            }
            int qpNum = out.getInt(JwarpNative.AE_QP_NUM);
            long cq = out.getLong(JwarpNative.AE_CQ);
            long srq = out.getLong(JwarpNative.AE_SRQ);
            LOG.debug("async event {} qp {} cq 0x{} srq 0x{}", type, qpNum, Long.toHexString(cq), Long.toHexString(srq));
            for (DisniDevice d : devices) {
                d.onAsyncEvent(type, qpNum, cq, srq);
            }
        }
    }

    void stop() {
        running = false;
        if (thread != Thread.currentThread()) {
            try {
                thread.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
