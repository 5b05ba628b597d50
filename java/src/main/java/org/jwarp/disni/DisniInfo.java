package org.jwarp.disni;

import java.util.LinkedHashMap;
import java.util.Map;
import org.jwarp.cli.Json;
import org.jwarp.verbs.DeviceInfo;
import org.jwarp.verbs.Rdma;
import org.jwarp.verbs.RdmaProvider;

/**
 * Prints, as one JSON object, whether the DiSNI provider loads here (RFC 5040/5041 devices via
 * DiSNI), where libdisni came from, the JNI versions and the devices with their RFC 6581
 * section 9.1 limits. Exit code 0 when the provider loads, 3 when it is unavailable.
 * {@code java --add-exports java.base/sun.nio.ch=ALL-UNNAMED -cp jwarp-all.jar org.jwarp.disni.DisniInfo}
 */
public final class DisniInfo {
    private DisniInfo() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, Object> out = Json.object();
        out.put("platform", NativeLibrary.platform());
        try {
            DisniRuntime rt = DisniRuntime.get();
            out.put("available", true);
            out.put("library", rt.libraryPath().map(Object::toString).orElse("java.library.path"));
            NativeInfo ni = NativeInfo.load();
            out.put("disniJniVersion", ni.disniJniVersion());
            out.put("extensionVersion", ni.extensionVersion());
            java.util.List<Object> devs = new java.util.ArrayList<>();
            try (RdmaProvider p = Rdma.open(DisniProviderFactory.NAME)) {
                for (DeviceInfo d : p.devices()) {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("name", d.name());
                    m.put("transport", d.transport().name());
                    m.put("maxQpRdAtom", d.maxQpRdAtom());
                    m.put("maxQpInitRdAtom", d.maxQpInitRdAtom());
                    m.put("maxQpWr", d.maxQpWr());
                    m.put("maxCqe", d.maxCqe());
                    m.put("maxMrSize", d.maxMrSize());
                    devs.add(m);
                }
            }
            out.put("devices", devs);
            System.out.println(Json.write(out));
        } catch (DisniUnavailableException e) {
            out.put("available", false);
            out.put("reason", e.getMessage());
            System.out.println(Json.write(out));
            System.exit(3);
        }
    }
}
