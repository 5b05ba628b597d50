package org.jwarp.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import org.jwarp.verbs.DeviceInfo;
import org.jwarp.verbs.Rdma;
import org.jwarp.verbs.RdmaProvider;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code jwarp devices}: every device of every provider with its attributes, like
 * {@code ibv_devinfo -v}: transport, port state, max SGE and SGE per RDMA Read sink (RFC 5040 §5),
 * max inline (as probed), max CQE, max QP WR, max IRD/ORD (RFC 6581 §9.1) and max MR size. A
 * provider that cannot run here is listed with the reason. {@code jwarp disni info} stays as the
 * DiSNI-specific view.
 */
@Command(name = "devices", mixinStandardHelpOptions = true,
        description = "List the RDMA devices of every provider with their attributes (like ibv_devinfo -v).")
public final class DevicesCommand implements Callable<Integer> {
    static final List<String> PROVIDERS = List.of("soft", "disni");

    @Option(names = "--json", description = "Print one JSON object instead of a table.")
    boolean json;
    @Option(names = "--provider", description = "Only this provider.")
    String provider;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        List<Object> devs = new ArrayList<>();
        Map<String, Object> unavailable = Json.object();
        List<String[]> rows = new ArrayList<>();
        for (String name : provider != null ? List.of(provider) : PROVIDERS) {
            try (RdmaProvider p = Rdma.open(name)) {
                for (DeviceInfo d : p.devices()) {
                    Map<String, Object> m = toJson(d);
                    m.put("provider", name);
                    devs.add(m);
                    rows.add(new String[] {name, d.name(), d.transport().name().toLowerCase(Locale.ROOT),
                            d.portState().name().toLowerCase(Locale.ROOT), String.valueOf(d.maxSge()),
                            String.valueOf(d.maxSgeRd()), String.valueOf(d.maxInlineData()), String.valueOf(d.maxCqe()),
                            String.valueOf(d.maxQpWr()), d.maxQpRdAtom() + "/" + d.maxQpInitRdAtom(),
                            String.valueOf(d.maxMrSize())});
                }
            } catch (Exception e) {
                unavailable.put(name, UserError.describe(e));
            }
        }
        var out = spec.commandLine().getOut();
        if (json) {
            Map<String, Object> o = Json.object();
            o.put("devices", devs);
            o.put("unavailable", unavailable);
            out.println(Json.write(o));
        } else {
            String f = "%-8s %-8s %-9s %-7s %6s %8s %10s %9s %9s %9s %14s%n";
            out.printf(Locale.ROOT, f, "provider", "device", "transport", "port", "maxSge", "maxSgeRd", "maxInline",
                    "maxCqe", "maxQpWr", "ird/ord", "maxMrSize");
            for (String[] r : rows) {
                out.printf(Locale.ROOT, f, (Object[]) r);
            }
            for (Map.Entry<String, Object> e : unavailable.entrySet()) {
                out.println(e.getKey() + ": unavailable: " + e.getValue());
            }
        }
        out.flush();
        return devs.isEmpty() ? 1 : 0;
    }

    static Map<String, Object> toJson(DeviceInfo d) {
        Map<String, Object> m = Json.object();
        m.put("name", d.name());
        m.put("transport", d.transport().name());
        m.put("portState", d.portState().name());
        m.put("maxSge", d.maxSge());
        m.put("maxSgeRd", d.maxSgeRd());
        m.put("maxInlineData", d.maxInlineData());
        m.put("maxCqe", d.maxCqe());
        m.put("maxQpWr", d.maxQpWr());
        m.put("maxQpRdAtom", d.maxQpRdAtom());
        m.put("maxQpInitRdAtom", d.maxQpInitRdAtom());
        m.put("maxMrSize", d.maxMrSize());
        return m;
    }
}
