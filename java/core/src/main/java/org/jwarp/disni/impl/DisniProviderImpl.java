package org.jwarp.disni.impl;

import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaVerbs;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jwarp.disni.natives.JwarpNative;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.DeviceInfo;
import org.jwarp.verbs.ProviderUnavailableException;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaProvider;

/**
 * The DiSNI provider: kernel RNICs (iWARP per RFC 5040/5041/5044 with RFC 6581 setup in the
 * kernel's MPA layer, e.g. siw, cxgb4, irdma) and RoCE devices (rxe) through DiSNI 2.1 and
 * jwarp's libdisni. Lives in the DiSNI class loader.
 */
public final class DisniProviderImpl implements RdmaProvider {
    public static final String NAME = "disni";
    private final RdmaCm cm;
    private final RdmaVerbs verbs;
    private final CopyOnWriteArrayList<DisniDevice> devices = new CopyOnWriteArrayList<>();

    public DisniProviderImpl() throws ProviderUnavailableException {
        try {
            this.cm = RdmaCm.open();
            this.verbs = RdmaVerbs.open();
        } catch (IOException | RuntimeException e) {
            throw new ProviderUnavailableException(NAME, "DiSNI failed to initialise: " + e.getMessage(), e);
        }
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public List<DeviceInfo> devices() throws RdmaException {
        List<DeviceInfo> out = new ArrayList<>();
        ByteBuffer b = ByteBuffer.allocateDirect(JwarpNative.DEV_SIZE).order(ByteOrder.nativeOrder());
        try {
            for (String n : JwarpNative.deviceNames()) {
                JwarpNative.queryDeviceByName(n, b);
                out.add(toInfo(n, b));
            }
        } catch (IOException e) {
            throw new RdmaException("listing RDMA devices: " + e.getMessage(), e);
        }
        return out;
    }

    /** ibv_device_attr.max_mr_size is a u64; siw and rxe report all ones (no limit): Long.MAX_VALUE then. */
    static long maxMrSize(long u64) {
        return u64 < 0 ? Long.MAX_VALUE : u64;
    }

    static DeviceInfo toInfo(String name, ByteBuffer b) {
        DeviceInfo.Transport t;
        if (b.getInt(JwarpNative.DEV_TRANSPORT) == JwarpNative.TRANSPORT_IWARP) {
            t = DeviceInfo.Transport.IWARP;
        } else if (b.getInt(JwarpNative.DEV_LINK_LAYER) == JwarpNative.LINK_LAYER_ETHERNET) {
            t = DeviceInfo.Transport.ROCE;
        } else {
            t = DeviceInfo.Transport.INFINIBAND;
        }
        return new DeviceInfo(name, t, b.getInt(JwarpNative.DEV_MAX_QP_RD_ATOM),
                b.getInt(JwarpNative.DEV_MAX_QP_INIT_RD_ATOM), b.getInt(JwarpNative.DEV_MAX_QP_WR),
                b.getInt(JwarpNative.DEV_MAX_CQE), maxMrSize(b.getLong(JwarpNative.DEV_MAX_MR_SIZE)), b.getInt(JwarpNative.DEV_MAX_SGE),
                b.getInt(JwarpNative.DEV_MAX_SGE_RD), b.getInt(JwarpNative.DEV_MAX_INLINE),
                b.getInt(JwarpNative.DEV_LINK_LAYER) < 0 ? DeviceInfo.PortState.UNKNOWN
                        : DeviceInfo.PortState.of(b.getInt(JwarpNative.DEV_PORT_STATE)),
                false); // STags scoped to the PD only: MemoryRegion.bindTo is not available
    }

    @Override
    public Device open(InetAddress localAddress) throws RdmaException {
        DisniDevice d = new DisniDevice(this, cm, verbs, localAddress);
        devices.add(d);
        return d;
    }

    private final java.util.Map<Long, AsyncEventPump> pumps = new java.util.HashMap<>();

    /** Makes sure the device's context has an async-event pump that offers events to {@code d}. */
    synchronized void asyncEvents(DisniDevice d) {
        AsyncEventPump p = pumps.computeIfAbsent(d.contextPtr(), c -> new AsyncEventPump(c, this::asyncEventsFailed));
        if (!p.devices.contains(d)) {
            p.devices.add(d);
        }
    }

    /** The pump of {@code context} stopped on a native error: a device set up later gets a fresh one. */
    synchronized void asyncEventsFailed(AsyncEventPump p) {
        pumps.remove(p.context, p);
    }

    /** The device closes: its context's pump stops with its last device. */
    synchronized void asyncEventsDone(DisniDevice d) {
        AsyncEventPump p = pumps.get(d.contextPtr());
        if (p != null && p.devices.remove(d) && p.devices.isEmpty()) {
            pumps.remove(d.contextPtr());
            p.stop();
        }
    }

    void forget(DisniDevice d) {
        devices.remove(d);
    }

    @Override
    public void close() {
        for (DisniDevice d : devices) {
            d.close();
        }
        devices.clear();
    }
}
