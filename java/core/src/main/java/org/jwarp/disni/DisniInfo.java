package org.jwarp.disni;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.jwarp.verbs.DeviceInfo;
import org.jwarp.verbs.Rdma;
import org.jwarp.verbs.RdmaProvider;

/**
 * What the DiSNI provider (RFC 5040/5041 devices through rdma-core) finds on this machine: whether
 * it loads, where libdisni came from, the JNI versions and the devices with their RFC 6581 §9.1
 * IRD/ORD limits. A value: {@code jwarp disni info} prints it as JSON.
 *
 * @param platform          the {@code linux-<arch>} directory the jar's native library is looked up in
 * @param available         whether the provider loads here
 * @param reason            why it does not (empty when available)
 * @param library           where libdisni was loaded from ("java.library.path" when not from the jar)
 * @param disniJniVersion   the JNI version libdisni reports (DiSNI 2.1 expects 32)
 * @param extensionVersion  the version of the project's JNI extension
 * @param directBufferAccess whether {@code sun.nio.ch} is exported to DiSNI
 * @param devices           the devices rdma-core lists
 */
public record DisniInfo(String platform, boolean available, String reason, String library, int disniJniVersion,
        int extensionVersion, boolean directBufferAccess, List<DeviceInfo> devices) {

    public DisniInfo {
        devices = List.copyOf(devices);
    }

    /** Loads the provider (once per JVM) and lists its devices; never throws for an unavailable provider. */
    public static DisniInfo probe() throws Exception {
        String platform = NativeLibrary.platform();
        try {
            DisniRuntime rt = DisniRuntime.get();
            NativeInfo ni = NativeInfo.load();
            List<DeviceInfo> devs = new ArrayList<>();
            try (RdmaProvider p = Rdma.open(DisniProviderFactory.NAME)) {
                devs.addAll(p.devices());
            }
            return new DisniInfo(platform, true, "", rt.libraryPath().map(Object::toString).orElse("java.library.path"),
                    ni.disniJniVersion(), ni.extensionVersion(), rt.directBufferAccess(), devs);
        } catch (DisniUnavailableException e) {
            return new DisniInfo(platform, false, e.getMessage(), "", 0, 0, false, List.of());
        }
    }

    /** The reason as an Optional, for callers that print only when there is one. */
    public Optional<String> unavailableReason() {
        return available ? Optional.empty() : Optional.of(reason);
    }
}
