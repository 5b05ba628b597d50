package org.jwarp.soft;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.jwarp.memory.StagTable;
import org.jwarp.negotiation.InitiatorNegotiator;
import org.jwarp.soft.cm.AcceptedStreams;
import org.jwarp.soft.cm.SetupStream;
import org.jwarp.soft.cm.SoftConnectionManager;
import org.jwarp.soft.cm.SoftListener;
import org.jwarp.soft.cq.CqDevice;
import org.jwarp.soft.cq.SoftCompletionChannel;
import org.jwarp.soft.cq.SoftCompletionQueue;
import org.jwarp.soft.loop.Reactor;
import org.jwarp.soft.tx.DirectBufferPool;
import org.jwarp.soft.verbs.SoftProtectionDomain;
import org.jwarp.soft.verbs.SoftQueuePair;
import org.jwarp.verbs.AwaitStrategy;
import org.jwarp.verbs.ConnectionManager;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.DeviceInfo;
import org.jwarp.verbs.RdmaException;

/**
 * The one device of the embedded provider (the RNIC of RFC 5040 §1.2 / RFC 5041 §8). It owns the STag table
 * (RFC 5041 §8.2, shared by its protection domains) and the connection manager.
 */
public final class SoftDevice implements CqDevice, Device {
    /** Live registrations per device. */
    static final int STAG_CAPACITY = 1 << 16;

    private final SoftProvider provider;
    /** The address the device was opened on: initiated connections leave from it (null: any). */
    private final InetAddress localAddress;
    private final StagTable stags = new StagTable(STAG_CAPACITY);
    private final SoftConnectionManager cm;
    /** The device as its connections see it. */
    private final StreamHost host = new StreamHost() {
        @Override
        public SoftConfig settings() {
            return SoftDevice.this.config();
        }

        @Override
        public InetAddress sourceAddress() {
            return SoftDevice.this.sourceAddress();
        }

        @Override
        public DirectBufferPool buffers() {
            return buffers;
        }

        @Override
        public Reactor nextReactor() {
            return provider.nextReactor();
        }

        @Override
        public void checkOpen() throws RdmaException {
            SoftDevice.this.checkOpen();
        }

        @Override
        public void track(AutoCloseable c) {
            owned.add(c);
        }

        @Override
        public void forget(AutoCloseable c) {
            owned.remove(c);
        }

        @Override
        public SetupStream initiator(Reactor r, InetSocketAddress remote, SoftQueuePair qp, InitiatorNegotiator neg) {
            return SoftStream.initiator(this, r, remote, qp, neg);
        }

        @Override
        public AcceptedStreams accepted(Reactor r, long idleNanos) {
            return new ListenerStreams(this, r, idleNanos);
        }
    };
    private final List<AutoCloseable> owned = new CopyOnWriteArrayList<>();
    /** Free direct memory kept for the next connections' transmit and poll buffers. */
    static final long POOLED_BUFFER_BYTES = 16L << 20;
    /** Poll buffers and the streams' shared transmit staging (see {@link DirectBufferPool}). */
    private final DirectBufferPool buffers;
    private volatile boolean closed;
    private final org.jwarp.provider.EventDispatcher events = new org.jwarp.provider.EventDispatcher(SoftProvider.DEVICE_NAME);

    SoftDevice(SoftProvider provider, InetAddress localAddress) {
        this.provider = provider;
        this.localAddress = localAddress;
        SoftConfig c = provider.config();
        this.buffers = new DirectBufferPool(POOLED_BUFFER_BYTES, c.txBufferSize(), c.txStagingAreas());
        this.cm = new SoftConnectionManager(host);
    }

    SoftProvider provider() {
        return provider;
    }

    /**
     * The source address of the connections this device initiates (as rdma_cm binds an id to the
     * device's address before it resolves the peer), or null when it was opened on the wildcard
     * address or none: then the kernel's route picks it.
     */
    InetAddress sourceAddress() {
        return localAddress == null || localAddress.isAnyLocalAddress() ? null : localAddress;
    }

    /** Direct buffers: poll buffers released on close, transmit staging lent while bytes wait (see {@link DirectBufferPool}). */
    @Override
    public DirectBufferPool buffers() {
        return buffers;
    }

    SoftConfig config() {
        return provider.config();
    }

    @Override
    public StagTable stags() {
        return stags;
    }

    @Override
    public DeviceInfo info() {
        return SoftProvider.deviceInfo();
    }

    @Override
    public SoftProtectionDomain allocateProtectionDomain() throws RdmaException {
        checkOpen();
        SoftProtectionDomain pd = new SoftProtectionDomain(this);
        owned.add(pd);
        return pd;
    }

    @Override
    public SoftCompletionQueue createCompletionQueue(int entries) throws RdmaException {
        return createCompletionQueue(entries, null, false, null);
    }

    @Override
    public SoftCompletionQueue createCompletionQueue(int entries, org.jwarp.verbs.CompletionChannel channel)
            throws RdmaException {
        return createCompletionQueue(entries, channel, false, null);
    }

    @Override
    public SoftCompletionQueue createCompletionQueue(int entries, org.jwarp.verbs.CompletionChannel channel,
                                                     boolean singleConsumer) throws RdmaException {
        return createCompletionQueue(entries, channel, singleConsumer, null);
    }

    /** Soft keeps its thread-safe CQ whatever {@code singleConsumer} says; {@code await} null: the config's. */
    @Override
    public SoftCompletionQueue createCompletionQueue(int entries, org.jwarp.verbs.CompletionChannel channel,
                                                     boolean singleConsumer, AwaitStrategy await) throws RdmaException {
        checkOpen();
        SoftCompletionChannel ch = null;
        if (channel != null) {
            if (!(channel instanceof SoftCompletionChannel c)) {
                throw new IllegalArgumentException("channel: not a soft-provider completion channel");
            }
            ch = c;
        }
        if (entries > SoftProvider.MAX_CQE) {
            throw new IllegalArgumentException("entries: " + entries + " exceeds maxCqe " + SoftProvider.MAX_CQE);
        }
        SoftConfig cfg = config();
        AwaitStrategy a = await != null ? await : cfg.awaitStrategy();
        SoftCompletionQueue cq = new SoftCompletionQueue(this, entries, ch, cfg.pollSpinMicros() > 0, a,
                cfg.pollMaxStreams());
        owned.add(cq);
        return cq;
    }

    @Override
    public org.jwarp.verbs.CompletionChannel createCompletionChannel() throws RdmaException {
        checkOpen();
        SoftCompletionChannel ch = new SoftCompletionChannel(this);
        owned.add(ch);
        return ch;
    }

    @Override
    public void setEventListener(org.jwarp.verbs.AsyncEventListener listener, java.util.concurrent.Executor executor) {
        if (listener != null && closed) {
            throw new IllegalStateException("setEventListener: device " + SoftProvider.DEVICE_NAME + " is closed");
        }
        events.set(listener, executor);
    }

    /** Where this device's asynchronous events go. */
    @Override
    public org.jwarp.provider.EventDispatcher events() {
        return events;
    }

    @Override
    public ConnectionManager connectionManager() {
        return cm;
    }

    void track(AutoCloseable c) {
        owned.add(c);
    }

    @Override
    public void forget(AutoCloseable c) {
        owned.remove(c);
    }

    /** Live objects of {@code type} the device holds (tests, leak checks). */
    int trackedCount(Class<?> type) {
        int n = 0;
        for (AutoCloseable c : owned) {
            n += type.isInstance(c) ? 1 : 0;
        }
        return n;
    }

    void checkOpen() throws RdmaException {
        if (closed) {
            throw new RdmaException("device " + SoftProvider.DEVICE_NAME + " is closed");
        }
    }

    boolean isClosed() {
        return closed;
    }

    /** Closes listeners and connections first (flushing their WRs), then PDs and CQs. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        List<AutoCloseable> all = new ArrayList<>(owned);
        all.sort((a, b) -> Integer.compare(rank(a), rank(b)));
        for (AutoCloseable c : all) {
            try {
                c.close();
            } catch (Exception e) {
                // keep closing the rest
            }
        }
        owned.clear();
        events.close();
        provider.forget(this);
    }

    private static int rank(AutoCloseable c) {
        if (c instanceof SoftListener) {
            return 0;
        }
        if (c instanceof SoftConnection) {
            return 1;
        }
        if (c instanceof SoftProtectionDomain) {
            return 2;
        }
        if (c instanceof SoftCompletionChannel) {
            return 4; // after its CQs
        }
        return 3;
    }
}
