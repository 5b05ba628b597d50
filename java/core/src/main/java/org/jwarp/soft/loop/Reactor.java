package org.jwarp.soft.loop;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The NIO event loop of the embedded provider: one thread drives every listener and every queue
 * pair's LLP stream (RFC 5040 §5: one TCP connection per RDMAP stream), so the thread count does
 * not grow with the number of QPs (the duty-cycle agent style: each {@link Handler} does its work
 * when its channel is ready or when it was {@linkplain #schedule scheduled}).
 *
 * <p>Application threads never touch sockets. They put work into a handler's own queue and call
 * {@link #schedule(Scheduled)}; the handler is queued at most once (a flag, no allocation) and the
 * selector is woken only when the loop is about to sleep or sleeping.
 *
 * <p>Exception: receive polling (see {@code SoftCompletionQueue}). A thread waiting on a CQ may
 * read a stream's socket itself; while it does, the stream is <em>polled</em>: its key has no
 * OP_READ interest, so data arriving for it does not wake this loop. The loop keeps the CQ pollers
 * holding its streams in a list and, while it is not empty, wakes at least every lease period to
 * take back (OP_READ on again) the streams of any poller that went away for longer than the
 * lease: one check per CQ, not per stream.
 */
public final class Reactor implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Reactor.class);
    /** Longest sleep in select, so deadlines are checked even when nothing happens. */
    public static final long MAX_SELECT_MILLIS = 100;
    /** Bytes read from a socket at a time. */
    public static final int RX_BUFFER = 256 * 1024;

    /** Something registered with the selector. */
    public interface Handler {
        /** Called on the reactor thread when {@code key} is ready. */
        void onReady(SelectionKey key);

        /** Called on the reactor thread when the reactor shuts down. */
        void onReactorClose();
    }

    /** A unit the reactor runs on request, at most once per request batch. */
    public abstract static class Scheduled {
        /** Guarded by the reactor's ready lock. */
        boolean queued;

        /** Runs on the reactor thread. */
        protected abstract void runScheduled();
    }

    /** A deadline owner; {@link #onDeadline} runs on the reactor thread once the deadline passes. */
    public interface Timed {
        long deadlineNanos();

        void onDeadline(long nowNanos);
    }

    private final Selector selector;
    private final Thread thread;
    private final Object lock = new Object();
    private final ArrayDeque<Runnable> tasks = new ArrayDeque<>();
    private final ArrayDeque<Scheduled> ready = new ArrayDeque<>();
    private final ArrayDeque<Scheduled> readyBatch = new ArrayDeque<>();
    private final ArrayDeque<Runnable> taskBatch = new ArrayDeque<>();
    private final List<Timed> timed = new ArrayList<>();
    private volatile boolean sleeping;
    private volatile boolean running = true;
    private final CompletableFuture<Void> terminated = new CompletableFuture<>();
    /** One receive buffer per loop: decoders copy what they keep, so streams need no rx buffer of their own. */
    private final java.nio.ByteBuffer rx = java.nio.ByteBuffer.allocateDirect(RX_BUFFER);

    /** Ready-key callback, allocated once: selecting allocates no iterator per loop turn. */
    private final java.util.function.Consumer<SelectionKey> dispatch = this::dispatch;

    private void dispatch(SelectionKey k) {
        Handler h = (Handler) k.attachment();
        try {
            h.onReady(k);
        } catch (RuntimeException e) {
            LOG.error("handler {} failed", h, e);
        }
    }

    /** A CQ poller that may hold streams of this loop (their keys without OP_READ). */
    public interface Polled {
        /**
         * Reactor thread: if the poller has been away for {@code leaseNanos}, hands its streams on
         * {@code r} back; true when it holds none of them now.
         */
        boolean revokeIfStale(Reactor r, long now, long leaseNanos);
    }

    /** CQ pollers holding streams of this loop (OP_READ off); guarded by {@link #lock}. */
    private final ArrayList<Polled> pollers = new ArrayList<>();
    /** Reactor-thread copy of {@link #pollers} for the lease check (no allocation per turn). */
    private final ArrayList<Polled> pollerBatch = new ArrayList<>();
    /** Streams of this loop a poller holds; written under {@link #lock}. */
    private volatile int polledCount;
    private final long pollLeaseNanos;
    private final long maxSelectMillis;
    /** Busy-poll window after work (0: off); see the constructor. */
    private final long busyPollNanos;

    public Reactor(String name, long pollLeaseNanos) throws IOException {
        this(name, pollLeaseNanos, MAX_SELECT_MILLIS);
    }

    /** {@code maxSelectMillis}: longest sleep in select (tests lengthen it). */
    public Reactor(String name, long pollLeaseNanos, long maxSelectMillis) throws IOException {
        this(name, pollLeaseNanos, maxSelectMillis, 0);
    }

    /**
     * {@code busyPollNanos}: after each turn that found work (a ready key, a task, scheduled
     * work), keep polling the selector without blocking this long before sleeping in it (0: off).
     */
    public Reactor(String name, long pollLeaseNanos, long maxSelectMillis, long busyPollNanos) throws IOException {
        this.pollLeaseNanos = pollLeaseNanos;
        this.maxSelectMillis = maxSelectMillis;
        this.busyPollNanos = busyPollNanos;
        selector = Selector.open();
        thread = new Thread(this::loop, name);
        thread.setDaemon(true);
        thread.start();
    }

    /** The loop's shared receive buffer; reactor thread only. */
    public java.nio.ByteBuffer rxBuffer() {
        return rx;
    }

    /** The loop thread (diagnostics and tests). */
    public Thread thread() {
        return thread;
    }

    public boolean inReactorThread() {
        return Thread.currentThread() == thread;
    }

    public boolean isRunning() {
        return running;
    }

    /** Registers {@code ch} (already non-blocking) for {@code ops}; reactor thread only. */
    public SelectionKey register(SelectableChannel ch, int ops, Handler h) throws IOException {
        assert inReactorThread();
        return ch.register(selector, ops, h);
    }

    /** Adds a deadline owner; reactor thread only. It stays until {@link #cancelDeadline}. */
    public void addDeadline(Timed t) {
        assert inReactorThread();
        timed.add(t);
    }

    public void cancelDeadline(Timed t) {
        assert inReactorThread();
        timed.remove(t);
    }

    /** Runs {@code task} on the reactor thread soon (cold path: setup, close). */
    public void execute(Runnable task) {
        synchronized (lock) {
            if (!running) {
                throw new IllegalStateException("reactor closed");
            }
            tasks.add(task);
        }
        wake();
    }

    /** Runs {@code task} on the reactor thread and waits for its result. */
    public <T> T call(Supplier<T> task, long timeoutMillis) throws IOException {
        if (inReactorThread()) {
            return task.get();
        }
        CompletableFuture<T> f = new CompletableFuture<>();
        execute(() -> {
            try {
                f.complete(task.get());
            } catch (Throwable t) {
                f.completeExceptionally(t);
            }
        });
        try {
            return f.get(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted waiting for the reactor", e);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof UncheckedIOException u) {
                throw u.getCause();
            }
            if (c instanceof RuntimeException r) {
                throw r;
            }
            throw new IOException(c);
        } catch (TimeoutException e) {
            throw new IOException("reactor did not answer within " + timeoutMillis + " ms");
        }
    }

    /** Hot path: asks the reactor to run {@code s}; allocation-free, at most one queue entry per handler. */
    public void schedule(Scheduled s) {
        synchronized (lock) {
            if (s.queued) {
                return;
            }
            s.queued = true;
            ready.add(s);
        }
        if (!inReactorThread()) {
            wake();
        }
    }

    /**
     * Wakes the selector if the loop sleeps or is about to: an interest change made before this
     * call is then applied by the next select (the selector applies interest changes only when it
     * enters select, so re-enabling OP_READ from another thread needs this).
     */
    public void wake() {
        if (sleeping) {
            selector.wakeup();
        }
    }

    /** Poller {@code p} took a stream of this loop over (its key lost OP_READ); the lease check now covers it. */
    public void addPolled(Polled p) {
        boolean first;
        synchronized (lock) {
            first = polledCount++ == 0;
            if (!pollers.contains(p)) {
                pollers.add(p);
            }
        }
        if (first) {
            // The loop may sleep for MAX_SELECT_MILLIS, chosen while no stream was polled: wake it
            // so it checks leases from now on (else data of a stream whose poller went away waits
            // for that whole sleep). It writes sleeping before it reads polledCount: one of the two
            // sides sees the other.
            wake();
        }
    }

    /** A stream of this loop is read by the reactor again. */
    public void removePolled(Polled p) {
        synchronized (lock) {
            if (--polledCount == 0) {
                pollers.clear();
            }
        }
    }

    /** Number of streams a poller currently reads (tests, diagnostics). */
    public int polledCount() {
        return polledCount;
    }

    /**
     * Hands back to the reactor the streams of every poller that has been away for the lease: one
     * check per poller (CQ), not per stream; a stream is touched only when it is handed back.
     */
    private void checkPollLeases() {
        if (polledCount == 0) {
            return;
        }
        synchronized (lock) {
            for (int i = 0; i < pollers.size(); i++) {
                pollerBatch.add(pollers.get(i));
            }
        }
        long now = System.nanoTime();
        for (int i = 0; i < pollerBatch.size(); i++) {
            try {
                pollerBatch.get(i).revokeIfStale(this, now, pollLeaseNanos);
            } catch (RuntimeException e) {
                LOG.error("poll lease check failed", e);
            }
        }
        pollerBatch.clear();
    }

    private void loop() {
        long busyUntil = System.nanoTime();
        try {
            while (running) {
                boolean worked = runQueued();
                if (busyPollNanos > 0) {
                    long now = System.nanoTime();
                    if (worked) {
                        busyUntil = now + busyPollNanos;
                    }
                    if (now - busyUntil < 0) {
                        // Busy-poll window (SO_BUSY_POLL's idea): no epoll_wait sleep, so the next
                        // event of a ping-pong is met without a thread wake-up. Bounded: after the
                        // window without work the loop sleeps in select as below.
                        if (selector.selectNow(dispatch) > 0) {
                            busyUntil = System.nanoTime() + busyPollNanos;
                        } else {
                            Thread.onSpinWait();
                        }
                        checkDeadlines();
                        checkPollLeases();
                        continue;
                    }
                }
                sleeping = true; // before polledCount is read: see addPolled
                long timeout = maxSelectMillis;
                long now = System.nanoTime();
                for (int i = 0; i < timed.size(); i++) {
                    long d = TimeUnit.NANOSECONDS.toMillis(timed.get(i).deadlineNanos() - now) + 1;
                    timeout = Math.max(1, Math.min(timeout, d));
                }
                if (polledCount > 0) {
                    timeout = Math.max(1, Math.min(timeout, TimeUnit.NANOSECONDS.toMillis(pollLeaseNanos)));
                }
                int ready;
                if (hasQueued()) {
                    ready = selector.selectNow(dispatch);
                } else {
                    ready = selector.select(dispatch, timeout);
                }
                sleeping = false;
                if (ready > 0) {
                    busyUntil = System.nanoTime() + busyPollNanos;
                }
                checkDeadlines();
                checkPollLeases();
            }
        } catch (ClosedSelectorException e) {
            // closing
        } catch (Throwable t) {
            LOG.error("reactor {} died", thread.getName(), t);
        } finally {
            shutdownOnThread();
        }
    }

    private boolean hasQueued() {
        synchronized (lock) {
            return !tasks.isEmpty() || !ready.isEmpty();
        }
    }

    /** Runs the queued tasks and scheduled work; true when there was any. */
    private boolean runQueued() {
        boolean any;
        synchronized (lock) {
            any = !tasks.isEmpty() || !ready.isEmpty();
            Runnable t;
            while ((t = tasks.poll()) != null) {
                taskBatch.add(t); // element by element: ArrayDeque.addAll allocates a method reference
            }
            Scheduled s;
            while ((s = ready.poll()) != null) {
                s.queued = false;
                readyBatch.add(s);
            }
        }
        Runnable r;
        while ((r = taskBatch.poll()) != null) {
            try {
                r.run();
            } catch (RuntimeException e) {
                LOG.error("reactor task failed", e);
            }
        }
        Scheduled s;
        while ((s = readyBatch.poll()) != null) {
            try {
                s.runScheduled();
            } catch (RuntimeException e) {
                LOG.error("scheduled work failed", e);
            }
        }
        return any;
    }

    private void checkDeadlines() {
        if (timed.isEmpty()) {
            return;
        }
        long now = System.nanoTime();
        for (int i = timed.size() - 1; i >= 0; i--) {
            if (i < timed.size()) {
                Timed t = timed.get(i);
                if (now - t.deadlineNanos() >= 0) {
                    timed.remove(i);
                    try {
                        t.onDeadline(now);
                    } catch (RuntimeException e) {
                        LOG.error("deadline handler failed", e);
                    }
                }
            }
        }
    }

    private void shutdownOnThread() {
        running = false;
        runQueuedQuietly();
        for (SelectionKey k : selector.keys()) {
            if (k.attachment() instanceof Handler h) {
                try {
                    h.onReactorClose();
                } catch (RuntimeException e) {
                    LOG.warn("handler close failed", e);
                }
            }
        }
        try {
            selector.close();
        } catch (IOException e) {
            LOG.warn("selector close failed", e);
        }
        terminated.complete(null);
    }

    private void runQueuedQuietly() {
        try {
            runQueued();
        } catch (RuntimeException e) {
            LOG.warn("pending work at shutdown failed", e);
        }
    }

    /** Stops the loop; every handler gets {@link Handler#onReactorClose()}. Waits at most 5 s. */
    @Override
    public void close() {
        if (!running) {
            return;
        }
        running = false;
        selector.wakeup();
        if (!inReactorThread()) {
            try {
                terminated.get(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException | TimeoutException e) {
                LOG.warn("reactor {} did not stop in time", thread.getName());
            }
        }
    }
}
