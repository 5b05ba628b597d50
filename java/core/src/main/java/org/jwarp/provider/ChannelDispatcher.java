package org.jwarp.provider;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.jwarp.verbs.CompletionChannel;
import org.jwarp.verbs.CompletionQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The callback form of a {@link CompletionChannel} ({@link CompletionChannel#listen}): one daemon
 * thread takes the channel's events and runs the handler for each on the executor, waiting for it
 * to return before it takes the next event, so a handler never overlaps itself. The task handed to
 * the executor is preallocated: no allocation per event.
 *
 * <p>A channel keeps its dispatchers in a {@link Listeners} set and closes them when it closes
 * (and so when its device closes): the thread never outlives its channel, even when the listen
 * handle is never closed. Should a channel's {@code next} fail, the thread stops too.
 *
 * <p>Thread-safe; {@link #close()} stops the thread within about 100 ms.
 */
public final class ChannelDispatcher implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ChannelDispatcher.class);
    private final CompletionChannel channel;
    private final CompletionChannel.CompletionHandler handler;
    private final Executor executor;
    private final Semaphore done = new Semaphore(0);
    private final Runnable task;
    private volatile CompletionQueue current;
    private volatile boolean closed;
    private final Thread thread;
    private final Listeners owner;

    /**
     * The dispatchers of one channel: {@link #listen} starts one unless the channel is closed,
     * {@link #closeAll} (from the channel's close) stops every one still running.
     */
    public static final class Listeners {
        private final java.util.concurrent.CopyOnWriteArrayList<ChannelDispatcher> running =
                new java.util.concurrent.CopyOnWriteArrayList<>();
        private boolean closed;

        /** Starts a dispatcher for {@code channel}; refused once the channel closed. */
        public synchronized ChannelDispatcher listen(CompletionChannel channel, CompletionChannel.CompletionHandler handler,
                Executor executor) {
            if (closed) {
                throw new IllegalStateException("listen: the completion channel is closed");
            }
            ChannelDispatcher d = new ChannelDispatcher(channel, handler, executor, this);
            running.add(d);
            return d;
        }

        /** Stops every dispatcher (all are told first, then each is waited for). */
        public void closeAll() {
            synchronized (this) {
                closed = true;
            }
            for (ChannelDispatcher d : running) {
                d.closed = true;
            }
            for (ChannelDispatcher d : running) {
                d.close();
            }
        }
    }

    public ChannelDispatcher(CompletionChannel channel, CompletionChannel.CompletionHandler handler, Executor executor) {
        this(channel, handler, executor, null);
    }

    private ChannelDispatcher(CompletionChannel channel, CompletionChannel.CompletionHandler handler, Executor executor,
            Listeners owner) {
        this.owner = owner;
        this.channel = java.util.Objects.requireNonNull(channel, "channel");
        this.handler = java.util.Objects.requireNonNull(handler, "handler");
        this.executor = java.util.Objects.requireNonNull(executor, "executor");
        this.task = () -> {
            try {
                handler.onCompletionEvent(current);
            } catch (RuntimeException e) {
                LOG.warn("completion handler failed: {}", e.toString());
            } finally {
                done.release();
            }
        };
        thread = new Thread(this::run, "jwarp-comp-channel");
        thread.setDaemon(true);
        thread.start();
    }

    private void run() {
        try {
            while (!closed) {
                CompletionQueue cq = channel.next(100, TimeUnit.MILLISECONDS);
                if (cq == null || closed) {
                    continue;
                }
                current = cq;
                try {
                    executor.execute(task);
                } catch (RejectedExecutionException e) {
                    LOG.warn("executor refused a completion event of {}", cq);
                    continue;
                }
                while (!done.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                    if (closed) {
                        return;
                    }
                }
            }
        } catch (InterruptedException e) {
            // closing
        } catch (RuntimeException e) {
            if (!closed) {
                LOG.warn("completion channel dispatcher stopped: {}", e.toString());
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        if (owner != null) {
            owner.running.remove(this);
        }
        if (thread != Thread.currentThread()) {
            try {
                thread.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
