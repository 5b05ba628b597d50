package org.jwarp.ffm.impl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The asynchronous events of one verbs context ({@code ibv_get_async_event} on its
 * {@code async_fd}): one daemon thread per context waits in {@code poll(2)} in slices of 100 ms,
 * offers each event to every device opened on the context (rdma_cm hands the same context to every
 * id of a device), which raises it if it owns the QP, CQ or SRQ named, and only then acknowledges it:
 * {@code ibv_destroy_qp} (and _cq, _srq) waits for that, so the object at the event's address cannot
 * be destroyed and its address reused while a device looks it up. A device only queues the event,
 * so no listener runs before the acknowledgement. Started by the first device that sets
 * an event listener, stopped when the last of them leaves.
 */
final class FfmAsyncEvents {
    private static final Logger LOG = LoggerFactory.getLogger(FfmAsyncEvents.class);
    /** {@code enum ibv_event_type} values mapped. */
    static final int CQ_ERR = 0;
    static final int QP_FATAL = 1;
    static final int QP_REQ_ERR = 2;
    static final int QP_ACCESS_ERR = 3;
    /** {@code IBV_EVENT_SRQ_LIMIT_REACHED}: its element is the {@code struct ibv_srq}. */
    static final int SRQ_LIMIT_REACHED = 15;
    /** {@code struct ibv_async_event}: the element (a pointer or port number) in 8 bytes, then the event type. */
    private static final long EVENT_SIZE = 16;
    private static final long EVENT_TYPE = 8;
    private static final int SLICE_MS = 100;
    private static final long ASYNC_FD = IbvLayouts.CONTEXT.byteOffset(MemoryLayout.PathElement.groupElement("async_fd"));

    private static final MethodHandle GET_ASYNC_EVENT;
    private static final MethodHandle ACK_ASYNC_EVENT;

    static {
        Linker linker = Linker.nativeLinker();
        Linker.Option errno = Linker.Option.captureCallState("errno");
        SymbolLookup ibv = SymbolLookup.libraryLookup("libibverbs.so.1", Arena.global());
        GET_ASYNC_EVENT = linker.downcallHandle(ibv.findOrThrow("ibv_get_async_event"),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), errno);
        ACK_ASYNC_EVENT = linker.downcallHandle(ibv.findOrThrow("ibv_ack_async_event"), FunctionDescriptor.ofVoid(ADDRESS));
    }

    /** A device opened on the context: it raises an event if the QP or CQ at {@code element} is its own. */
    interface Sink {
        void onAsyncEvent(int type, long element);
    }

    /**
     * The pumps by context address: running ones, and stopped ones whose thread may still poll the fd
     * (for up to a slice) until whoever stopped it, or the next join, has waited for that thread.
     */
    private static final Map<Long, FfmAsyncEvents> PUMPS = new HashMap<>();
    /** How long a join or the last leave waits for a stopped pump's thread: its slice, and then some. */
    private static final long END_WAIT_MS = 2L * SLICE_MS + 1000;

    private final MemorySegment ctx;
    private final String name;
    private final CopyOnWriteArrayList<Sink> sinks = new CopyOnWriteArrayList<>();
    private final Thread thread;
    private volatile boolean running = true;

    private FfmAsyncEvents(MemorySegment ctx, String name) {
        this.ctx = ctx;
        this.name = name;
        thread = Thread.ofPlatform().daemon().name("jwarp-ffm-async-events-" + name).unstarted(this::run);
    }

    /**
     * Offers the events of {@code ctx} to {@code sink} from now on (starting the context's pump). A pump
     * stopped by the last leave, or by a native error, keeps polling the fd until its slice ends: the
     * new one starts only once that thread ended, so that one thread at a time reads the context's events.
     */
    static void join(MemorySegment ctx, String name, Sink sink) {
        while (true) {
            FfmAsyncEvents old;
            synchronized (FfmAsyncEvents.class) {
                FfmAsyncEvents p = PUMPS.get(ctx.address());
                if (p != null && p.running) {
                    p.sinks.addIfAbsent(sink);
                    return;
                }
                if (p == null || p.thread == Thread.currentThread() || !p.thread.isAlive()) {
                    // (the stopped pump's own thread reads no more once back in its loop)
                    p = new FfmAsyncEvents(ctx, name);
                    PUMPS.put(ctx.address(), p);
                    p.sinks.add(sink);
                    p.thread.start();
                    return;
                }
                old = p;
            }
            old.awaitEnd();
            synchronized (FfmAsyncEvents.class) {
                PUMPS.remove(ctx.address(), old);
            }
        }
    }

    /** {@code sink} gets no more events; the last to leave stops the pump and waits for its thread. */
    static void leave(MemorySegment ctx, Sink sink) {
        FfmAsyncEvents stopped = null;
        synchronized (FfmAsyncEvents.class) {
            FfmAsyncEvents p = PUMPS.get(ctx.address());
            if (p != null && p.running && p.sinks.remove(sink) && p.sinks.isEmpty()) {
                p.running = false;
                stopped = p;
            } else if (p != null && !p.running && p.sinks.remove(sink) && p.sinks.isEmpty() && !p.thread.isAlive()) {
                PUMPS.remove(ctx.address(), p); // stopped by a native error: forgotten when its last device leaves
            }
        }
        if (stopped != null && stopped.thread != Thread.currentThread()) {
            stopped.awaitEnd();
            synchronized (FfmAsyncEvents.class) {
                PUMPS.remove(ctx.address(), stopped);
            }
        }
    }

    /** Waits (bounded) for the stopped pump's thread to end. */
    private void awaitEnd() {
        try {
            thread.join(END_WAIT_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            LOG.warn("{}: the stopped async event thread is still running after {} ms", name, END_WAIT_MS);
        }
    }

    private void run() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Ibv.CALL_STATE);
            MemorySegment event = arena.allocate(EVENT_SIZE, 8);
            MemorySegment pollfd = arena.allocate(FfmChannel.POLLFD_SIZE, 4);
            pollfd.set(JAVA_INT, 0, ctx.reinterpret(IbvLayouts.CONTEXT.byteSize()).get(JAVA_INT, ASYNC_FD));
            pollfd.set(JAVA_SHORT, 4, FfmChannel.POLLIN);
            while (running) {
                pollfd.set(JAVA_SHORT, 6, (short) 0);
                int n = (int) FfmChannel.POLL.invokeExact(state, pollfd, 1L, SLICE_MS);
                if (n < 0 && Ibv.errno(state) != FfmChannel.EINTR) {
                    stop("poll(2) on the async fd failed with " + Ibv.describe(Ibv.errno(state)));
                    return;
                }
                if (n <= 0 || !running) {
                    continue;
                }
                if ((int) GET_ASYNC_EVENT.invokeExact(state, ctx, event) != 0) {
                    stop("ibv_get_async_event failed with " + Ibv.describe(Ibv.errno(state)));
                    return;
                }
                int type = event.get(JAVA_INT, EVENT_TYPE);
                long element = event.get(JAVA_LONG, 0);
                LOG.debug("{}: async event {} element 0x{}", name, type, Long.toHexString(element));
                try {
                    for (Sink s : sinks) {
                        try {
                            s.onAsyncEvent(type, element);
                        } catch (RuntimeException e) {
                            LOG.warn("{}: async event {}: {}", name, type, e.toString());
                        }
                    }
                } finally {
                    ACK_ASYNC_EVENT.invokeExact(event);
                }
            }
        } catch (Throwable t) {
            stop("downcall failed: " + t);
        }
    }

    /** A native error: the pump stops, so that a device setting its listener again starts a fresh one. */
    private void stop(String why) {
        LOG.error("{}: {}; async events stop for {} device(s) until one sets its event listener again", name, why,
                sinks.size());
        synchronized (FfmAsyncEvents.class) {
            running = false;
        }
    }
}
