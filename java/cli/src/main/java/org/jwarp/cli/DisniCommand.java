package org.jwarp.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.jwarp.disni.DisniInfo;
import org.jwarp.verbs.DeviceInfo;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code jwarp disni ...}: the DiSNI provider (RFC 5040/5041 RNICs through rdma-core, RFC 6581
 * connection setup by the kernel's MPA layer or in rdma_cm private data).
 *
 * <p>{@code jwarp disni info} prints one JSON object: {@code platform}, {@code available}, and
 * when available {@code library} (where libdisni was loaded from), {@code disniJniVersion},
 * {@code extensionVersion} and {@code devices} (name, transport and the RFC 6581 §9.1 limits
 * {@code maxQpRdAtom}/{@code maxQpInitRdAtom}); when unavailable {@code reason}. Exit code 0, or 3
 * when the provider cannot run here.
 */
@Command(name = "disni", mixinStandardHelpOptions = true, description = "DiSNI provider tools.",
        subcommands = {DisniCommand.Info.class})
public final class DisniCommand {

    /** Exit code of {@code jwarp disni info} when the provider cannot run here. */
    public static final int EXIT_UNAVAILABLE = 3;

    @Command(name = "info", mixinStandardHelpOptions = true,
            description = "Whether the DiSNI provider loads here, its library and devices with their IRD/ORD "
                    + "limits (RFC 6581 §9.1), as JSON. Exit 3 when unavailable.")
    static final class Info implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            DisniInfo info = DisniInfo.probe();
            spec.commandLine().getOut().println(Json.write(toJson(info)));
            spec.commandLine().getOut().flush();
            return info.available() ? 0 : EXIT_UNAVAILABLE;
        }
    }

    static Map<String, Object> toJson(DisniInfo info) {
        Map<String, Object> out = Json.object();
        out.put("platform", info.platform());
        out.put("available", info.available());
        if (!info.available()) {
            out.put("reason", info.reason());
            return out;
        }
        out.put("library", info.library());
        out.put("disniJniVersion", info.disniJniVersion());
        out.put("extensionVersion", info.extensionVersion());
        out.put("directBufferAccess", info.directBufferAccess());
        List<Object> devs = new ArrayList<>();
        for (DeviceInfo d : info.devices()) {
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
        out.put("devices", devs);
        return out;
    }
}
