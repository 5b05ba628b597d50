package org.jwarp.disni;

import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * What the native side of the DiSNI provider reports about itself and the machine: versions,
 * rdma-core structure layouts, and the RDMA devices (RFC 5040/5041 RNICs and RoCE) present.
 * Implemented inside the DiSNI loader ({@code org.jwarp.disni.impl.NativeInfoImpl}).
 */
public interface NativeInfo {
    /** The DiSNI JNI version of the library ({@code NativeDispatcher._getVersion}, 32 for DiSNI 2.1). */
    int disniJniVersion() throws IOException;

    /** The jwarp extension version of the library. */
    int extensionVersion();

    /** rdma-core layouts: sizes and offsets by name (e.g. {@code ibv_send_wr.size}). */
    Map<String, Integer> layouts();

    /** Names of the RDMA devices ({@code ibv_get_device_list}); empty without devices. */
    List<String> deviceNames() throws IOException;

    /** Loads the DiSNI runtime and returns its native report. */
    static NativeInfo load() {
        return DisniRuntime.get().newInstance("org.jwarp.disni.impl.NativeInfoImpl", NativeInfo.class);
    }
}
