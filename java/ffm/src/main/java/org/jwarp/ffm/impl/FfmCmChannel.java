package org.jwarp.ffm.impl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaTimeoutException;

/**
 * An rdma_cm event channel ({@code rdma_create_event_channel}), made non-blocking so that a wait
 * for an event has a deadline: {@link #next} polls {@code rdma_get_cm_event} with short naps and
 * acknowledges each event once its fields are copied out.
 */
final class FfmCmChannel implements AutoCloseable {
    /** The longest nap between two empty reads of the channel. */
    private static final long MAX_NAP_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

    final MemorySegment channel;
    private final int fd;
    /** {@link #tryNext}'s call state and out-parameter, allocated once (guarded by this). */
    private final Arena arena = Arena.ofShared();
    private final MemorySegment tryState = arena.allocate(Ibv.CALL_STATE);
    private final MemorySegment tryOut = arena.allocate(ADDRESS);
    /** One {@code struct pollfd} on the channel's fd, for {@link #tryNext}'s look before it reads. */
    private final MemorySegment tryPoll = arena.allocate(FfmChannel.POLLFD_SIZE, 4);
    private boolean open = true;

    /** One event's fields, copied before the event is acknowledged (private data included). */
    record Event(MemorySegment id, MemorySegment listenId, int type, int status, int responderResources,
            int initiatorDepth, byte[] privateData) implements org.jwarp.provider.CmEventValues {
        String name() {
            return RdmaCm.eventName(type);
        }
    }

    private FfmCmChannel(MemorySegment channel) {
        this.channel = channel;
        this.fd = channel.get(JAVA_INT, 0);
        tryPoll.set(JAVA_INT, 0, fd);
        tryPoll.set(JAVA_SHORT, 4, FfmChannel.POLLIN);
    }

    static FfmCmChannel create() throws RdmaException {
        RdmaCm.requireBound();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Ibv.CALL_STATE);
            MemorySegment ch = (MemorySegment) RdmaCm.CREATE_EVENT_CHANNEL.invokeExact(state);
            if (ch.equals(MemorySegment.NULL)) {
                throw new RdmaException("rdma_create_event_channel failed with " + Ibv.describe(Ibv.errno(state))
                        + (Ibv.errno(state) == 2 || Ibv.errno(state) == 19 ? ": no RDMA support here (/dev/infiniband/rdma_cm)" : ""));
            }
            ch = ch.reinterpret(4); // struct rdma_event_channel { int fd; }
            int fd = ch.get(JAVA_INT, 0);
            int flags = (int) RdmaCm.FCNTL.invokeExact(state, fd, RdmaCm.F_GETFL, 0);
            if (flags < 0 || (int) RdmaCm.FCNTL.invokeExact(state, fd, RdmaCm.F_SETFL, flags | RdmaCm.O_NONBLOCK) < 0) {
                int errno = Ibv.errno(state);
                RdmaCm.DESTROY_EVENT_CHANNEL.invokeExact(ch);
                throw new RdmaException("fcntl(O_NONBLOCK) on the rdma_cm event channel failed with " + Ibv.describe(errno));
            }
            return new FfmCmChannel(ch);
        } catch (RdmaException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Ibv.downcallFailed("rdma_create_event_channel", t);
        }
    }

    /**
     * The next event, acknowledged, or a timeout.
     *
     * @throws RdmaTimeoutException when none arrives within {@code timeoutMillis}
     */
    Event next(long timeoutMillis, String waitingFor) throws RdmaException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        long nap = 10_000;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Ibv.CALL_STATE);
            MemorySegment out = arena.allocate(ADDRESS);
            while (true) {
                int rc = (int) RdmaCm.GET_CM_EVENT.invokeExact(state, channel, out);
                if (rc == 0) {
                    return copyAndAck(state, out);
                }
                int errno = Ibv.errno(state);
                if (errno != RdmaCm.EAGAIN) {
                    throw new RdmaException("rdma_get_cm_event failed with " + Ibv.describe(errno) + " waiting for " + waitingFor);
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new RdmaTimeoutException("no rdma_cm event within " + timeoutMillis + " ms waiting for " + waitingFor);
                }
                LockSupport.parkNanos(Math.min(nap, left));
                nap = Math.min(nap * 2, MAX_NAP_NANOS);
            }
        } catch (RdmaException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Ibv.downcallFailed("rdma_get_cm_event", t);
        }
    }

    /**
     * The next event if one is waiting, else null: no wait, and nothing allocated when none waits
     * (a {@code poll(2)} of the fd with no timeout and without capturing errno comes first; the call
     * state, pollfd and out-parameter are this channel's).
     *
     * @throws RdmaException when {@code rdma_get_cm_event} fails other than with EAGAIN, or the channel is closed
     */
    synchronized Event tryNext() throws RdmaException {
        if (!open) {
            throw new RdmaException("rdma_cm event channel closed");
        }
        try {
            if (!FfmChannel.waitReadable(tryState, tryPoll, 1, 0, "an rdma_cm event channel")) {
                return null;
            }
            if ((int) RdmaCm.GET_CM_EVENT.invokeExact(tryState, channel, tryOut) == 0) {
                return copyAndAck(tryState, tryOut);
            }
            int errno = Ibv.errno(tryState);
            if (errno == RdmaCm.EAGAIN) {
                return null;
            }
            throw new RdmaException("rdma_get_cm_event failed with " + Ibv.describe(errno));
        } catch (RdmaException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Ibv.downcallFailed("rdma_get_cm_event", t);
        }
    }

    /** Copies the event {@code out} points at, then acknowledges it. */
    private static Event copyAndAck(MemorySegment state, MemorySegment out) throws Throwable {
        MemorySegment ev = out.get(ADDRESS, 0).reinterpret(IbvLayouts.CM_EVENT.byteSize());
        Event e = new Event(ev.get(ADDRESS, IbvLayouts.EV_ID), ev.get(ADDRESS, IbvLayouts.EV_LISTEN_ID),
                ev.get(JAVA_INT, IbvLayouts.EV_EVENT), ev.get(JAVA_INT, IbvLayouts.EV_STATUS),
                Byte.toUnsignedInt(ev.get(JAVA_BYTE, IbvLayouts.EV_CONN + IbvLayouts.CP_RESPONDER_RESOURCES)),
                Byte.toUnsignedInt(ev.get(JAVA_BYTE, IbvLayouts.EV_CONN + IbvLayouts.CP_INITIATOR_DEPTH)),
                privateData(ev));
        int ack = (int) RdmaCm.ACK_CM_EVENT.invokeExact(state, ev);
        if (ack != 0) {
            throw new RdmaException("rdma_ack_cm_event failed with " + Ibv.describe(Ibv.errno(state)));
        }
        return e;
    }

    /**
     * The channel's fd ({@code struct rdma_event_channel}'s only field, copied at creation so that a
     * reader holding a stale list of channels never reads the freed struct), readable when an event waits.
     */
    int fd() {
        return fd;
    }

    /** The event's {@code param.conn.private_data}, copied ({@code private_data_len} bytes, u8). */
    private static byte[] privateData(MemorySegment ev) {
        MemorySegment at = ev.get(ADDRESS, IbvLayouts.EV_CONN + IbvLayouts.CP_PRIVATE_DATA);
        int len = Byte.toUnsignedInt(ev.get(JAVA_BYTE, IbvLayouts.EV_CONN + IbvLayouts.CP_PRIVATE_DATA_LEN));
        if (at.equals(MemorySegment.NULL) || len == 0) {
            return new byte[0];
        }
        return at.reinterpret(len).toArray(JAVA_BYTE);
    }

    /** The next event, which must be {@code type} for {@code id}; anything else is an error naming it. */
    Event expect(int type, MemorySegment id, long timeoutMillis) throws RdmaException {
        Event e = next(timeoutMillis, RdmaCm.eventName(type));
        if (e.type() != type || (id != null && !e.id().equals(id))) {
            throw new RdmaException("rdma_cm: " + e.name() + " (status " + e.status() + ") where " + RdmaCm.eventName(type)
                    + " was expected");
        }
        return e;
    }

    @Override
    public synchronized void close() {
        if (!open) {
            return;
        }
        open = false;
        try {
            RdmaCm.DESTROY_EVENT_CHANNEL.invokeExact(channel);
        } catch (Throwable t) {
            throw Ibv.downcallFailed("rdma_destroy_event_channel", t);
        } finally {
            arena.close();
        }
    }
}
