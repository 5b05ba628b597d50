package org.jwarp.ffm.impl;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.DeviceInfo;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaProvider;

/**
 * The {@code ffm} provider: rdma-core's verbs and rdma_cm through {@code java.lang.foreign}. A
 * device is opened by the local address its connections use, as rdma_cm binds it; loaded by
 * {@code org.jwarp.ffm.FfmProviderFactory} only on Java 25.
 */
public final class FfmProvider implements RdmaProvider {
    public static final String NAME = "ffm";

    public FfmProvider() throws RdmaException {
        RdmaCm.requireBound();
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public List<DeviceInfo> devices() throws RdmaException {
        List<DeviceInfo> out = new ArrayList<>();
        for (String n : FfmDevices.deviceNames()) {
            try (FfmContext c = FfmContext.open(n)) {
                out.add(FfmDevice.info(c));
            }
        }
        return out;
    }

    @Override
    public Device open(InetAddress localAddress) throws RdmaException {
        return FfmDevice.open(localAddress);
    }

    @Override
    public void close() {
    }
}
