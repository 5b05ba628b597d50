package org.jwarp.ffm.impl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import org.jwarp.provider.ConsumerChannel;
import org.jwarp.verbs.RdmaException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A consumer's completion channel ({@code ibv_create_comp_channel}, RFC 5040 §5.5 completion
 * notification), its fd made non-blocking: {@link #next} waits in {@code poll(2)} on the fd in
 * slices of at most {@value #SLICE_MS} ms (so a close or an interrupt is seen within one slice),
 * takes one event with {@code ibv_get_cq_event} and maps the {@code ibv_cq} back to its
 * {@link FfmCq} by a scan of the channel's CQs (copy-on-write array), which counts the event and
 * acknowledges {@link FfmCq#CHANNEL_ACK_BATCH} at a time, the rest when it closes. Nothing is
 * allocated per event.
 *
 * <p>Thread-safe: several threads may wait (one in poll(2) at a time, the others queued behind it);
 * an event another thread took makes the loser ({@code EAGAIN}) poll again. After close() only
 * the thread in poll(2) finishes its slice; the queued ones leave without one.
 */
final class FfmChannel extends ConsumerChannel<FfmCq> {
    private static final Logger LOG = LoggerFactory.getLogger(FfmChannel.class);
    static final int EINTR = 4;
    static final int EAGAIN = 11;
    static final short POLLIN = 1;
    private static final int EFD_CLOEXEC = 02000000;
    /** {@code struct pollfd}: fd, events, revents. */
    static final long POLLFD_SIZE = 8;
    /** {@code struct ibv_comp_channel}: context, fd, refcnt. */
    private static final long CHANNEL_SIZE = 16;
    private static final long CHANNEL_FD = 8;
    private static final FfmCq[] NO_CQS = new FfmCq[0];

    private static final MethodHandle CREATE_COMP_CHANNEL;
    private static final MethodHandle DESTROY_COMP_CHANNEL;
    static final MethodHandle GET_CQ_EVENT;
    static final MethodHandle ACK_CQ_EVENTS;
    static final MethodHandle POLL;
    /**
     * {@code ibv_get_cq_event} and {@code poll(2)} without capturing errno, for the waits: a
     * capturing downcall allocates (40 bytes a call on JDK 25 under C1), so a wait calls these and,
     * only when one fails, calls the capturing handle again to learn why.
     */
    static final MethodHandle GET_CQ_EVENT_FAST;
    static final MethodHandle POLL_FAST;
    /** libc {@code eventfd(2)}, {@code write(2)}, {@code read(2)} and {@code close(2)}: a wake-up for a thread in poll(2). */
    private static final MethodHandle EVENTFD;
    private static final MethodHandle READ;
    private static final MethodHandle WRITE;
    private static final MethodHandle CLOSE;

    static {
        Linker linker = Linker.nativeLinker();
        Linker.Option errno = Linker.Option.captureCallState("errno");
        SymbolLookup ibv = SymbolLookup.libraryLookup("libibverbs.so.1", Arena.global());
        CREATE_COMP_CHANNEL = linker.downcallHandle(ibv.findOrThrow("ibv_create_comp_channel"),
                FunctionDescriptor.of(ADDRESS, ADDRESS), errno);
        DESTROY_COMP_CHANNEL = linker.downcallHandle(ibv.findOrThrow("ibv_destroy_comp_channel"),
                FunctionDescriptor.of(JAVA_INT, ADDRESS));
        GET_CQ_EVENT = linker.downcallHandle(ibv.findOrThrow("ibv_get_cq_event"),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), errno);
        GET_CQ_EVENT_FAST = linker.downcallHandle(ibv.findOrThrow("ibv_get_cq_event"),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
        POLL_FAST = linker.downcallHandle(linker.defaultLookup().findOrThrow("poll"),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
        ACK_CQ_EVENTS = linker.downcallHandle(ibv.findOrThrow("ibv_ack_cq_events"),
                FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT));
        POLL = linker.downcallHandle(linker.defaultLookup().findOrThrow("poll"),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT), errno);
        EVENTFD = linker.downcallHandle(linker.defaultLookup().findOrThrow("eventfd"),
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT), errno);
        WRITE = linker.downcallHandle(linker.defaultLookup().findOrThrow("write"),
                FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG), errno);
        READ = linker.downcallHandle(linker.defaultLookup().findOrThrow("read"),
                FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
        CLOSE = linker.downcallHandle(linker.defaultLookup().findOrThrow("close"), FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    }

    private final FfmContext device;
    /** The {@code struct ibv_comp_channel}. */
    final MemorySegment channel;
    private final Arena arena = Arena.ofShared();
    /** One {@code struct pollfd} for every waiter: fd and events never change, revents is not read. */
    private final MemorySegment pollfd = arena.allocate(POLLFD_SIZE, 4);
    /** {@code ibv_get_cq_event}'s out-parameters and errno, guarded by themselves. */
    private final MemorySegment taken = arena.allocate(ADDRESS, 2);
    private final MemorySegment takenContext = taken.asSlice(ADDRESS.byteSize());
    private final MemorySegment takeState = arena.allocate(Ibv.CALL_STATE);

    private FfmChannel(FfmContext device, MemorySegment channel) {
        super(NO_CQS);
        this.device = device;
        this.channel = channel;
        pollfd.set(JAVA_INT, 0, fd(channel));
        pollfd.set(JAVA_SHORT, 4, POLLIN);
    }

    static FfmChannel create(FfmContext device) throws RdmaException {
        return new FfmChannel(device, createNative(device));
    }

    /** A non-blocking {@code struct ibv_comp_channel} of {@code device} (a consumer's, or a CQ's own). */
    static MemorySegment createNative(FfmContext device) throws RdmaException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment state = a.allocate(Ibv.CALL_STATE);
            MemorySegment ch = (MemorySegment) CREATE_COMP_CHANNEL.invokeExact(state, device.ctx);
            if (ch.equals(MemorySegment.NULL)) {
                throw new RdmaException("ibv_create_comp_channel on " + device.name + " failed with "
                        + Ibv.describe(Ibv.errno(state)));
            }
            ch = ch.reinterpret(CHANNEL_SIZE);
            int errno = nonBlocking(state, fd(ch));
            if (errno != 0) {
                int rc = (int) DESTROY_COMP_CHANNEL.invokeExact(ch);
                throw new RdmaException("fcntl(O_NONBLOCK) on the completion channel of " + device.name + " failed with "
                        + Ibv.describe(errno) + (rc != 0 ? "; ibv_destroy_comp_channel: " + Ibv.describe(rc) : ""));
            }
            return ch;
        } catch (RdmaException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Ibv.downcallFailed("ibv_create_comp_channel", t);
        }
    }

    /** Sets O_NONBLOCK on {@code fd} ({@code fcntl(2)}): 0, or the errno of the call that failed. */
    private static int nonBlocking(MemorySegment state, int fd) throws Throwable {
        int flags = (int) RdmaCm.FCNTL.invokeExact(state, fd, RdmaCm.F_GETFL, 0);
        boolean set = flags >= 0 && (int) RdmaCm.FCNTL.invokeExact(state, fd, RdmaCm.F_SETFL, flags | RdmaCm.O_NONBLOCK) >= 0;
        return set ? 0 : Ibv.errno(state);
    }

    /** {@code ibv_destroy_comp_channel}: false (logged) when it failed and the channel leaked. */
    static boolean destroyNative(MemorySegment channel, String device) {
        try {
            int rc = (int) DESTROY_COMP_CHANNEL.invokeExact(channel);
            if (rc != 0) {
                LOG.warn("ibv_destroy_comp_channel on {} failed with {} (a CQ still uses it?): the channel leaked",
                        device, Ibv.describe(rc));
            }
            return rc == 0;
        } catch (Throwable t) {
            throw Ibv.downcallFailed("ibv_destroy_comp_channel", t);
        }
    }

    /** The fd of a {@code struct ibv_comp_channel}. */
    static int fd(MemorySegment channel) {
        return channel.get(JAVA_INT, CHANNEL_FD);
    }

    /** A new {@code eventfd(0, EFD_CLOEXEC)}. */
    static int eventFd(String device) throws RdmaException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment state = a.allocate(Ibv.CALL_STATE);
            int fd = (int) EVENTFD.invokeExact(state, 0, EFD_CLOEXEC);
            if (fd < 0) {
                throw new RdmaException("eventfd for a completion queue of " + device + " failed with "
                        + Ibv.describe(Ibv.errno(state)));
            }
            return fd;
        } catch (RdmaException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Ibv.downcallFailed("eventfd", t);
        }
    }

    /** Makes {@code fd} (an eventfd) readable: a thread in {@code poll(2)} on it returns. */
    static void signal(int fd) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment state = a.allocate(Ibv.CALL_STATE);
            MemorySegment one = a.allocate(JAVA_LONG);
            one.set(JAVA_LONG, 0, 1L);
            long n = (long) WRITE.invokeExact(state, fd, one, 8L);
            if (n != 8) {
                LOG.warn("write to a completion queue's wake-up eventfd failed with {}", Ibv.describe(Ibv.errno(state)));
            }
        } catch (Throwable t) {
            throw Ibv.downcallFailed("write", t);
        }
    }

    /**
     * Resets {@code fd} (an eventfd that poll(2) found readable, so the read does not block) to
     * not readable; {@code eight} is the 8-byte counter's buffer.
     */
    static void drain(int fd, MemorySegment eight) {
        try {
            if ((long) READ.invokeExact(fd, eight, 8L) != 8L) {
                throw new IllegalStateException("read of wake-up eventfd " + fd + " failed");
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Ibv.downcallFailed("read", t);
        }
    }

    /** {@code close(2)}, logged when it fails. */
    static void closeFd(int fd) {
        try {
            if ((int) CLOSE.invokeExact(fd) != 0) {
                LOG.warn("close of fd {} failed", fd);
            }
        } catch (Throwable t) {
            throw Ibv.downcallFailed("close", t);
        }
    }

    /** Whether {@code ctx} is the context this channel was created on. */
    boolean of(FfmContext ctx) {
        return device == ctx;
    }


    @Override
    protected long takeEvent(int ms) {
        try {
            synchronized (taken) {
                if (!isOpen()) {
                    return 0; // closed while this thread queued behind another waiter's slice
                }
                if (waitReadable(takeState, pollfd, 1, ms, device.name) && isOpen()) {
                    return FfmChannel.takeEvent(takeState, channel, taken, takenContext, device.name);
                }
                return 0;
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Ibv.downcallFailed("ibv_get_cq_event", t);
        }
    }

    @Override
    protected long address(FfmCq cq) {
        return cq.cq.address();
    }

    @Override
    protected void eventTaken(FfmCq cq) {
        cq.channelEventTaken();
    }

    @Override
    protected void ackUnknown(long cq) {
        try {
            ACK_CQ_EVENTS.invokeExact(MemorySegment.ofAddress(cq), 1);
        } catch (Throwable t) {
            throw Ibv.downcallFailed("ibv_ack_cq_events", t);
        }
    }

    /**
     * {@code poll(2)} on {@code fds} for up to {@code ms}; true when one is readable. A failure is
     * retried once through the errno-capturing handle (no wait): EINTR counts as nothing readable.
     *
     * @throws IllegalStateException when poll(2) fails otherwise
     */
    static boolean waitReadable(MemorySegment state, MemorySegment fds, long nfds, int ms, String device) throws Throwable {
        int n = (int) POLL_FAST.invokeExact(fds, nfds, ms);
        if (n < 0) {
            n = (int) POLL.invokeExact(state, fds, nfds, 0);
            if (n < 0 && Ibv.errno(state) != EINTR) {
                throw new IllegalStateException("poll(2) on a completion channel of " + device + " failed with "
                        + Ibv.describe(Ibv.errno(state)));
            }
        }
        return n > 0;
    }

    /**
     * Takes one event of the non-blocking {@code channel} ({@code ibv_get_cq_event}): the address of
     * its {@code ibv_cq}, or 0 when there was none (EAGAIN: another thread took it). A failure is
     * retried once through the errno-capturing handle to learn why.
     *
     * @throws IllegalStateException when ibv_get_cq_event fails otherwise
     */
    static long takeEvent(MemorySegment state, MemorySegment channel, MemorySegment cq, MemorySegment context,
            String device) throws Throwable {
        int rc = (int) GET_CQ_EVENT_FAST.invokeExact(channel, cq, context);
        if (rc != 0) {
            rc = (int) GET_CQ_EVENT.invokeExact(state, channel, cq, context);
            if (rc != 0) {
                if (Ibv.errno(state) == EAGAIN) {
                    return 0;
                }
                throw new IllegalStateException("ibv_get_cq_event on " + device + " failed with "
                        + Ibv.describe(Ibv.errno(state)));
            }
        }
        return cq.get(JAVA_LONG, 0);
    }

    /**
     * Stops the listeners, lets the waiters leave (within one slice), then destroys the channel.
     * A CQ still on it keeps it alive natively ({@code ibv_destroy_comp_channel} refuses with
     * EBUSY): logged, the channel leaks.
     */
    @Override
    public void close() {
        if (!beginClose()) {
            return;
        }
        device.forget(this);
        if (destroyNative(channel, device.name) && noWaiters()) {
            arena.close();
        }
    }

    @Override
    public String toString() {
        return "FfmChannel{" + device.name + "}";
    }
}
