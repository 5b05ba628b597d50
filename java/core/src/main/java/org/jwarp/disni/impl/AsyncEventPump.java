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
 * them closes.
 *
 * <p>Thread-safe.
 */
final class AsyncEventPump {
    private static final Logger LOG = LoggerFactory.getLogger(AsyncEventPump.class);
    final long context;
    final CopyOnWriteArrayList<DisniDevice> devices = new CopyOnWriteArrayList<>();
    private final Thread thread;
    private volatile boolean running = true;

    AsyncEventPump(long context) {
        this.context = context;
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
                LOG.warn("ibv_get_async_event failed with errno {}; async events stop", -2 - type);
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
