package org.jwarp.provider;

import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import org.jwarp.verbs.AsyncEvent;
import org.jwarp.verbs.AsyncEventListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A device's asynchronous events on their way to the consumer's {@link AsyncEventListener}: a
 * provider raises an event from wherever it happens (a soft reactor thread under a lock, the DiSNI
 * async-event or CM thread) and {@link #raise} only queues it; one daemon thread per device hands
 * the events, in order, to the listener's executor. So a listener never runs on an I/O thread or
 * under a provider lock, even with a direct executor. Events are rare; each allocates its record.
 *
 * <p>Thread-safe.
 */
public final class EventDispatcher implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(EventDispatcher.class);
    private final LinkedBlockingQueue<AsyncEvent> queue = new LinkedBlockingQueue<>();
    private final String name;
    private volatile AsyncEventListener listener;
    private volatile Executor executor;
    private Thread thread;
    private volatile boolean closed;
    private long raised;

    public EventDispatcher(String name) {
        this.name = name;
    }

    /** Sets (or, with null, removes) the listener and the executor it runs on. */
    public synchronized void set(AsyncEventListener l, Executor e) {
        if (l != null && e == null) {
            throw new IllegalArgumentException("executor: null");
        }
        listener = l;
        executor = e;
        if (l != null && thread == null && !closed) {
            thread = new Thread(this::run, "jwarp-events-" + name);
            thread.setDaemon(true);
            thread.start();
        }
    }

    /** Queues an event; never blocks, never runs the listener on the caller's thread. */
    public void raise(AsyncEvent e) {
        synchronized (this) {
            raised++;
        }
        if (closed || listener == null) {
            LOG.debug("{}: event without listener: {}", name, e);
            return;
        }
        queue.add(e);
    }

    /** Events raised so far (with or without a listener). */
    public synchronized long raised() {
        return raised;
    }

    private void run() {
        while (!closed) {
            AsyncEvent e;
            try {
                e = queue.poll(100, java.util.concurrent.TimeUnit.MILLISECONDS);
            } catch (InterruptedException ie) {
                return;
            }
            AsyncEventListener l = listener;
            Executor x = executor;
            if (e == null || l == null) {
                continue;
            }
            try {
                x.execute(() -> {
                    try {
                        l.onEvent(e);
                    } catch (RuntimeException ex) {
                        LOG.warn("{}: event listener failed on {}: {}", name, e, ex.toString());
                    }
                });
            } catch (RejectedExecutionException ex) {
                LOG.warn("{}: executor refused event {}", name, e);
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        Thread t;
        synchronized (this) {
            t = thread;
        }
        if (t != null && t != Thread.currentThread()) {
            try {
                t.join(500);
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
