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

    public ChannelDispatcher(CompletionChannel channel, CompletionChannel.CompletionHandler handler, Executor executor) {
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
        if (thread != Thread.currentThread()) {
            try {
                thread.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
