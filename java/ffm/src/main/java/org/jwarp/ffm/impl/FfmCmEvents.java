package org.jwarp.ffm.impl;

import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The reader of a device's connections' rdma_cm events: one thread per device (started with its
 * first connection) reads every established connection's channel in turn, so that a peer's
 * DISCONNECTED is answered at once ({@link FfmConnection#readEvents}) and not only when the
 * application next asks {@code isOpen} or closes. On the IB CM (RoCE) only the local
 * rdma_disconnect moves the QP to the error state, so the responder's posted WRs flush then.
 */
final class FfmCmEvents implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(FfmCmEvents.class);
    /** The nap between two rounds over the connections' channels. */
    private static final long ROUND_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final String name;
    private final CopyOnWriteArrayList<FfmConnection> watched = new CopyOnWriteArrayList<>();
    private Thread thread;
    private volatile boolean running = true;

    FfmCmEvents(String name) {
        this.name = name;
    }

    /** Reads {@code c}'s events from now on (starting the device's reader on the first connection). */
    synchronized void watch(FfmConnection c) {
        if (!running) {
            return;
        }
        watched.add(c);
        if (thread == null) {
            thread = Thread.ofPlatform().daemon().name("jwarp-ffm-cm-" + name).start(this::run);
        }
    }

    /** No more reads of {@code c}'s channel (it is being closed). */
    void unwatch(FfmConnection c) {
        watched.remove(c);
    }

    private void run() {
        while (running) {
            for (FfmConnection c : watched) {
                try {
                    c.readEvents();
                } catch (RuntimeException e) {
                    LOG.warn("{}: reading a connection's rdma_cm events failed: {}", name, e.toString());
                    watched.remove(c);
                }
            }
            LockSupport.parkNanos(ROUND_NANOS);
        }
    }

    /** Stops the reader and waits for its thread. */
    @Override
    public void close() {
        Thread t;
        synchronized (this) {
            running = false;
            t = thread;
        }
        watched.clear();
        if (t != null && t != Thread.currentThread()) {
            LockSupport.unpark(t);
            try {
                t.join(TimeUnit.SECONDS.toMillis(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
