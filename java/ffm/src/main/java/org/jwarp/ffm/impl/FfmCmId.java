package org.jwarp.ffm.impl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaTimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One rdma_cm id ({@code struct rdma_cm_id}, RDMA_PS_TCP): a listener, or one end of a
 * connection. Address and route resolution wait for their events on the id's channel; connect and
 * accept only start the exchange, whose ESTABLISHED the caller awaits on the channel (one thread
 * can so drive both ends of a loopback connection).
 */
final class FfmCmId implements AutoCloseable {
    /** Address family {@code AF_INET} and the size of {@code struct sockaddr_in}. */
    private static final short AF_INET = 2;
    private static final int SOCKADDR_IN = 16;

    private static final Logger LOG = LoggerFactory.getLogger(FfmCmId.class);

    final FfmCmChannel channel;
    final MemorySegment id;
    private FfmQp qp;
    private boolean open = true;
    /** Guards the hand-over of an id whose rdma_connect outlived the caller's deadline ({@link #connectWithin}). */
    private final Object connectLock = new Object();
    private boolean connectReturned;
    private Throwable connectFailure;
    /** Set when the caller gave up on rdma_connect: the helper thread then closes the id and its channel. */
    private boolean handedOff;

    private FfmCmId(FfmCmChannel channel, MemorySegment id) {
        this.channel = channel;
        this.id = id.reinterpret(IbvLayouts.CM_ID.byteSize());
    }

    /** A new id on {@code channel} ({@code rdma_create_id}). */
    static FfmCmId create(FfmCmChannel channel) throws RdmaException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Ibv.CALL_STATE);
            MemorySegment out = arena.allocate(ADDRESS);
            int rc = (int) RdmaCm.CREATE_ID.invokeExact(state, channel.channel, out, MemorySegment.NULL, RdmaCm.PS_TCP);
            if (rc != 0) {
                throw new RdmaException("rdma_create_id failed with " + Ibv.describe(Ibv.errno(state)));
            }
            return new FfmCmId(channel, out.get(ADDRESS, 0));
        } catch (RdmaException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Ibv.downcallFailed("rdma_create_id", t);
        }
    }

    /** The id a CONNECT_REQUEST event brought; its events arrive on the listener's channel. */
    static FfmCmId requested(FfmCmChannel listenerChannel, FfmCmChannel.Event request) {
        if (request.type() != RdmaCm.CONNECT_REQUEST) {
            throw new IllegalArgumentException("not a CONNECT_REQUEST: " + request.name());
        }
        return new FfmCmId(listenerChannel, request.id());
    }

    /** Binds to {@code local} and listens ({@code rdma_bind_addr}, {@code rdma_listen}). */
    void listen(InetSocketAddress local, int backlog) throws RdmaException {
        bind(local);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Ibv.CALL_STATE);
            int rc = (int) RdmaCm.LISTEN.invokeExact(state, id, backlog);
            if (rc != 0) {
                throw new RdmaException("rdma_listen(" + local + ") failed with " + Ibv.describe(Ibv.errno(state)));
            }
        } catch (RdmaException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Ibv.downcallFailed("rdma_listen", t);
        }
    }

    /** Binds to {@code local} ({@code rdma_bind_addr}): the id gets the device of that address. */
    void bind(InetSocketAddress local) throws RdmaException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Ibv.CALL_STATE);
            int rc = (int) RdmaCm.BIND_ADDR.invokeExact(state, id, sockaddr(arena, local));
            if (rc != 0) {
                throw new RdmaException("rdma_bind_addr(" + local + ") failed with " + Ibv.describe(Ibv.errno(state)));
            }
        } catch (RdmaException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Ibv.downcallFailed("rdma_bind_addr", t);
        }
    }

    /** Moves the id's events to {@code to} ({@code rdma_migrate_id}); returns the id on its new channel. */
    FfmCmId migrate(FfmCmChannel to) throws RdmaException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Ibv.CALL_STATE);
            int rc = (int) RdmaCm.MIGRATE_ID.invokeExact(state, id, to.channel);
            if (rc != 0) {
                throw new RdmaException("rdma_migrate_id failed with " + Ibv.describe(Ibv.errno(state)));
            }
            return new FfmCmId(to, id);
        } catch (RdmaException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Ibv.downcallFailed("rdma_migrate_id", t);
        }
    }

    /** Resolves {@code remote}'s address, then the route to it, each within {@code timeoutMillis}. */
    void resolve(InetSocketAddress remote, int timeoutMillis) throws RdmaException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Ibv.CALL_STATE);
            int rc = (int) RdmaCm.RESOLVE_ADDR.invokeExact(state, id, MemorySegment.NULL, sockaddr(arena, remote), timeoutMillis);
            if (rc != 0) {
                throw new RdmaException("rdma_resolve_addr(" + remote + ") failed with " + Ibv.describe(Ibv.errno(state)));
            }
            channel.expect(RdmaCm.ADDR_RESOLVED, id, timeoutMillis + 1000L);
            rc = (int) RdmaCm.RESOLVE_ROUTE.invokeExact(state, id, timeoutMillis);
            if (rc != 0) {
                throw new RdmaException("rdma_resolve_route(" + remote + ") failed with " + Ibv.describe(Ibv.errno(state)));
            }
            channel.expect(RdmaCm.ROUTE_RESOLVED, id, timeoutMillis + 1000L);
        } catch (RdmaException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Ibv.downcallFailed("rdma_resolve_addr", t);
        }
    }

    /** {@code id->verbs}: the context librdmacm bound the id to (after resolution or a request). */
    MemorySegment verbs() throws RdmaException {
        MemorySegment v = id.get(ADDRESS, IbvLayouts.CM_ID_VERBS);
        if (v.equals(MemorySegment.NULL)) {
            throw new RdmaException("rdma_cm id is bound to no device yet (resolve its address first)");
        }
        return v;
    }

    void attach(FfmQp qp) {
        this.qp = qp;
    }

    /** Starts the connection ({@code rdma_connect}) offering {@code ird}/{@code ord}; ESTABLISHED follows on the channel. */
    void connect(int ird, int ord) throws RdmaException {
        connect(ird, ord, new byte[0], 7, 7);
    }

    /** {@code rdma_connect} with private data and retry counts (RFC 6581 §9.1 values from CmNegotiation). */
    void connect(int ird, int ord, byte[] privateData, int retryCount, int rnrRetryCount) throws RdmaException {
        connectOrAccept(RdmaCm.CONNECT, "rdma_connect", ird, ord, privateData, retryCount, rnrRetryCount);
    }

    /**
     * {@code rdma_connect} on a helper thread, waited for until {@code deadline} ({@link System#nanoTime}):
     * kernel iWARP (siw) connects the TCP stream inside the call, which towards a silent address
     * blocks for the SYN retries (about 130 s). When the call does not return in time (or the
     * caller is interrupted) the id, its QP and its channel (one of its own) go to the helper, which
     * closes them as soon as the call returns and then ends; {@link #close} is then a no-op for the
     * caller.
     *
     * @throws RdmaTimeoutException when the call did not return by the deadline
     */
    void connectWithin(int ird, int ord, byte[] privateData, int retryCount, int rnrRetryCount, long deadline)
            throws RdmaException {
        Thread helper = Thread.ofPlatform().daemon().name("jwarp-ffm-connect").unstarted(() -> {
            Throwable failed = null;
            try {
                connect(ird, ord, privateData, retryCount, rnrRetryCount);
            } catch (Throwable t) {
                failed = t;
            }
            boolean release;
            synchronized (connectLock) {
                connectReturned = true;
                connectFailure = failed;
                release = handedOff;
                connectLock.notifyAll();
            }
            if (release) {
                LOG.debug("rdma_connect returned after its caller gave up ({}): closing the id", failed == null ? "started"
                        : failed.getMessage());
                release();
                channel.close();
            }
        });
        helper.start();
        synchronized (connectLock) {
            long left;
            while (!connectReturned && (left = deadline - System.nanoTime()) > 0) {
                try {
                    TimeUnit.NANOSECONDS.timedWait(connectLock, left);
                } catch (InterruptedException e) {
                    handedOff = true;
                    Thread.currentThread().interrupt();
                    throw new RdmaException("rdma_connect interrupted; the id is closed when the call returns", e);
                }
            }
            if (!connectReturned) {
                handedOff = true;
                throw new RdmaTimeoutException("rdma_connect did not return within the timeout (kernel iWARP connects "
                        + "TCP inside it); the id is closed when the call returns");
            }
        }
        if (connectFailure instanceof RdmaException e) {
            throw e;
        }
        if (connectFailure instanceof RuntimeException e) {
            throw e;
        }
        if (connectFailure instanceof Error e) {
            throw e;
        }
    }

    /** Whether the id went to {@link #connectWithin}'s helper thread, which closes it and its channel. */
    boolean handedOff() {
        synchronized (connectLock) {
            return handedOff;
        }
    }

    /** Accepts a requested connection ({@code rdma_accept}); ESTABLISHED follows on the channel. */
    void accept(int ird, int ord) throws RdmaException {
        accept(ird, ord, new byte[0], 7, 7);
    }

    /** {@code rdma_accept} with private data and retry counts. */
    void accept(int ird, int ord, byte[] privateData, int retryCount, int rnrRetryCount) throws RdmaException {
        connectOrAccept(RdmaCm.ACCEPT, "rdma_accept", ird, ord, privateData, retryCount, rnrRetryCount);
    }

    private void connectOrAccept(java.lang.invoke.MethodHandle call, String name, int ird, int ord, byte[] privateData,
            int retryCount, int rnrRetryCount) throws RdmaException {
        if (ird < 0 || ird > 255 || ord < 0 || ord > 255) {
            throw new IllegalArgumentException(name + ": IRD " + ird + " and ORD " + ord + " must fit rdma_conn_param's u8");
        }
        if (privateData.length > 255) {
            throw new IllegalArgumentException(name + ": " + privateData.length + " bytes of private data exceed the u8 "
                    + "private_data_len");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Ibv.CALL_STATE);
            MemorySegment param = arena.allocate(IbvLayouts.CONN_PARAM);
            if (privateData.length > 0) {
                param.set(ADDRESS, IbvLayouts.CP_PRIVATE_DATA, arena.allocateFrom(JAVA_BYTE, privateData));
                param.set(JAVA_BYTE, IbvLayouts.CP_PRIVATE_DATA_LEN, (byte) privateData.length);
            }
            param.set(JAVA_BYTE, IbvLayouts.CP_RESPONDER_RESOURCES, (byte) ird);
            param.set(JAVA_BYTE, IbvLayouts.CP_INITIATOR_DEPTH, (byte) ord);
            param.set(JAVA_BYTE, IbvLayouts.CP_RETRY_COUNT, (byte) Math.min(Math.max(retryCount, 0), 7));
            param.set(JAVA_BYTE, IbvLayouts.CP_RNR_RETRY_COUNT, (byte) Math.min(Math.max(rnrRetryCount, 0), 7));
            int rc = (int) call.invokeExact(state, id, param);
            if (rc != 0) {
                throw new RdmaException(name + " failed with " + Ibv.describe(Ibv.errno(state)));
            }
        } catch (RdmaException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Ibv.downcallFailed(name, t);
        }
    }

    /** Refuses a requested connection ({@code rdma_reject}, no private data); the initiator sees REJECTED. */
    void reject() throws RdmaException {
        reject(new byte[0]);
    }

    /** {@code rdma_reject} carrying {@code privateData} (at most 255 bytes). */
    void reject(byte[] privateData) throws RdmaException {
        if (privateData.length > 255) {
            throw new IllegalArgumentException("rdma_reject: " + privateData.length + " bytes of private data exceed u8");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Ibv.CALL_STATE);
            MemorySegment pd = privateData.length == 0 ? MemorySegment.NULL : arena.allocateFrom(JAVA_BYTE, privateData);
            int rc = (int) RdmaCm.REJECT.invokeExact(state, id, pd, (byte) privateData.length);
            if (rc != 0) {
                throw new RdmaException("rdma_reject failed with " + Ibv.describe(Ibv.errno(state)));
            }
        } catch (RdmaException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Ibv.downcallFailed("rdma_reject", t);
        }
    }

    /** Starts the disconnection ({@code rdma_disconnect}); DISCONNECTED follows on the channel. */
    void disconnect() throws RdmaException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Ibv.CALL_STATE);
            int rc = (int) RdmaCm.DISCONNECT.invokeExact(state, id);
            if (rc != 0) {
                throw new RdmaException("rdma_disconnect failed with " + Ibv.describe(Ibv.errno(state)));
            }
        } catch (RdmaException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Ibv.downcallFailed("rdma_disconnect", t);
        }
    }

    /**
     * Destroys the id's QP, if any ({@code rdma_destroy_qp}), then the id ({@code rdma_destroy_id});
     * nothing when the id was handed to a blocked rdma_connect's helper, which does it.
     */
    @Override
    public void close() {
        if (handedOff()) {
            return;
        }
        release();
    }

    private synchronized void release() {
        if (!open) {
            return;
        }
        open = false;
        if (qp != null) {
            qp.close();
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Ibv.CALL_STATE);
            int rc = (int) RdmaCm.DESTROY_ID.invokeExact(state, id);
            if (rc != 0) {
                LOG.warn("rdma_destroy_id failed with {}",
                        Ibv.describe(Ibv.errno(state)));
            }
        } catch (Throwable t) {
            throw Ibv.downcallFailed("rdma_destroy_id", t);
        }
    }

    /** {@code struct sockaddr_in} for an IPv4 socket address: family in host order, port and address in network order. */
    static MemorySegment sockaddr(Arena arena, InetSocketAddress a) {
        if (!(a.getAddress() instanceof Inet4Address v4)) {
            throw new IllegalArgumentException("address: only IPv4 so far, got " + a);
        }
        MemorySegment s = arena.allocate(SOCKADDR_IN, 4);
        s.set(JAVA_SHORT, 0, AF_INET);
        s.set(JAVA_BYTE, 2, (byte) (a.getPort() >>> 8));
        s.set(JAVA_BYTE, 3, (byte) a.getPort());
        MemorySegment.copy(MemorySegment.ofArray(v4.getAddress()), 0, s, 4, 4);
        return s;
    }
}
