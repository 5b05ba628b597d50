package org.jwarp.cli;

import java.io.PrintWriter;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import org.jwarp.mpa.EnhancedConnectionData;
import org.jwarp.mpa.MpaDecodeException;
import org.jwarp.mpa.MpaFrame;
import org.jwarp.mpa.MpaFrameLimits;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code jwarp mpa decode HEX} and {@code jwarp mpa encode ...}: the MPA Request/Reply frame codec
 * of RFC 5044 §7.1.1 with RFC 6581 §6/§9 enhanced data, as a scriptable tool. Output is one JSON
 * object (decode) or lowercase hex (encode); malformed input exits 2 with one stderr line naming
 * the field and the RFC section.
 */
@Command(name = "mpa", mixinStandardHelpOptions = true,
        description = "Decode or encode MPA Request/Reply frames (RFC 5044 §7.1.1, RFC 6581 §6, §9).",
        subcommands = {MpaCommand.Decode.class, MpaCommand.Encode.class})
public final class MpaCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** {@code jwarp mpa decode HEX}. */
    @Command(name = "decode", mixinStandardHelpOptions = true,
            description = "Decode one complete MPA Request or Reply frame given as hex; prints JSON.")
    static final class Decode implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(arity = "1..*", paramLabel = "HEX",
                description = "The frame's bytes in hex (spaces, colons and several arguments allowed).")
        java.util.List<String> hex;

        @Option(names = "--max-private-data", paramLabel = "N",
                description = "Largest PD_Length accepted, 0..512 (default 512; Linux siw: 256).")
        int maxPrivateData = MpaFrameLimits.RFC_MAX_PRIVATE_DATA;

        @Override
        public Integer call() throws MpaDecodeException {
            StringBuilder all = new StringBuilder();
            for (String h : hex) {
                String t = h.strip();
                all.append(t.startsWith("0x") || t.startsWith("0X") ? t.substring(2) : t);
            }
            byte[] bytes = parseHex("HEX", all.toString());
            MpaFrame frame = MpaFrame.decode(bytes, new MpaFrameLimits(maxPrivateData, maxPrivateData));
            PrintWriter out = spec.commandLine().getOut();
            out.println(Json.write(frameJson(frame)));
            out.flush();
            return 0;
        }
    }

    /** {@code jwarp mpa encode [options]}. */
    @Command(name = "encode", mixinStandardHelpOptions = true,
            description = "Encode an MPA Request (or --reply) frame; prints hex.")
    static final class Encode implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Option(names = "--reply", description = "An MPA Reply (\"MPA ID Rep Frame\") instead of a Request.")
        boolean reply;
        @Option(names = "--marker", description = "M: require markers.")
        boolean marker;
        @Option(names = "--crc", description = "C: prefer CRC.")
        boolean crc;
        @Option(names = "--reject", description = "R: connection rejected (Reply only).")
        boolean reject;
        @Option(names = "--enhanced", description = "S: prepend RFC 6581 §9 enhanced data (needs Rev 2).")
        boolean enhanced;
        @Option(names = "--rev", paramLabel = "N", description = "Rev, 0..255 (default 2 with --enhanced, else 1).")
        Integer rev;
        @Option(names = "--p2p", description = "A: peer-to-peer model.")
        boolean p2p;
        @Option(names = "--send-rtr", description = "B: zero-length Send RTR.")
        boolean sendRtr;
        @Option(names = "--write-rtr", description = "C: zero-length RDMA Write RTR.")
        boolean writeRtr;
        @Option(names = "--read-rtr", description = "D: zero-length RDMA Read RTR.")
        boolean readRtr;
        @Option(names = "--ird", paramLabel = "N", description = "IRD, 0..16383 (0x3FFF: no automatic negotiation).")
        Integer ird;
        @Option(names = "--ord", paramLabel = "N", description = "ORD, 0..16383.")
        Integer ord;
        @Option(names = "--private-data", paramLabel = "HEX", description = "ULP private data in hex.")
        String privateData;

        @Override
        public Integer call() {
            if (!enhanced && (p2p || sendRtr || writeRtr || readRtr || ird != null || ord != null)) {
                throw new IllegalArgumentException("Enhanced data: --p2p, --*-rtr, --ird and --ord need --enhanced "
                        + "(RFC 6581 §9)");
            }
            if (reject && !reply) {
                throw new IllegalArgumentException("MPA R: --reject needs --reply, R is zero in a Request (RFC 5044 §7.1.1)");
            }
            MpaFrame.Builder b = reply ? MpaFrame.reply().reject(reject) : MpaFrame.request();
            b.marker(marker).crc(crc).revision(rev != null ? rev : enhanced ? 2 : 1);
            if (enhanced) {
                b.enhancedData(new EnhancedConnectionData(p2p, sendRtr, writeRtr, readRtr, ird == null ? 0 : ird,
                        ord == null ? 0 : ord));
            }
            if (privateData != null) {
                b.ulpPrivateData(parseHex("--private-data", privateData));
            }
            PrintWriter out = spec.commandLine().getOut();
            out.println(Json.hex(b.build().toBytes()));
            out.flush();
            return 0;
        }
    }

    /** The CLI's JSON object for one frame (keys are a stable contract). */
    static Map<String, Object> frameJson(MpaFrame f) {
        Map<String, Object> o = Json.object();
        o.put("frame", f.kind().jsonName());
        o.put("marker", f.marker());
        o.put("crc", f.crc());
        o.put("reject", f.reject());
        o.put("enhanced", f.enhanced());
        o.put("revision", f.revision());
        o.put("privateDataLength", f.privateDataLength());
        EnhancedConnectionData ed = f.enhancedData();
        if (ed == null) {
            o.put("enhancedData", null);
        } else {
            Map<String, Object> e = Json.object();
            e.put("peerToPeer", ed.peerToPeer());
            e.put("sendRtr", ed.sendRtr());
            e.put("writeRtr", ed.writeRtr());
            e.put("readRtr", ed.readRtr());
            e.put("ird", ed.ird());
            e.put("ord", ed.ord());
            o.put("enhancedData", e);
        }
        o.put("ulpPrivateData", Json.hex(f.ulpPrivateData()));
        return o;
    }

    /**
     * Parses hex with optional spaces, colons and a leading 0x.
     *
     * @throws IllegalArgumentException naming {@code field}
     */
    static byte[] parseHex(String field, String text) {
        String s = text.replaceAll("[\\s:]", "");
        if (s.startsWith("0x") || s.startsWith("0X")) {
            s = s.substring(2);
        }
        if ((s.length() & 1) != 0) {
            throw new IllegalArgumentException(field + ": odd number of hex digits (" + s.length()
                    + "), expected whole bytes of an MPA frame (RFC 5044 §7.1.1)");
        }
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) {
            int hi = Character.digit(s.charAt(2 * i), 16);
            int lo = Character.digit(s.charAt(2 * i + 1), 16);
            if (hi < 0 || lo < 0) {
                throw new IllegalArgumentException(field + ": '" + s.substring(2 * i, 2 * i + 2).toLowerCase(Locale.ROOT)
                        + "' at byte " + i + " is not hex, expected the bytes of an MPA frame (RFC 5044 §7.1.1)");
            }
            out[i] = (byte) ((hi << 4) | lo);
        }
        return out;
    }
}
