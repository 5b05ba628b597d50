package org.jwarp.ffm.impl;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import org.jwarp.ground.SnapshotArrays;
import org.jwarp.verbs.RdmaException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The reader of a device's connections' rdma_cm events: one thread per device (started with its
 * first connection, ended by the device's close) sleeps in one {@code poll(2)} over every
 * established connection's channel fd and an eventfd that watch, unwatch and close write, so an
 * idle device costs nothing and a peer's DISCONNECTED is answered as it comes
 * ({@link FfmConnection#readEvents}), not only when the application closes. On the IB CM (RoCE)
 * only the local rdma_disconnect moves the QP to the error state, so the responder's posted WRs
 * flush then. Should the reader stop on a failure, every connection it watched, and every one
 * established after, ends as a failed connection ({@link FfmConnection#readerStopped}) instead of
 * looking open without ever learning of a disconnect.
 */
final class FfmCmEvents implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(FfmCmEvents.class);
    private static final FfmConnection[] NONE = new FfmConnection[0];
    /** poll(2) without a timeout. */
    private static final int FOREVER = -1;

    private final String name;
    /** Wakes the reader: the watched set changed, or the device closes. Owned by the reader once it runs. */
    private final int wakeFd;
    private volatile FfmConnection[] watched = NONE;
    private Thread thread;
    private volatile boolean running = true;
    /** Why the reader stopped on a failure, or null (guarded by this). */
    private String failure;
    /** Written by the reader only. */
    private volatile long wakeUps;

    FfmCmEvents(String name) throws RdmaException {
        this.name = name;
        this.wakeFd = FfmChannel.eventFd(name);
    }

    /** Reads {@code c}'s events from now on (starting the device's reader on the first connection). */
    void watch(FfmConnection c) {
        String failed;
        synchronized (this) {
            failed = failure;
            if (running) {
                watched = SnapshotArrays.with(watched, c);
                if (thread == null) {
                    thread = Thread.ofPlatform().daemon().name("jwarp-ffm-cm-" + name).start(this::run);
                } else {
                    FfmChannel.signal(wakeFd);
                }
                return;
            }
        }
        if (failed != null) {
            c.readerStopped(failed);
        }
    }

    /** No more reads of {@code c}'s channel (it is being closed, or it failed). */
    synchronized void unwatch(FfmConnection c) {
        FfmConnection[] now = SnapshotArrays.without(watched, c, NONE);
        if (now != watched) {
            watched = now;
            wake();
        }
    }

    /** Ends the reader's poll(2): it polls again over the channels watched now. */
    synchronized void wake() {
        if (running && thread != null) {
            FfmChannel.signal(wakeFd);
        }
    }

    /** The reader's poll(2) returns so far (tests: an idle device has none). */
    long wakeUps() {
        return wakeUps;
    }

    /** Connections watched now (tests). */
    int watching() {
        return watched.length;
    }

    private void run() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Ibv.CALL_STATE);
            MemorySegment eight = arena.allocate(JAVA_LONG);
            MemorySegment fds = MemorySegment.NULL;
            FfmConnection[] polled = null;
            while (running) {
                FfmConnection[] now = watched;
                if (now != polled) {
                    polled = now;
                    if (fds.byteSize() < (now.length + 1) * FfmChannel.POLLFD_SIZE) {
                        fds = arena.allocate(2 * (now.length + 1) * FfmChannel.POLLFD_SIZE, 4);
                    }
                    pollOn(fds, 0, wakeFd);
                    for (int i = 0; i < now.length; i++) {
                        pollOn(fds, i + 1, now[i].channelFd());
                    }
                }
                boolean ready = FfmChannel.waitReadable(state, fds, now.length + 1L, FOREVER, name);
                wakeUps++;
                if (!ready) {
                    continue; // EINTR
                }
                if (readable(fds, 0)) {
                    FfmChannel.drain(wakeFd, eight);
                }
                for (int i = 0; i < now.length; i++) {
                    if (readable(fds, i + 1)) {
                        read(now[i]);
                    }
                }
            }
        } catch (Throwable t) {
            String why = t.toString();
            FfmConnection[] left;
            synchronized (this) {
                failure = why;
                running = false;
                left = watched;
                watched = NONE;
            }
            LOG.error("{}: the rdma_cm event reader stopped: {}; its {} connection(s) end as failed", name, t, left.length);
            for (FfmConnection c : left) {
                c.readerStopped(why);
            }
        } finally {
            synchronized (this) {
                running = false;
            }
            FfmChannel.closeFd(wakeFd);
        }
    }

    /** The eventfd that wakes the reader (tests: a failure of the reader is injected through it). */
    int wakeFd() {
        return wakeFd;
    }

    private void read(FfmConnection c) {
        try {
            c.readEvents();
        } catch (RuntimeException e) {
            LOG.warn("{}: reading a connection's rdma_cm events failed: {}", name, e.toString());
            unwatch(c);
        }
    }

    private static void pollOn(MemorySegment fds, int i, int fd) {
        fds.set(JAVA_INT, i * FfmChannel.POLLFD_SIZE, fd);
        fds.set(JAVA_SHORT, i * FfmChannel.POLLFD_SIZE + 4, FfmChannel.POLLIN);
    }

    private static boolean readable(MemorySegment fds, int i) {
        return fds.get(JAVA_SHORT, i * FfmChannel.POLLFD_SIZE + 6) != 0;
    }

    /** Stops the reader and waits for its thread (which closes the eventfd). */
    @Override
    public void close() {
        Thread t;
        synchronized (this) {
            if (!running) {
                return;
            }
            running = false;
            watched = NONE;
            t = thread;
            if (t == null) {
                FfmChannel.closeFd(wakeFd);
                return;
            }
            FfmChannel.signal(wakeFd);
        }
        if (t != Thread.currentThread()) {
            try {
                t.join(TimeUnit.SECONDS.toMillis(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
