package org.jwarp.disni.impl;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaVerbs;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jwarp.disni.NativeErrnoException;
import org.jwarp.disni.natives.JwarpNative;
import org.jwarp.provider.CmNegotiation;
import org.jwarp.verbs.CompletionQueue;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionInfo;
import org.jwarp.verbs.ConnectionManager;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.ConnectionRejectedException;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.DeviceInfo;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.ProtectionDomain;
import org.jwarp.verbs.QueuePairCaps;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaTimeoutException;
import org.jwarp.mpa.MpaDecodeException;
import org.jwarp.negotiation.NegotiationAction;
import org.jwarp.negotiation.NegotiationDecision;
import org.jwarp.negotiation.NegotiationOutcome;
import org.jwarp.ground.TermCode;
import org.jwarp.verbs.ConnectionTerminatedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A device opened through rdma_cm address binding (DiSNI exposes a verbs context only via a cm
 * id). It owns one rdma_cm event channel and its dispatcher thread, and implements connection
 * setup with the RFC 6581 section 9.1 IRD/ORD negotiation decided and checked by the project's
 * engines ({@link CmNegotiation}): on iWARP the kernel's MPA layer carries the values given in
 * rdma_conn_param; on RoCE the engine's enhanced data travels as
 * {@link org.jwarp.negotiation.CmPrivateData}. Every wait has a deadline; every CM error becomes an
 * exception.
 */
final class DisniDevice implements Device, ConnectionManager {
    private static final Logger LOG = LoggerFactory.getLogger(DisniDevice.class);
    static final int RESOLVE_MS = 2000;
    static final Duration ACCEPT_TIMEOUT = Duration.ofSeconds(15);

    private final DisniProviderImpl provider;
    final RdmaCm cm;
    final RdmaVerbs verbs;
    final CmDispatcher dispatcher;
    private final RdmaCmId anchor;
    final IbvContext context;
    private final DeviceInfo info;
    final InetAddress localAddress;
    final boolean roce;
    final CmNegotiation negotiation;
    private final CopyOnWriteArrayList<AutoCloseable> children = new CopyOnWriteArrayList<>();
    private volatile boolean open = true;

    DisniDevice(DisniProviderImpl provider, RdmaCm cm, RdmaVerbs verbs, InetAddress local) throws RdmaException {
        this.provider = provider;
        this.cm = cm;
        this.verbs = verbs;
        this.localAddress = local;
        try {
            this.dispatcher = new CmDispatcher(cm, local.getHostAddress());
        } catch (IOException e) {
            throw new RdmaException("rdma_create_event_channel: " + e.getMessage(), e);
        }
        RdmaCmId a = null;
        try {
            a = dispatcher.createId();
            final RdmaCmId id = a;
            dispatcher.locked(() -> {
                cm.bindAddr(id, new InetSocketAddress(local, 0));
                return null;
            });
            this.context = dispatcher.locked(id::getVerbs);
            this.anchor = a;
            ByteBuffer out = ByteBuffer.allocateDirect(JwarpNative.DEV_SIZE).order(ByteOrder.nativeOrder());
            long ctx = CmDispatcher.ptr(context);
            JwarpNative.queryDevice(ctx, Math.max(1, JwarpNative.cmIdPortNum(CmDispatcher.ptr(a))), out);
            this.info = DisniProviderImpl.toInfo(JwarpNative.deviceName(ctx), out);
            this.roce = info.transport() != DeviceInfo.Transport.IWARP;
            this.negotiation = new CmNegotiation(info);
            this.events = new org.jwarp.provider.EventDispatcher(info.name());
        } catch (IOException e) {
            if (a != null) {
                dispatcher.destroy(a, false);
            }
            dispatcher.close();
            throw new RdmaException("no RDMA device serves " + local.getHostAddress() + ": " + e.getMessage(), e);
        }
        LOG.debug("opened {} for {}", info, local);
    }

    @Override
    public DeviceInfo info() {
        return info;
    }

    @Override
    public ProtectionDomain allocateProtectionDomain() throws RdmaException {
        checkOpen();
        try {
            IbvPd pd = verbs.allocPd(context);
            if (pd == null) {
                throw new RdmaException("ibv_alloc_pd failed");
            }
            DisniPd p = new DisniPd(this, verbs, pd, info.maxMrSize());
            children.add(p);
            return p;
        } catch (IOException e) {
            throw new RdmaException("ibv_alloc_pd: " + e.getMessage(), e);
        }
    }

    @Override
    public CompletionQueue createCompletionQueue(int entries) throws RdmaException {
        checkOpen();
        if (entries < 1 || entries > info.maxCqe()) {
            throw new IllegalArgumentException("entries: " + entries + " outside 1.." + info.maxCqe() + " (max_cqe)");
        }
        IbvCompChannel ch = null;
        IbvCQ cq = null;
        try {
            ch = verbs.createCompChannel(context);
            cq = verbs.createCQ(context, ch, entries, 0);
            if (cq == null) {
                throw new IOException("ibv_create_cq failed");
            }
            DisniCq c = new DisniCq(this, verbs, ch, cq, entries);
            children.add(c);
            return c;
        } catch (IOException e) {
            if (cq != null) { // the CQ's wake fd could not be made: the channel cannot go while the CQ lives
                try {
                    verbs.destroyCQ(cq);
                } catch (IOException ignored) {
                    // reported below
                }
            }
            if (ch != null) {
                try {
                    verbs.destroyCompChannel(ch);
                } catch (IOException ignored) {
                    // reported below
                }
            }
            throw new RdmaException("ibv_create_cq(" + entries + "): " + e.getMessage(), e);
        }
    }

    @Override
    public CompletionQueue createCompletionQueue(int entries, org.jwarp.verbs.CompletionChannel channel)
            throws RdmaException {
        if (channel == null) {
            return createCompletionQueue(entries);
        }
        checkOpen();
        if (!(channel instanceof DisniChannel ch)) {
            throw new IllegalArgumentException("channel: not a DiSNI completion channel");
        }
        if (entries < 1 || entries > info.maxCqe()) {
            throw new IllegalArgumentException("entries: " + entries + " outside 1.." + info.maxCqe() + " (max_cqe)");
        }
        try {
            IbvCQ cq = verbs.createCQ(context, ch.channel, entries, 0);
            if (cq == null) {
                throw new IOException("ibv_create_cq failed");
            }
            DisniCq c = new DisniCq(this, verbs, ch.channel, cq, entries, ch);
            c.solicitedUnreported = info.name().startsWith("siw");
            ch.add(c);
            children.add(c);
            return c;
        } catch (IOException e) {
            throw new RdmaException("ibv_create_cq(" + entries + ") on a completion channel: " + e.getMessage(), e);
        }
    }

    @Override
    public org.jwarp.verbs.CompletionChannel createCompletionChannel() throws RdmaException {
        checkOpen();
        try {
            IbvCompChannel ch = verbs.createCompChannel(context);
            if (ch == null) {
                throw new IOException("ibv_create_comp_channel failed");
            }
            DisniChannel c = new DisniChannel(this, verbs, ch);
            children.add(c);
            return c;
        } catch (IOException e) {
            throw new RdmaException("ibv_create_comp_channel: " + e.getMessage(), e);
        }
    }

    final org.jwarp.provider.EventDispatcher events;

    @Override
    public void setEventListener(org.jwarp.verbs.AsyncEventListener listener, java.util.concurrent.Executor executor) {
        if (listener != null && !open) {
            throw new IllegalStateException("setEventListener: device " + info.name() + " is closed");
        }
        events.set(listener, executor);
        if (listener != null) {
            provider.asyncEvents(this);
            if (!open) { // close() ran meanwhile: it set open before leaving the pump, so undo what it missed
                provider.asyncEventsDone(this);
            }
        }
    }

    /**
     * An {@code ibv_async_event} of this device's verbs context (from the provider's pump, which
     * offers each event to every device on the context): raised when the QP, CQ or SRQ it names is
     * this device's.
     */
    void onAsyncEvent(int type, int qpNum, long cqPtr, long srqPtr) {
        if (type == AsyncCodes.QP_FATAL || type == AsyncCodes.QP_REQ_ERR || type == AsyncCodes.QP_ACCESS_ERR) {
            for (AutoCloseable c : children) {
                if (c instanceof DisniCq cq && cq.qp(qpNum) != null) {
                    DisniQp q = cq.qp(qpNum);
                    q.failed();
                    events.raise(new org.jwarp.verbs.AsyncEvent(org.jwarp.verbs.AsyncEvent.Type.QP_FATAL, qpNum,
                            connectionOf(q), null, null, "ibv async event " + type + " on QP " + qpNum, q.context()));
                    return;
                }
            }
        } else if (type == AsyncCodes.CQ_ERR) {
            for (AutoCloseable c : children) {
                if (c instanceof DisniCq cq && cq.ptr() == cqPtr) {
                    events.raise(new org.jwarp.verbs.AsyncEvent(org.jwarp.verbs.AsyncEvent.Type.CQ_ERROR, -1, null, cq,
                            null, "IBV_EVENT_CQ_ERR (CQ overrun); the QPs are left to the device"));
                    return;
                }
            }
        } else if (type == AsyncCodes.SRQ_LIMIT_REACHED) {
            for (AutoCloseable c : children) {
                if (c instanceof DisniSrq srq && srq.srqPtr == srqPtr) {
                    srq.limitReached();
                    events.raise(new org.jwarp.verbs.AsyncEvent(org.jwarp.verbs.AsyncEvent.Type.SRQ_LIMIT_REACHED, -1,
                            null, null, srq, "IBV_EVENT_SRQ_LIMIT_REACHED"));
                    return;
                }
            }
        }
    }

    private DisniConnection connectionOf(DisniQp q) {
        for (AutoCloseable c : children) {
            if (c instanceof DisniConnection dc && dc.queuePair() == q) {
                return dc;
            }
        }
        return null;
    }

    long contextPtr() {
        return CmDispatcher.ptr(context);
    }

    @Override
    public ConnectionManager connectionManager() {
        return this;
    }

    private void checkOpen() throws RdmaException {
        if (!open) {
            throw new RdmaException("device " + info.name() + " is closed");
        }
    }

    // ---- connection manager ------------------------------------------------------------------

    @Override
    public Listener listen(InetSocketAddress address, int backlog) throws RdmaException {
        checkOpen();
        RdmaCmId id = null;
        try {
            id = dispatcher.createId();
            final RdmaCmId lid = id;
            dispatcher.locked(() -> {
                cm.bindAddr(lid, address);
                cm.listen(lid, backlog);
                return null;
            });
            InetSocketAddress bound = dispatcher.locked(() -> (InetSocketAddress) cm.getSrcAddr(lid));
            DisniListener l = new DisniListener(this, id, bound);
            children.add(l);
            return l;
        } catch (IOException e) {
            if (id != null) {
                dispatcher.destroy(id, false);
            }
            throw new RdmaException("listen on " + address + ": " + e.getMessage(), e);
        }
    }

    /** The platform's EADDRINUSE as the native layer reports it in {@link NativeErrnoException#errno()}. */
    static final int EADDRINUSE = JwarpNative.probe(JwarpNative.PROBE_ERRNO_EADDRINUSE);
    /** Fresh rdma_cm ids tried when rdma_connect reports EADDRINUSE. */
    private static final int ADDRINUSE_ATTEMPTS = 3;

    /**
     * Connects within {@code timeout}. Kernel iWARP (siw) binds the TCP source port that rdma_cm
     * picked in its own port space; when a kernel TCP socket already holds that port,
     * rdma_connect fails at once with EADDRINUSE (seen in the guest with the soft provider's
     * sockets on the same address). A fresh id gets a fresh port, so that case is retried.
     */
    @Override
    public Connection connect(InetSocketAddress remote, QueuePairConfig qpc, ConnectionParameters params,
            Duration timeout) throws RdmaException {
        checkOpen();
        long deadline = System.nanoTime() + timeout.toNanos();
        for (int attempt = 1; ; attempt++) {
            try {
                return connectOnce(remote, qpc, params, deadline);
            } catch (RdmaException e) {
                if (attempt >= ADDRINUSE_ATTEMPTS || !retryable(e) || System.nanoTime() >= deadline) {
                    throw e;
                }
                LOG.debug("connect to {}: {}; retrying with a fresh rdma_cm id", remote, e.getMessage());
            }
        }
    }

    /** Only rdma_connect's own EADDRINUSE (typed errno from the native layer) is worth a fresh id. */
    static boolean retryable(RdmaException e) {
        return !(e instanceof ConnectionRejectedException) && NativeErrnoException.errnoOf(e) == EADDRINUSE;
    }

        private Connection connectOnce(InetSocketAddress remote, QueuePairConfig qpc, ConnectionParameters params,
            long deadline) throws RdmaException {
        CmNegotiation.Initiator neg = negotiation.initiator(params);
        int ird = neg.responderResources();
        int ord = neg.initiatorDepth();
        byte[] pd = neg.privateData();
        RdmaCmId id;
        try {
            id = dispatcher.createId();
        } catch (IOException e) {
            throw new RdmaException("rdma_create_id: " + e.getMessage(), e);
        }
        DisniQp qp = null;
        boolean ok = false;
        boolean abandoned = false;
        try {
            int ms = remainingMs(deadline, RESOLVE_MS);
            dispatcher.locked(() -> {
                cm.bindAddr(id, new InetSocketAddress(localAddress, 0));
                cm.resolveAddr(id, null, remote, ms);
                return null;
            });
            expect(dispatcher.await(id, deadline, "address resolution of " + remote), CmEvent.ADDR_RESOLVED, remote,
                    "address resolution");
            int ms2 = remainingMs(deadline, RESOLVE_MS);
            dispatcher.locked(() -> {
                cm.resolveRoute(id, ms2);
                return null;
            });
            expect(dispatcher.await(id, deadline, "route resolution to " + remote), CmEvent.ROUTE_RESOLVED, remote,
                    "route resolution");
            qp = createQp(id, qpc);
            if (qpc.beforeConnect() != null) {
                qpc.beforeConnect().prepare(qp); // receives posted before rdma_connect, as with rdma_cm
            }
            final DisniQp q = qp;
            long idp = CmDispatcher.ptr(id);
            int w = connectWithin(id, idp, ird, ord, params, pd, deadline, remote);
            if (w != CONNECT_RETURNED) {
                abandoned = true; // the helper thread destroys the id once rdma_connect returns
                if (w == CONNECT_INTERRUPTED) {
                    throw new RdmaException("connect to " + remote + ": interrupted (cancelled) during rdma_connect");
                }
                throw new RdmaTimeoutException("connect to " + remote + ": rdma_connect did not return within the timeout");
            }
            CmEvent ev = dispatcher.await(id, deadline, "connect to " + remote);
            if (ev.type() == CmEvent.REJECTED) {
                throw neg.rejected(ev, ev.status(), remote);
            }
            expect(ev, CmEvent.ESTABLISHED, remote, "connect");
            NegotiationDecision d;
            byte[] peerPd;
            try {
                d = neg.onReply(ev, false);
                peerPd = neg.peerPrivateData(d.outcome());
            } catch (MpaDecodeException | IllegalArgumentException bad) {
                disconnectQuietly(id);
                throw new ConnectionTerminatedException("connect to " + remote + ": the responder's RFC 6581 section 9 "
                        + "data is not usable: " + bad.getMessage(), TermCode.MPA_INVALID_REQ_REP, false);
            }
            NegotiationOutcome o = d.outcome();
            if (d.action() != NegotiationAction.ESTABLISH) {
                disconnectQuietly(id);
                if (d.term() != null) {
                    throw new ConnectionTerminatedException("connect to " + remote + ": " + o.reason()
                            + "; disconnected (rdma_cm cannot send the MPA TERM itself)", d.term(), false);
                }
                throw new RdmaException("connect to " + remote + " closed: " + o.reason());
            }
            LOG.debug("connect to {}: {} (event rr={} id={})", remote, o, ev.responderResources(), ev.initiatorDepth());
            q.established(o.ord());
            InetSocketAddress local = dispatcher.locked(() -> (InetSocketAddress) cm.getSrcAddr(id));
            ConnectionInfo ci = CmNegotiation.info(local, remote, o, o.peerValuesKnown() ? o.peerIrd() : -1,
                    o.peerValuesKnown() ? o.peerOrd() : -1, peerPd, roce);
            DisniConnection c = new DisniConnection(this, id, q, ci);
            children.add(c);
            ok = true;
            return c;
        } catch (IOException e) {
            if (e instanceof RdmaException r) {
                throw r;
            }
            throw new RdmaException("connect to " + remote + ": " + e.getMessage(), e);
        } catch (IllegalStateException e) {
            throw new RdmaException("connect to " + remote + ": " + e.getMessage(), e);
        } finally {
            if (!ok) {
                if (qp != null) {
                    qp.failed(); // released with its id: later posts are refused
                    detach(qp, qpc);
                }
                if (!abandoned) {
                    dispatcher.destroy(id, qp != null);
                }
            }
        }
    }

    /**
     * Runs rdma_connect on a helper thread: kernel iWARP drivers (siw) connect the TCP stream
     * synchronously inside rdma_connect, which would otherwise block past the caller's deadline
     * (about 130 s of SYN retries towards a silent address). Returns false on timeout; the
     * helper then destroys the id itself when the call returns.
     */
    static final int CONNECT_RETURNED = 0;
    static final int CONNECT_TIMED_OUT = 1;
    static final int CONNECT_INTERRUPTED = 2;

    private int connectWithin(RdmaCmId id, long idp, int ird, int ord, ConnectionParameters params, byte[] pd,
            long deadline, InetSocketAddress remote) throws RdmaException {
        java.util.concurrent.CompletableFuture<Void> f = new java.util.concurrent.CompletableFuture<>();
        java.util.concurrent.atomic.AtomicBoolean gaveUp = new java.util.concurrent.atomic.AtomicBoolean();
        Thread t = new Thread(() -> {
            try {
                JwarpNative.connect(idp, ird, ord, params.retryCount(), params.rnrRetryCount(), pd);
                f.complete(null);
            } catch (Throwable e) {
                f.completeExceptionally(e);
            }
            synchronized (gaveUp) {
                if (gaveUp.get()) {
                    dispatcher.destroy(id, true);
                }
            }
        }, "jwarp-disni-connect");
        t.setDaemon(true);
        t.start();
        try {
            f.get(Math.max(1, deadline - System.nanoTime()), java.util.concurrent.TimeUnit.NANOSECONDS);
            return CONNECT_RETURNED;
        } catch (java.util.concurrent.TimeoutException e) {
            synchronized (gaveUp) {
                if (!f.isDone()) {
                    gaveUp.set(true);
                    return CONNECT_TIMED_OUT;
                }
            }
            return failConnect(f, remote);
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable c = e.getCause();
            throw new RdmaException("connect to " + remote + ": " + c.getMessage(), c);
        } catch (InterruptedException e) {
            // a cancel: rdma_connect may still block in the kernel (siw connects TCP inside it), and
            // destroying the id now would wait for it under the channel lock, stalling every CM call
            // of the device; the helper thread destroys the id once rdma_connect returns
            Thread.currentThread().interrupt();
            synchronized (gaveUp) {
                if (!f.isDone()) {
                    gaveUp.set(true);
                    return CONNECT_INTERRUPTED;
                }
            }
            return failConnect(f, remote);
        }
    }

    private static int failConnect(java.util.concurrent.CompletableFuture<Void> f, InetSocketAddress remote)
            throws RdmaException {
        try {
            f.join();
            return CONNECT_RETURNED;
        } catch (java.util.concurrent.CompletionException e) {
            Throwable c = e.getCause();
            throw new RdmaException("connect to " + remote + ": " + c.getMessage(), c);
        }
    }

    void disconnectQuietly(RdmaCmId id) {
        try {
            dispatcher.locked(() -> cm.disconnect(id));
        } catch (IOException e) {
            LOG.debug("rdma_disconnect: {}", e.toString());
        }
    }

    static int remainingMs(long deadline, int cap) throws RdmaTimeoutException {
        long left = (deadline - System.nanoTime()) / 1_000_000L;
        if (left <= 0) {
            throw new RdmaTimeoutException("connection setup timed out");
        }
        return (int) Math.min(left, cap);
    }

    static void expect(CmEvent ev, int type, InetSocketAddress remote, String step) throws RdmaException {
        if (ev.type() == type) {
            return;
        }
        String why;
        if (ev.type() == CmEvent.ADDR_ERROR) {
            why = "address error";
        } else if (ev.type() == CmEvent.ROUTE_ERROR) {
            why = "route error";
        } else if (ev.type() == CmEvent.UNREACHABLE) {
            why = "peer unreachable";
        } else if (ev.type() == CmEvent.CONNECT_ERROR) {
            why = "connect error";
        } else if (ev.type() == CmEvent.REJECTED) {
            why = "rejected (no listener or refused)";
        } else {
            why = "unexpected " + ev.typeName();
        }
        throw new RdmaException(step + " with " + remote + " failed: " + why + " (" + ev.typeName() + ", status "
                + ev.status() + ")");
    }

    DisniQp createQp(RdmaCmId id, QueuePairConfig c) throws IOException {
        if (!(c.pd() instanceof DisniPd pd) || !(c.sendCq() instanceof DisniCq scq)
                || !(c.recvCq() instanceof DisniCq rcq)) {
            throw new IllegalArgumentException("qp: PD and CQs must come from the DiSNI provider");
        }
        DisniSrq srq = null;
        if (c.srq() != null) {
            if (!(c.srq() instanceof DisniSrq s)) {
                throw new IllegalArgumentException("srq: not a DiSNI shared receive queue");
            }
            if (s.pd != pd) {
                throw new RdmaException("srq: the shared receive queue belongs to another protection domain "
                        + "(RFC 5041 §8.2: a QP and its receive buffers share one PD)");
            }
            srq = s;
        }
        final long srqPtr = srq == null ? 0L : srq.srqPtr;
        IbvQPInitAttr attr = new IbvQPInitAttr();
        attr.cap().setMax_send_wr(c.maxSendWr());
        attr.cap().setMax_recv_wr(c.maxRecvWr());
        attr.cap().setMax_inline_data(c.maxInlineData());
        attr.setQp_type(IbvQP.IBV_QPT_RC);
        attr.setSend_cq(scq.cq);
        attr.setRecv_cq(rcq.cq);
        ByteBuffer granted = ByteBuffer.allocateDirect(JwarpNative.CAP_SIZE).order(ByteOrder.nativeOrder());
        // the SGE request and the granted caps travel per thread around DiSNI's _createQP; the
        // request is cleared whatever happens, so it never applies to a later creation
        IbvQP qp = dispatcher.locked(() -> {
            JwarpNative.qpRequest(c.maxSendSge(), c.maxRecvSge());
            JwarpNative.qpRequestSrq(srqPtr);
            try {
                return cm.createQP(id, pd.pd, attr);
            } finally {
                JwarpNative.qpRequestClear();
            }
        });
        if (qp == null) {
            throw new IOException("rdma_create_qp failed");
        }
        DisniQp q = null;
        try {
            if (JwarpNative.qpGranted(granted) < 0) {
                throw new IOException("qpGranted: no capabilities recorded");
            }
            int sendSge = granted.getInt(JwarpNative.CAP_MAX_SEND_SGE);
            // a Read is a send WR: its sink list is bounded by the device's max_sge_rd and by the
            // send SGEs this QP was granted, whichever is smaller
            QueuePairCaps caps = new QueuePairCaps(granted.getInt(JwarpNative.CAP_MAX_SEND_WR),
                    granted.getInt(JwarpNative.CAP_MAX_RECV_WR), sendSge, granted.getInt(JwarpNative.CAP_MAX_RECV_SGE),
                    readSges(info.maxSgeRd(), sendSge), granted.getInt(JwarpNative.CAP_MAX_INLINE));
            LOG.debug("QP {} granted {}", qp.getQp_num(), caps);
            q = qpFactory.create(qp, caps);
            q.useSrq(srq);
            q.useContext(c.context());
            q.inlineShortPageCrossing(info.name().startsWith("siw"));
            scq.attach(q);
            if (rcq != scq) {
                rcq.attach(q);
            }
            return q;
        } catch (IOException | RuntimeException | Error e) {
            if (q != null) {
                detach(q, c);
            }
            destroyQpQuietly(id, e);
            throw e;
        }
    }

    /** SGEs per RDMA Read sink: the device's max_sge_rd, at most the QP's granted send SGEs, at least 1. */
    static int readSges(int deviceMaxSgeRd, int grantedSendSge) {
        return Math.max(1, Math.min(deviceMaxSgeRd, grantedSendSge));
    }

    /** Builds the Java side of a QP that rdma_create_qp made (a seam: tests make it fail). */
    interface QpFactory {
        DisniQp create(IbvQP qp, QueuePairCaps caps) throws IOException;
    }

    volatile QpFactory qpFactory = DisniQp::new;

    /** rdma_destroy_qp of a QP this device created and no one else holds yet. */
    void destroyQpQuietly(RdmaCmId id, Throwable cause) {
        try {
            int rc = dispatcher.locked(() -> cm.destroyQP(id));
            if (rc != 0) {
                LOG.warn("rdma_destroy_qp after a failed QP setup returned {}", rc);
            }
        } catch (IOException | RuntimeException d) {
            cause.addSuppressed(d);
            LOG.warn("rdma_destroy_qp after a failed QP setup: {}", d.toString());
        }
    }

    static void detach(DisniQp qp, QueuePairConfig c) {
        ((DisniCq) c.sendCq()).detach(qp);
        ((DisniCq) c.recvCq()).detach(qp);
    }

    /** Drops the QP from every CQ of this device. */
    void detachEverywhere(DisniQp qp) {
        for (AutoCloseable c : children) {
            if (c instanceof DisniCq cq) {
                cq.detach(qp);
            }
        }
    }

    /** The open SRQ of this device whose token generation {@code token} carries, or null (off the hot path). */
    DisniSrq srqOwning(long token) {
        for (AutoCloseable c : children) {
            if (c instanceof DisniSrq s && s.owns(token)) {
                return s;
            }
        }
        return null;
    }

    void track(AutoCloseable child) {
        children.add(child);
    }

    void forget(AutoCloseable child) {
        children.remove(child);
    }

    @Override
    public void close() {
        if (!open) {
            return;
        }
        open = false;
        // connections and listeners first, then CQs/PDs, as rdma-core requires
        for (AutoCloseable c : children) {
            if (c instanceof DisniConnection || c instanceof DisniListener) {
                closeQuietly(c);
            }
        }
        for (AutoCloseable c : children) {
            if (c instanceof DisniSrq || c instanceof DisniCq) {
                closeQuietly(c);
            }
        }
        for (AutoCloseable c : children) {
            if (!(c instanceof DisniChannel)) {
                closeQuietly(c);
            }
        }
        for (AutoCloseable c : children) {
            closeQuietly(c); // completion channels, after their CQs
        }
        provider.asyncEventsDone(this);
        events.close();
        children.clear();
        dispatcher.destroy(anchor, false);
        dispatcher.close();
        provider.forget(this);
    }

    static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            LOG.warn("closing {}: {}", c, e.toString());
        }
    }
}
