package org.jwarp.disni.impl;

import java.nio.ByteBuffer;
import java.util.function.Supplier;
import org.jwarp.disni.natives.JwarpNative;

/**
 * Test helper defined by the DiSNI loader (it is in a child-first package): makes the native
 * layer fail on purpose and hands the thrown exceptions, plus the errno probes, to a test in the
 * application loader.
 */
public final class NativeErrnoProbe implements Supplier<Object[]> {
    @Override
    public Object[] get() {
        Throwable nullId = null;
        try {
            JwarpNative.connect(0L, 1, 1, 7, 7, null); // rdma_connect: null id -> EINVAL
        } catch (Throwable t) {
            nullId = t;
        }
        Throwable noDevice = null;
        try {
            JwarpNative.queryDeviceByName("jwarp-no-such-device", ByteBuffer.allocateDirect(JwarpNative.DEV_SIZE));
        } catch (Throwable t) {
            noDevice = t;
        }
        return new Object[] {nullId, noDevice, JwarpNative.probe(JwarpNative.PROBE_ERRNO_EINVAL),
            JwarpNative.probe(JwarpNative.PROBE_ERRNO_EADDRINUSE)};
    }
}
