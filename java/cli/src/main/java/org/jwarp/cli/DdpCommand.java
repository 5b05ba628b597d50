package org.jwarp.cli;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.jwarp.ddp.DdpHeader;
import org.jwarp.ddp.DdpSegmenter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code jwarp ddp ...}: DDP tools, RFC 5041.
 *
 * <p>{@code jwarp ddp segment} prints how a message of {@code --length} bytes is cut into DDP
 * segments for a MULPDU (RFC 5041 §5.2). Untagged ({@code --qn --msn [--mo]}) or tagged
 * ({@code --stag --to}). Output, one JSON object on one line:
 *
 * <pre>
 * {"tagged":false,"mulpdu":1500,"headerLength":18,"length":2048,"qn":0,"msn":1,"count":2,
 *  "segments":[{"offset":0,"length":1482,"last":false,"mo":0},
 *              {"offset":1482,"length":566,"last":true,"mo":1482}]}
 * </pre>
 *
 * Tagged output carries {@code "stag"} at the top and {@code "to"} per segment instead of QN/MSN and
 * MO. {@code offset} is the offset in the ULP message, {@code length} the payload bytes of the
 * segment, {@code last} its L flag. Numbers accept decimal or 0x-hex. Errors exit 2.
 */
@Command(name = "ddp", mixinStandardHelpOptions = true, description = "DDP (RFC 5041) tools.",
        subcommands = {DdpCommand.Segment.class})
public final class DdpCommand {

    /** Most segments one invocation prints. */
    static final int MAX_SEGMENTS = 1_000_000;

    @Command(name = "segment", mixinStandardHelpOptions = true,
            description = "Print the DDP segments of one message for a MULPDU (RFC 5041 §5.2) as JSON.")
    static final class Segment implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Option(names = "--length", required = true, description = "ULP message length in bytes")
        String length;

        @Option(names = "--mulpdu", required = true, description = "MULPDU: largest DDP segment incl. header")
        String mulpdu;

        @Option(names = "--qn", description = "untagged: queue number (RDMAP: 0 Send, 1 Read Request, 2 Terminate)")
        String qn;

        @Option(names = "--msn", description = "untagged: message sequence number (first message: 1)")
        String msn;

        @Option(names = "--mo", description = "untagged: message offset of the first segment (default 0)")
        String mo;

        @Option(names = "--stag", description = "tagged: steering tag")
        String stag;

        @Option(names = "--to", description = "tagged: tagged offset of the first byte (unsigned 64-bit)")
        String to;

        @Override
        public Integer call() {
            boolean tagged = stag != null || to != null;
            if (tagged && (qn != null || msn != null || mo != null)) {
                throw new IllegalArgumentException("--stag/--to (tagged) and --qn/--msn/--mo (untagged) are exclusive "
                        + "(RFC 5041 §4.2, §4.3)");
            }
            if (tagged && (stag == null || to == null)) {
                throw new IllegalArgumentException("tagged segmentation needs both --stag and --to (RFC 5041 §4.2)");
            }
            if (!tagged && (qn == null || msn == null)) {
                throw new IllegalArgumentException("untagged segmentation needs --qn and --msn (RFC 5041 §4.3); "
                        + "tagged needs --stag and --to");
            }
            long len = unsigned("--length", length, 0xFFFF_FFFFL);
            int mul = (int) unsigned("--mulpdu", mulpdu, 0xFFFF);
            int max = DdpSegmenter.maxPayload(tagged, mul);
            long count = DdpSegmenter.segmentCount(len, max);
            if (count > MAX_SEGMENTS) {
                throw new IllegalArgumentException("--length " + len + " at MULPDU " + mul + " gives " + count
                        + " segments, more than " + MAX_SEGMENTS + " printed");
            }
            Map<String, Object> out = Json.object();
            out.put("tagged", tagged);
            out.put("mulpdu", mul);
            out.put("headerLength", tagged ? DdpHeader.TAGGED_HEADER_LENGTH : DdpHeader.UNTAGGED_HEADER_LENGTH);
            out.put("length", len);
            long first;
            if (tagged) {
                int st = (int) unsigned("--stag", stag, 0xFFFF_FFFFL);
                first = parseTo(to);
                if (len > 0 && Long.compareUnsigned(first + len - 1, first) < 0) {
                    throw new IllegalArgumentException("--to " + Long.toUnsignedString(first) + " + --length " + len
                            + " wraps the 64-bit tagged offset (RFC 5041 §7.1)");
                }
                out.put("stag", Integer.toUnsignedLong(st));
            } else {
                out.put("qn", unsigned("--qn", qn, 0xFFFF_FFFFL));
                out.put("msn", unsigned("--msn", msn, 0xFFFF_FFFFL));
                first = mo == null ? 0 : unsigned("--mo", mo, 0xFFFF_FFFFL);
                if (first + len > 0x1_0000_0000L) {
                    throw new IllegalArgumentException("--mo " + first + " + --length " + len
                            + " exceeds the 32-bit message offset (RFC 5041 §4.3)");
                }
            }
            out.put("count", count);
            List<Object> segs = new ArrayList<>((int) count);
            long off = 0;
            do {
                Map<String, Object> s = Json.object();
                int n = DdpSegmenter.segmentLength(len, off, max);
                s.put("offset", off);
                s.put("length", n);
                s.put("last", DdpSegmenter.isLast(len, off, max));
                if (tagged) {
                    s.put("to", unsignedNumber(first + off));
                } else {
                    s.put("mo", first + off);
                }
                segs.add(s);
                off += n;
            } while (off < len);
            out.put("segments", segs);
            spec.commandLine().getOut().println(Json.write(out));
            spec.commandLine().getOut().flush();
            return 0;
        }

        private static Object unsignedNumber(long v) {
            return v >= 0 ? (Object) v : new BigInteger(Long.toUnsignedString(v));
        }

        private static long parseTo(String text) {
            try {
                String t = text.trim();
                if (t.startsWith("0x") || t.startsWith("0X")) {
                    return Long.parseUnsignedLong(t.substring(2), 16);
                }
                return Long.parseUnsignedLong(t);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--to: not an unsigned 64-bit number: '" + text + "' (RFC 5041 §4.2)");
            }
        }

        private static long unsigned(String name, String text, long max) {
            long v;
            try {
                v = Long.decode(text.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(name + ": not a number: '" + text + "'");
            }
            if (v < 0 || v > max) {
                throw new IllegalArgumentException(name + " must be 0.." + max + ": " + text);
            }
            return v;
        }
    }
}
