package org.jwarp.soft;

import java.io.IOException;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.jwarp.soft.cm.CmParameters;
import org.jwarp.soft.loop.Reactor;
import org.jwarp.soft.verbs.SoftLimits;
import org.jwarp.verbs.DeviceInfo;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaProvider;

/**
 * The embedded pure-Java iWARP provider: RFC 5040 RDMAP (§5 data transfer) over RFC 5041 DDP
 * (§5 segmentation and placement) over RFC 5044 MPA (§4 FPDUs, §7.1 setup with RFC 6581 §9) over
 * TCP, driven by a fixed number of NIO {@link Reactor} threads (default one) shared by every
 * device, listener and queue pair it creates. One device, {@value #DEVICE_NAME}, serves every
 * local address; a device opened on an address (not the wildcard) initiates its connections from
 * that address, as rdma_cm binds an id to its device's address.
 */
public final class SoftProvider implements RdmaProvider {
    public static final String DEVICE_NAME = "soft0";
    /** Same limit as Linux siw (SIW_MAX_IRD_QP / SIW_MAX_ORD_QP). */
    public static final int MAX_IRD_ORD = CmParameters.MAX_IRD_ORD;
    public static final int MAX_QP_WR = SoftLimits.MAX_QP_WR;
    public static final int MAX_CQE = 1 << 20;
    /** Scatter-gather entries per Send/Write and per receive. */
    public static final int MAX_SGE = SoftLimits.MAX_SGE;
    /** Entries per RDMA Read sink: a Read Request names one sink STag and TO (RFC 5040 §4.4), as in siw. */
    public static final int MAX_SGE_RD = SoftLimits.MAX_SGE_RD;
    /** Largest inline payload a QP may ask for (siw grants 80 bytes; the soft provider copies into per-slot buffers). */
    public static final int MAX_INLINE_DATA = SoftLimits.MAX_INLINE_DATA;
    /** Largest region (max_mr_size): one direct buffer, see {@link SoftLimits#MAX_MR_SIZE}. */
    public static final long MAX_MR_SIZE = SoftLimits.MAX_MR_SIZE;

    private static final AtomicInteger INSTANCE = new AtomicInteger();

    private final SoftConfig config;
    private final Reactor[] reactors;
    private final AtomicInteger nextReactor = new AtomicInteger();
    private final List<SoftDevice> devices = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    public SoftProvider(SoftConfig config) throws RdmaException {
        this(config, Reactor.MAX_SELECT_MILLIS, TimeUnit.MICROSECONDS.toNanos(config.pollLeaseMicros()));
    }

    /** Tests: the reactors' longest idle sleep and their poll lease, beyond the config's bounds. */
    SoftProvider(SoftConfig config, long maxSelectMillis, long pollLeaseNanos) throws RdmaException {
        this.config = config;
        reactors = new Reactor[config.reactors()];
        int id = INSTANCE.incrementAndGet();
        try {
            for (int i = 0; i < reactors.length; i++) {
                reactors[i] = new Reactor("jwarp-soft-" + id + "-reactor-" + i,
                        pollLeaseNanos, maxSelectMillis, TimeUnit.MICROSECONDS.toNanos(config.reactorBusyPollMicros()));
            }
        } catch (IOException e) {
            for (Reactor r : reactors) {
                if (r != null) {
                    r.close();
                }
            }
            throw new RdmaException("cannot open NIO selector: " + e.getMessage(), e);
        }
    }

    public SoftConfig config() {
        return config;
    }

    Reactor nextReactor() {
        return reactors[Math.floorMod(nextReactor.getAndIncrement(), reactors.length)];
    }

    /** The event-loop threads (diagnostics and tests). */
    java.util.List<Thread> reactorThreads() {
        java.util.List<Thread> t = new java.util.ArrayList<>();
        for (Reactor r : reactors) {
            t.add(r.thread());
        }
        return t;
    }

    static DeviceInfo deviceInfo() {
        return new DeviceInfo(DEVICE_NAME, DeviceInfo.Transport.IWARP, MAX_IRD_ORD, MAX_IRD_ORD, MAX_QP_WR, MAX_CQE,
                MAX_MR_SIZE, MAX_SGE, MAX_SGE_RD, MAX_INLINE_DATA, DeviceInfo.PortState.ACTIVE,
                true); // MemoryRegion.bindTo: RFC 5041 §8.2 stream association
    }

    @Override
    public String name() {
        return SoftProviderFactory.NAME;
    }

    @Override
    public List<DeviceInfo> devices() {
        return List.of(deviceInfo());
    }

    @Override
    public SoftDevice open(InetAddress localAddress) throws RdmaException {
        if (closed) {
            throw new RdmaException("provider closed");
        }
        SoftDevice d = new SoftDevice(this, localAddress);
        devices.add(d);
        return d;
    }

    void forget(SoftDevice d) {
        devices.remove(d);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (SoftDevice d : new ArrayList<>(devices)) {
            d.close();
        }
        for (Reactor r : reactors) {
            r.close();
        }
    }
}
