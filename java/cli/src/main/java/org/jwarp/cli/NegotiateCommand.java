package org.jwarp.cli;

import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import org.jwarp.mpa.MpaFrameLimits;
import org.jwarp.negotiation.InitiatorConfig;
import org.jwarp.negotiation.LoopbackNegotiation;
import org.jwarp.negotiation.NegotiationOutcome;
import org.jwarp.negotiation.ResponderConfig;
import org.jwarp.ground.RtrType;
import org.jwarp.ground.TermCode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code jwarp negotiate --initiator K=V,... --responder K=V,...}: runs the RFC 6581 initiator and
 * responder engines against each other in memory (frames pass through the real codec) and prints
 * one JSON object: {@code request}, {@code reply}, {@code outcome}, {@code rtr}, {@code initiator},
 * {@code responder}, {@code term}, plus {@code attempts} and {@code reason}.
 */
@Command(name = "negotiate", mixinStandardHelpOptions = true,
        description = "Run RFC 6581 connection setup between an initiator and a responder; prints JSON.",
        footer = {"",
                "Initiator keys: ird, ord, maxIrd, p2p, rtr (e.g. write+read), enhanced, crc, markers,",
                "                privateData (hex), fallback (Rev 1 retry after a close; default false), limits (rfc|siw).",
                "Responder keys: maxIrd, ord, requiredOrd, rtr, enhanced, requireP2p, crc, markers,",
                "                privateData (hex), rev2 (close, the default and RFC 6581 §10, or reply: an unenhanced responder's answer to Rev 2),",
                "                limits (rfc|siw)."})
public final class NegotiateCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--initiator", paramLabel = "K=V,...", description = "Initiator parameters.")
    String initiator = "";

    @Option(names = "--responder", paramLabel = "K=V,...", description = "Responder parameters.")
    String responder = "";

    @Override
    public Integer call() {
        InitiatorConfig ic = initiatorConfig(parse("--initiator", initiator));
        ResponderConfig rc = responderConfig(parse("--responder", responder));
        LoopbackNegotiation.Result r = LoopbackNegotiation.run(ic, rc);
        Map<String, Object> o = Json.object();
        o.put("request", MpaCommand.frameJson(r.request()));
        o.put("reply", r.reply() == null ? null : MpaCommand.frameJson(r.reply()));
        o.put("outcome", r.status().jsonName());
        o.put("rtr", r.rtr() == null ? null : r.rtr().wireName());
        o.put("initiator", side(r.initiator().outcome()));
        o.put("responder", side(r.responder().outcome()));
        o.put("term", term(r.term()));
        o.put("attempts", r.attempts());
        o.put("crc", r.initiator().outcome().crc());
        String reason = r.initiator().outcome().reason();
        if (r.status() == org.jwarp.negotiation.NegotiationStatus.REJECTED
                || r.initiator().outcome().status() == org.jwarp.negotiation.NegotiationStatus.ESTABLISHED
                && r.responder().outcome().status() != org.jwarp.negotiation.NegotiationStatus.ESTABLISHED) {
            reason = r.responder().outcome().reason();
        } else if (r.reply() == null) {
            reason = r.responder().outcome().reason();
        }
        o.put("reason", reason);
        PrintWriter out = spec.commandLine().getOut();
        out.println(Json.write(o));
        out.flush();
        return 0;
    }

    private static Map<String, Object> side(NegotiationOutcome n) {
        Map<String, Object> s = Json.object();
        s.put("ird", n.ird());
        s.put("ord", n.ord());
        s.put("peerIrd", n.peerIrd() == NegotiationOutcome.NOT_EXCHANGED ? null : n.peerIrd());
        s.put("peerOrd", n.peerOrd() == NegotiationOutcome.NOT_EXCHANGED ? null : n.peerOrd());
        return s;
    }

    private static Map<String, Object> term(TermCode t) {
        if (t == null) {
            return null;
        }
        Map<String, Object> m = Json.object();
        m.put("layer", t.layer());
        m.put("etype", t.etype());
        m.put("ecode", t.ecode());
        return m;
    }

    static InitiatorConfig initiatorConfig(Map<String, String> kv) {
        InitiatorConfig.Builder b = InitiatorConfig.builder();
        for (Map.Entry<String, String> e : kv.entrySet()) {
            String k = e.getKey();
            String v = e.getValue();
            switch (k) {
                case "ird" -> b.ird(integer("--initiator", k, v));
                case "ord" -> b.ord(integer("--initiator", k, v));
                case "maxIrd" -> b.maxIrd(integer("--initiator", k, v));
                case "p2p" -> b.peerToPeer(bool("--initiator", k, v));
                case "rtr" -> b.rtrTypes(RtrType.parseSet(v));
                case "enhanced" -> b.enhanced(bool("--initiator", k, v));
                case "crc" -> b.crc(bool("--initiator", k, v));
                case "markers" -> b.markers(bool("--initiator", k, v));
                case "privateData" -> b.ulpPrivateData(MpaCommand.parseHex("--initiator privateData", v));
                case "fallback" -> b.fallbackToUnenhanced(bool("--initiator", k, v));
                case "limits" -> b.limits(limits("--initiator", v));
                default -> throw new IllegalArgumentException("--initiator: unknown key '" + k + "' (keys: ird, ord, maxIrd, "
                        + "p2p, rtr, enhanced, crc, markers, privateData, fallback, limits; RFC 6581 §9)");
            }
        }
        return b.build();
    }

    static ResponderConfig responderConfig(Map<String, String> kv) {
        ResponderConfig.Builder b = ResponderConfig.builder();
        for (Map.Entry<String, String> e : kv.entrySet()) {
            String k = e.getKey();
            String v = e.getValue();
            switch (k) {
                case "maxIrd" -> b.maxIrd(integer("--responder", k, v));
                case "ord" -> b.ord(integer("--responder", k, v));
                case "requiredOrd" -> b.requiredOrd(integer("--responder", k, v));
                case "rtr" -> b.rtrTypes(RtrType.parseSet(v));
                case "enhanced" -> b.enhanced(bool("--responder", k, v));
                case "requireP2p" -> b.requireP2p(bool("--responder", k, v));
                case "crc" -> b.crc(bool("--responder", k, v));
                case "markers" -> b.markers(bool("--responder", k, v));
                case "privateData" -> b.ulpPrivateData(MpaCommand.parseHex("--responder privateData", v));
                case "rev2" -> b.unenhancedPolicy(switch (v.toLowerCase(Locale.ROOT)) {
                    case "reply" -> ResponderConfig.UnenhancedPolicy.REPLY_REV1;
                    case "close" -> ResponderConfig.UnenhancedPolicy.CLOSE;
                    default -> throw new IllegalArgumentException("--responder rev2: '" + v
                            + "' is not reply or close (RFC 6581 §10)");
                });
                case "limits" -> b.limits(limits("--responder", v));
                default -> throw new IllegalArgumentException("--responder: unknown key '" + k + "' (keys: maxIrd, ord, "
                        + "requiredOrd, rtr, enhanced, requireP2p, crc, markers, privateData, rev2, limits; RFC 6581 §9)");
            }
        }
        return b.build();
    }

    static Map<String, String> parse(String option, String text) {
        Map<String, String> kv = new LinkedHashMap<>();
        if (text == null || text.isBlank()) {
            return kv;
        }
        for (String part : text.split(",")) {
            String p = part.trim();
            if (p.isEmpty()) {
                continue;
            }
            int eq = p.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException(option + ": '" + p + "' is not KEY=VALUE");
            }
            String k = p.substring(0, eq).trim();
            if (kv.put(k, p.substring(eq + 1).trim()) != null) {
                throw new IllegalArgumentException(option + ": key '" + k + "' given twice");
            }
        }
        return kv;
    }

    private static int integer(String option, String key, String v) {
        try {
            return v.startsWith("0x") || v.startsWith("0X") ? Integer.parseInt(v.substring(2), 16) : Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " " + key + ": '" + v + "' is not an integer (RFC 6581 §9)");
        }
    }

    private static boolean bool(String option, String key, String v) {
        return switch (v.toLowerCase(Locale.ROOT)) {
            case "true", "yes", "1", "on" -> true;
            case "false", "no", "0", "off" -> false;
            default -> throw new IllegalArgumentException(option + " " + key + ": '" + v + "' is not true or false");
        };
    }

    private static MpaFrameLimits limits(String option, String v) {
        return switch (v.toLowerCase(Locale.ROOT)) {
            case "rfc" -> MpaFrameLimits.RFC;
            case "siw" -> MpaFrameLimits.SIW;
            default -> throw new IllegalArgumentException(option + " limits: '" + v + "' is not rfc or siw (RFC 5044 §7.1.1)");
        };
    }
}
