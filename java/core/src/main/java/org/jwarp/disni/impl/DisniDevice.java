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
import java.util.concurrent.CopyOnWriteArrayList;
import org.jwarp.disni.natives.JwarpNative;
import org.jwarp.verbs.CompletionQueue;
import org.jwarp.verbs.ConnectionManager;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.DeviceInfo;
import org.jwarp.verbs.ProtectionDomain;
import org.jwarp.verbs.QueuePairCaps;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.RdmaException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A device opened through rdma_cm address binding (DiSNI exposes a verbs context only via a cm
 * id): its protection domains, completion queues and channels, QPs and asynchronous events. It
 * owns one rdma_cm event channel and its dispatcher thread, which its
 * {@link DisniConnectionManager} sets connections up on.
 */
final class DisniDevice implements Device {
    private static final Logger LOG = LoggerFactory.getLogger(DisniDevice.class);

    private final DisniProviderImpl provider;
    final RdmaCm cm;
    final RdmaVerbs verbs;
    final CmDispatcher dispatcher;
    private final RdmaCmId anchor;
    final IbvContext context;
    private final DeviceInfo info;
    final InetAddress localAddress;
    final boolean roce;
    final DisniConnectionManager connections;
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
            this.events = new org.jwarp.provider.EventDispatcher(info.name());
        } catch (IOException e) {
            if (a != null) {
                dispatcher.destroy(a, false);
            }
            dispatcher.close();
            throw new RdmaException("no RDMA device serves " + local.getHostAddress() + ": " + e.getMessage(), e);
        }
        this.connections = new DisniConnectionManager(this);
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
        return createCompletionQueue(entries, null, false);
    }

    private CompletionQueue createOwnChannelCq(int entries, boolean single) throws RdmaException {
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
            DisniCq c = new DisniCq(this, verbs, ch, cq, entries, null, single);
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
        return createCompletionQueue(entries, channel, false);
    }

    @Override
    public CompletionQueue createCompletionQueue(int entries, org.jwarp.verbs.CompletionChannel channel,
            boolean singleConsumer) throws RdmaException {
        if (channel == null) {
            return createOwnChannelCq(entries, singleConsumer);
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
            DisniCq c = new DisniCq(this, verbs, ch.channel, cq, entries, ch, singleConsumer);
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
        return connections;
    }

    void checkOpen() throws RdmaException {
        if (!open) {
            throw new RdmaException("device " + info.name() + " is closed");
        }
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
            q.singleConsumer(c.singleConsumer());
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
