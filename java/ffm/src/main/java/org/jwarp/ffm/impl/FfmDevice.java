package org.jwarp.ffm.impl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executor;
import org.jwarp.ground.TermCode;
import org.jwarp.mpa.MpaDecodeException;
import org.jwarp.negotiation.NegotiationAction;
import org.jwarp.negotiation.NegotiationDecision;
import org.jwarp.negotiation.NegotiationOutcome;
import org.jwarp.provider.CmNegotiation;
import org.jwarp.provider.EventDispatcher;
import org.jwarp.verbs.AsyncEvent;
import org.jwarp.verbs.AsyncEventListener;
import org.jwarp.verbs.CompletionChannel;
import org.jwarp.verbs.CompletionQueue;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionInfo;
import org.jwarp.verbs.ConnectionManager;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.ConnectionTerminatedException;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.DeviceInfo;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.ProtectionDomain;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaTimeoutException;

/**
 * One RDMA device of the {@code ffm} provider, found by the local address rdma_cm binds to, and its
 * connection manager. Connection setup passes the RFC 6581 §9.1 IRD/ORD and private data of
 * {@link CmNegotiation} exactly as the DiSNI provider does; each connection has its own rdma_cm
 * event channel.
 */
final class FfmDevice implements Device, ConnectionManager {
    /** {@code struct ibv_device}: {@code _ops} (two pointers), {@code node_type}, {@code transport_type}, {@code name[64]}. */
    private static final long DEVICE_TRANSPORT = 20;
    private static final long DEVICE_NAME = 24;
    private static final int TRANSPORT_IWARP = 1;

    final InetAddress localAddress;
    final FfmContext ctx;
    final DeviceInfo info;
    final CmNegotiation negotiation;
    final boolean roce;
    /** The id bound to the local address: it holds rdma_cm's context of the device open. */
    private final FfmCmChannel bindChannel;
    private final FfmCmId bound;
    private final EventDispatcher events;
    /** Reads the device's connections' rdma_cm events (one thread for all of them). */
    final FfmCmEvents cmEvents;
    private boolean closed;

    private FfmDevice(InetAddress localAddress, FfmCmChannel bindChannel, FfmCmId bound, FfmContext ctx)
            throws RdmaException {
        this.localAddress = localAddress;
        this.bindChannel = bindChannel;
        this.bound = bound;
        this.ctx = ctx;
        this.info = info(ctx);
        this.roce = info.transport() != DeviceInfo.Transport.IWARP;
        this.negotiation = new CmNegotiation(info);
        this.events = new EventDispatcher("ffm-" + info.name());
        this.cmEvents = new FfmCmEvents(info.name());
    }

    /** Queues {@code e} for the device's asynchronous event listener. */
    void raise(AsyncEvent e) {
        events.raise(e);
    }

    static FfmDevice open(InetAddress localAddress) throws RdmaException {
        FfmCmChannel ch = FfmCmChannel.create();
        FfmCmId id = null;
        try {
            id = FfmCmId.create(ch);
            id.bind(new InetSocketAddress(localAddress, 0));
            return new FfmDevice(localAddress, ch, id, FfmContext.adopt(id.verbs()));
        } catch (RdmaException | RuntimeException e) {
            if (id != null) {
                id.close();
            }
            ch.close();
            throw e;
        }
    }

    /** What the verbs report of a device; the transport from {@code ibv_device}, checked by its name. */
    static DeviceInfo info(FfmContext c) {
        MemorySegment dev = c.ctx.get(ADDRESS, IbvLayouts.CONTEXT_DEVICE).reinterpret(DEVICE_NAME + 64);
        String name = dev.getString(DEVICE_NAME);
        if (!name.equals(c.name)) {
            FfmContext.layoutCheck("ibv_device", List.of("ibv_device.name reads '" + name + "', ibv_get_device_name answers '"
                    + c.name + "'"));
        }
        DeviceInfo.Transport t = dev.get(JAVA_INT, DEVICE_TRANSPORT) == TRANSPORT_IWARP ? DeviceInfo.Transport.IWARP
                : DeviceInfo.Transport.ROCE;
        return new DeviceInfo(c.name, t, c.maxQpRdAtom, c.maxQpInitRdAtom, c.maxQpWr, c.maxCqe, c.maxMrSize, c.maxSge,
                c.maxSgeRd, probeInline(c), DeviceInfo.PortState.ACTIVE);
    }

    /** Inline sizes tried, largest first: {@code ibv_device_attr} has no inline limit. */
    private static final int[] INLINE_TRIES = {1024, 512, 256, 128, 96, 80, 64, 32, 0};

    /**
     * The inline limit of a device: what a throw-away RC QP is granted when asked for decreasing
     * sizes ({@code ibv_create_qp}); -1 when none could be created. Everything made here is destroyed.
     */
    static int probeInline(FfmContext c) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Ibv.CALL_STATE);
            MemorySegment pd = (MemorySegment) Ibv.ALLOC_PD.invokeExact(state, c.ctx);
            if (pd.equals(MemorySegment.NULL)) {
                return -1;
            }
            MemorySegment cq = (MemorySegment) Ibv.CREATE_CQ.invokeExact(state, c.ctx, 2, MemorySegment.NULL,
                    MemorySegment.NULL, 0);
            int granted = -1;
            if (!cq.equals(MemorySegment.NULL)) {
                for (int want : INLINE_TRIES) {
                    MemorySegment attr = arena.allocate(IbvLayouts.QP_INIT_ATTR);
                    attr.set(ADDRESS, IbvLayouts.INIT_SEND_CQ, cq);
                    attr.set(ADDRESS, IbvLayouts.INIT_RECV_CQ, cq);
                    attr.set(JAVA_INT, IbvLayouts.INIT_MAX_SEND_WR, 1);
                    attr.set(JAVA_INT, IbvLayouts.INIT_MAX_RECV_WR, 1);
                    attr.set(JAVA_INT, IbvLayouts.INIT_MAX_SEND_SGE, 1);
                    attr.set(JAVA_INT, IbvLayouts.INIT_MAX_RECV_SGE, 1);
                    attr.set(JAVA_INT, IbvLayouts.INIT_MAX_INLINE, want);
                    attr.set(JAVA_INT, IbvLayouts.INIT_QP_TYPE, IbvLayouts.QPT_RC);
                    MemorySegment qp = (MemorySegment) Ibv.CREATE_QP.invokeExact(state, pd, attr);
                    if (!qp.equals(MemorySegment.NULL)) {
                        granted = attr.get(JAVA_INT, IbvLayouts.INIT_MAX_INLINE);
                        if ((int) Ibv.DESTROY_QP.invokeExact(qp) != 0) {
                            granted = -1;
                        }
                        break;
                    }
                }
                if ((int) Ibv.DESTROY_CQ.invokeExact(cq) != 0) {
                    granted = -1;
                }
            }
            if ((int) Ibv.DEALLOC_PD.invokeExact(pd) != 0) {
                granted = -1;
            }
            return granted;
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Ibv.downcallFailed("ibv_create_qp (inline probe)", t);
        }
    }

    @Override
    public DeviceInfo info() {
        return info;
    }

    @Override
    public ProtectionDomain allocateProtectionDomain() throws RdmaException {
        return ctx.allocatePd();
    }

    @Override
    public CompletionQueue createCompletionQueue(int entries) throws RdmaException {
        return ctx.createCq(entries);
    }

    @Override
    public CompletionQueue createCompletionQueue(int entries, CompletionChannel channel) throws RdmaException {
        if (channel == null) {
            return createCompletionQueue(entries); // Device's contract: no channel is the plain CQ
        }
        if (!(channel instanceof FfmChannel ch)) {
            throw new IllegalArgumentException("completion channel " + channel + " is not the ffm provider's");
        }
        return ctx.createCq(entries, ch);
    }

    /**
     * A single-consumer CQ polls, spins and maps its QPs' completions without a monitor (see
     * {@link CompletionQueue}, "Single-consumer mode").
     */
    @Override
    public CompletionQueue createCompletionQueue(int entries, CompletionChannel channel, boolean singleConsumer)
            throws RdmaException {
        if (channel == null) {
            return ctx.createCq(entries, singleConsumer);
        }
        if (!(channel instanceof FfmChannel ch)) {
            throw new IllegalArgumentException("completion channel " + channel + " is not the ffm provider's");
        }
        return ctx.createCq(entries, ch, singleConsumer);
    }

    @Override
    public CompletionChannel createCompletionChannel() throws RdmaException {
        return ctx.createChannel();
    }

    /**
     * Sets the listener of the device's asynchronous events: the context's {@code ibv_async_event}s
     * for this device's QPs and CQs (QP_FATAL, QP_REQ_ERR and QP_ACCESS_ERR as
     * {@link AsyncEvent.Type#QP_FATAL}, which also puts the QP in ERR; CQ_ERR as
     * {@link AsyncEvent.Type#CQ_ERROR}). A device reports only what it raises: rxe 6.1 raises
     * nothing for a receive too short for its Send.
     */
    @Override
    public void setEventListener(AsyncEventListener listener, Executor executor) {
        synchronized (this) {
            if (listener != null && closed) {
                throw new IllegalStateException("setEventListener: device " + info.name() + " is closed");
            }
            events.set(listener, executor);
            if (listener != null) {
                // joins the context's pump, or starts a fresh one when it stopped after a native error
                FfmAsyncEvents.join(ctx.ctx, info.name(), asyncSink);
            }
        }
    }

    private final FfmAsyncEvents.Sink asyncSink = this::onAsyncEvent;

    private void onAsyncEvent(int type, long element) {
        if (type == FfmAsyncEvents.QP_FATAL || type == FfmAsyncEvents.QP_REQ_ERR || type == FfmAsyncEvents.QP_ACCESS_ERR) {
            FfmQp q = ctx.qpAt(element);
            if (q != null) {
                q.failed();
                events.raise(new AsyncEvent(AsyncEvent.Type.QP_FATAL, q.qpNum(), q.connection(), null, null,
                        "ibv async event " + type + " on QP " + q.qpNum(), q.context()));
            }
        } else if (type == FfmAsyncEvents.SRQ_LIMIT_REACHED) {
            srqLimitReached(element);
        } else if (type == FfmAsyncEvents.CQ_ERR) {
            FfmCq cq = ctx.cqAt(element);
            if (cq != null) {
                events.raise(new AsyncEvent(AsyncEvent.Type.CQ_ERROR, -1, null, cq, null,
                        "IBV_EVENT_CQ_ERR (CQ overrun); the QPs are left to the device"));
            }
        }
    }

    @Override
    public ConnectionManager connectionManager() {
        return this;
    }

    @Override
    public Listener listen(InetSocketAddress address, int backlog) throws RdmaException {
        return FfmListener.open(this, address, backlog);
    }

    @Override
    public Connection connect(InetSocketAddress remote, QueuePairConfig qpc, ConnectionParameters params, Duration timeout)
            throws RdmaException {
        long deadline = System.nanoTime() + timeout.toNanos();
        CmNegotiation.Initiator neg = negotiation.initiator(params);
        FfmCmChannel ch = FfmCmChannel.create();
        FfmCmId id = null;
        FfmQp qp = null;
        boolean ok = false;
        try {
            id = FfmCmId.create(ch);
            id.bind(new InetSocketAddress(localAddress, 0));
            id.resolve(remote, (int) Math.max(1, Math.min(remainingMs(deadline), 10_000)));
            qp = createQp(id, qpc);
            if (qpc.beforeConnect() != null) {
                qpc.beforeConnect().prepare(qp); // receives posted before rdma_connect
            }
            id.connectWithin(neg.responderResources(), neg.initiatorDepth(), neg.privateData(), params.retryCount(),
                    params.rnrRetryCount(), deadline);
            FfmCmChannel.Event ev = nextInterruptibly(ch, deadline, "connect to " + remote);
            if (ev.type() == RdmaCm.REJECTED) {
                throw neg.rejected(ev, ev.status(), remote);
            }
            if (ev.type() != RdmaCm.ESTABLISHED) {
                throw new RdmaException("connect to " + remote + ": " + ev.name() + " (status " + ev.status() + ")");
            }
            NegotiationDecision d;
            byte[] peerPd;
            try {
                d = neg.onReply(ev, false);
                peerPd = neg.peerPrivateData(d.outcome());
            } catch (MpaDecodeException | IllegalArgumentException bad) {
                id.disconnect();
                throw new ConnectionTerminatedException("connect to " + remote + ": the responder's RFC 6581 section 9 "
                        + "data is not usable: " + bad.getMessage(), TermCode.MPA_INVALID_REQ_REP, false);
            }
            NegotiationOutcome o = d.outcome();
            if (d.action() != NegotiationAction.ESTABLISH) {
                id.disconnect();
                if (d.term() != null) {
                    throw new ConnectionTerminatedException("connect to " + remote + ": " + o.reason()
                            + "; disconnected (rdma_cm cannot send the MPA TERM itself)", d.term(), false);
                }
                throw new RdmaException("connect to " + remote + " closed: " + o.reason());
            }
            qp.established(o.ord());
            qp.context(qpc.context());
            // the port bound as 0 is the one the kernel chose; the peer sees this address as the initiator
            InetSocketAddress local = FfmAddresses.local(id.id);
            ConnectionInfo ci = CmNegotiation.info(local != null ? local : new InetSocketAddress(localAddress, 0), remote, o,
                    o.peerValuesKnown() ? o.peerIrd() : -1, o.peerValuesKnown() ? o.peerOrd() : -1, peerPd, roce);
            ok = true;
            return new FfmConnection(this, id, ch, qp, ci);
        } finally {
            if (!ok && (id == null || !id.handedOff())) { // a handed-off id is closed by rdma_connect's helper
                if (id != null) {
                    id.close();
                }
                ch.close();
            } else if (!ok && qp != null) {
                qp.abandoned(); // connectAsync's cancel (an interrupt) or the timeout: released now for the caller
            }
        }
    }

    /** The wait slice of {@link #nextInterruptibly}. */
    private static final long SETUP_SLICE_MS = 50;

    /**
     * The channel's next event by {@code deadline}, waited for in slices so that an interrupt
     * (connectAsync's cancel) ends the wait within one slice.
     *
     * @throws RdmaTimeoutException at the deadline
     * @throws RdmaException        when the thread was interrupted (its interrupt status stays set)
     */
    static FfmCmChannel.Event nextInterruptibly(FfmCmChannel ch, long deadline, String what) throws RdmaException {
        while (true) {
            long left = remainingMs(deadline);
            try {
                return ch.next(Math.min(left, SETUP_SLICE_MS), what);
            } catch (RdmaTimeoutException slice) {
                if (Thread.interrupted()) {
                    Thread.currentThread().interrupt();
                    throw new RdmaException(what + ": interrupted");
                }
                if (left <= SETUP_SLICE_MS) {
                    throw new RdmaTimeoutException(what + ": no rdma_cm event within the timeout");
                }
            }
        }
    }

    static long remainingMs(long deadline) {
        return Math.max(1, (deadline - System.nanoTime()) / 1_000_000);
    }

    /** The QP of {@code id} as {@code qpc} asks, on this device's objects. */
    FfmQp createQp(FfmCmId id, QueuePairConfig qpc) throws RdmaException {
        if (!(qpc.pd() instanceof FfmPd pd) || !(qpc.sendCq() instanceof FfmCq scq) || !(qpc.recvCq() instanceof FfmCq rcq)) {
            throw new IllegalArgumentException("the queue pair's PD and CQs must be the ffm provider's");
        }
        FfmSrq srq = srqOf(qpc, pd);
        if (!id.verbs().equals(pd.device.ctx)) {
            throw new RdmaException("rdma_cm bound the connection to another device than " + info.name()
                    + "'s protection domain");
        }
        return FfmQp.create(id, pd, scq, rcq, srq, qpc.maxSendWr(), qpc.maxRecvWr(), qpc.maxSendSge(), qpc.maxRecvSge(),
                qpc.maxInlineData(), qpc.singleConsumer());
    }

    /** The shared receive queue {@code qpc} asks for, of {@code pd}, or null. */
    private static FfmSrq srqOf(QueuePairConfig qpc, FfmPd pd) throws RdmaException {
        if (qpc.srq() == null) {
            return null;
        }
        if (!(qpc.srq() instanceof FfmSrq s)) {
            throw new IllegalArgumentException("srq: not an ffm shared receive queue");
        }
        if (s.pd != pd) {
            throw new RdmaException("srq: the shared receive queue belongs to another protection domain than the QP's");
        }
        return s;
    }

    /** IBV_EVENT_SRQ_LIMIT_REACHED on {@code element}: the device disarmed the limit of one of this device's SRQs. */
    private void srqLimitReached(long element) {
        FfmSrq s = ctx.srqAt(element);
        if (s != null) {
            s.limitReached();
            events.raise(new AsyncEvent(AsyncEvent.Type.SRQ_LIMIT_REACHED, -1, null, null, s, "IBV_EVENT_SRQ_LIMIT_REACHED"));
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            closed = true;
        }
        FfmAsyncEvents.leave(ctx.ctx, asyncSink); // nothing when the device never joined, or its pump stopped
        cmEvents.close();
        events.close();
        try {
            ctx.close();
        } finally {
            bound.close();
            bindChannel.close();
        }
    }
}
