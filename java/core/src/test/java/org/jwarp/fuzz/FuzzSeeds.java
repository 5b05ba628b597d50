package org.jwarp.fuzz;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jwarp.ddp.DdpHeader;
import org.jwarp.ground.TermCode;
import org.jwarp.mpa.EnhancedConnectionData;
import org.jwarp.mpa.FpduEncoder;
import org.jwarp.mpa.MpaFrame;
import org.jwarp.mpa.MpaFrameLimits;
import org.jwarp.rdmap.ReadRequestHeader;
import org.jwarp.rdmap.TerminateCodec;

/**
 * Writes the hand-made seeds of the Jazzer fuzz targets (valid frames, FPDUs, DDP segments and
 * Terminate payloads, each with the choices the target reads) into their Inputs directories:
 * {@code java -cp target/test-classes:target/classes org.jwarp.fuzz.FuzzSeeds src/test/resources}.
 * The fuzzer starts from them instead of having to guess the 16-byte MPA key (RFC 5044 §7.1.1).
 */
public final class FuzzSeeds {

    /**
     * A Jazzer {@code FuzzedDataProvider} input: byte arrays are read from the front, integers and
     * booleans from the back (one byte per value for ranges below 256, high byte first for two).
     */
    static final class Input {
        private final ByteArrayOutputStream front = new ByteArrayOutputStream();
        private final List<Byte> back = new ArrayList<>();

        Input pick(int min, int max, int value) {
            long range = (long) max - min;
            int v = value - min;
            if (range > 0xFF) {
                back.add((byte) (v >>> 8));
            }
            if (range > 0) {
                back.add((byte) v);
            }
            return this;
        }

        Input bool(boolean b) {
            back.add((byte) (b ? 1 : 0));
            return this;
        }

        Input bytes(byte[] b) {
            front.writeBytes(b);
            return this;
        }

        byte[] build() {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            out.writeBytes(front.toByteArray());
            for (int i = back.size() - 1; i >= 0; i--) {
                out.write(back.get(i));
            }
            return out.toByteArray();
        }
    }

    private final Path root;

    private FuzzSeeds(Path root) {
        this.root = root;
    }

    public static void main(String[] args) throws IOException {
        FuzzSeeds s = new FuzzSeeds(Path.of(args.length > 0 ? args[0] : "src/test/resources"));
        s.mpaFrames();
        s.fpdus();
        s.ddpSegments();
        s.terminates();
        s.negotiations();
    }

    private void write(String dir, String name, byte[] data) throws IOException {
        Path d = root.resolve(dir);
        Files.createDirectories(d);
        Files.write(d.resolve("seed-" + name), data);
    }

    static byte[] enhancedRequest() {
        return MpaFrame.request().crc(true).enhancedData(new EnhancedConnectionData(true, false, true, true, 16, 16))
                .ulpPrivateData("JWC1hello".getBytes()).build().toBytes();
    }

    static byte[] enhancedReply() {
        return MpaFrame.reply().crc(true).enhancedData(new EnhancedConnectionData(true, false, false, true, 8, 4))
                .ulpPrivateData("JWS1".getBytes()).build().toBytes();
    }

    static byte[] rev1Request() {
        return MpaFrame.request().revision(1).ulpPrivateData(new byte[] {1, 2, 3}).build().toBytes();
    }

    static byte[] clientServerRequest() {
        return MpaFrame.request().crc(true).enhancedData(new EnhancedConnectionData(false, false, false, false, 4, 4))
                .build().toBytes();
    }

    static byte[] rejectReply() {
        return MpaFrame.reply().reject(true).revision(1).ulpPrivateData("busy".getBytes()).build().toBytes();
    }

    private void mpaFrames() throws IOException {
        String dir = "org/jwarp/mpa/MpaFrameReaderFuzzTestInputs/mpaFrameReader_5044_7_1_1";
        byte[][] frames = {enhancedRequest(), enhancedReply(), rev1Request(), clientServerRequest(), rejectReply(),
                MpaFrame.request().marker(true).revision(1).build().toBytes(),
                MpaFrame.request().ulpPrivateData(new byte[512]).build().toBytes()};
        int i = 0;
        for (byte[] f : frames) {
            boolean reply = (f[12] == 'R' && f[13] == 'e' && f[14] == 'p');
            write(dir, "frame" + i, new Input().pick(0, 2, reply ? 1 : 0).bool(true).bool(i % 2 == 0)
                    .pick(1, 64, 1 + (i * 7) % 64).bytes(f).build());
            write(dir, "any" + i, new Input().pick(0, 2, 2).bool(false).bool(false).pick(1, 64, 64).bytes(f).build());
            i++;
        }
        byte[] trailing = ByteBuffer.allocate(enhancedRequest().length + 4).put(enhancedRequest()).putInt(7).array();
        write(dir, "trailing", new Input().pick(0, 2, 0).bool(true).bool(true).pick(1, 64, 5).bytes(trailing).build());
    }

    /** A DDP untagged Send segment (RFC 5041 §4.3) with RDMAP version 1, opcode Send (RFC 5040 §4.2). */
    static byte[] untaggedSegment(int msn, int payload, boolean last) {
        ByteBuffer b = ByteBuffer.allocate(DdpHeader.UNTAGGED_HEADER_LENGTH + payload);
        new DdpHeader().wrap(b, 0).putUntagged(last, 0x43, 0, 0, msn, 0);
        for (int i = 0; i < payload; i++) {
            b.put(DdpHeader.UNTAGGED_HEADER_LENGTH + i, (byte) i);
        }
        return b.array();
    }

    /** A DDP tagged Write segment (RFC 5041 §4.2) to {@code stag} at {@code to}. */
    static byte[] taggedSegment(int stag, long to, int payload, boolean last) {
        ByteBuffer b = ByteBuffer.allocate(DdpHeader.TAGGED_HEADER_LENGTH + payload);
        new DdpHeader().wrap(b, 0).putTagged(last, 0x40, stag, to);
        return b.array();
    }

    private static byte[] fpduStream(boolean crc, byte[]... ulpdus) {
        FpduEncoder enc = new FpduEncoder(crc, false);
        ByteBuffer out = ByteBuffer.allocate(70_000);
        for (byte[] u : ulpdus) {
            out.put(enc.ulpduIndex(out), u);
            enc.finish(out, u.length);
        }
        byte[] r = new byte[out.position()];
        out.get(0, r);
        return r;
    }

    private void fpdus() throws IOException {
        String dir = "org/jwarp/mpa/FpduDecoderFuzzTestInputs/fpduDecoder_5044_4";
        byte[] a = untaggedSegment(1, 10, true);
        byte[] b = taggedSegment(0x100, 0, 33, true);
        for (boolean crc : new boolean[] {true, false}) {
            byte[] s = fpduStream(crc, a, b, a);
            write(dir, "three-" + crc, new Input().bool(crc).bool(false).pick(1, 16, 3).pick(1, 4096, 5)
                    .pick(1, 4096, 17).pick(1, 4096, 4096).bytes(s).build());
            byte[] cut = java.util.Arrays.copyOf(s, s.length - 3);
            write(dir, "partial-" + crc, new Input().bool(crc).bool(false).pick(1, 16, 1).pick(1, 4096, 2)
                    .bytes(cut).build());
        }
        byte[] big = fpduStream(true, new byte[3000]);
        write(dir, "big", new Input().bool(true).bool(false).pick(1, 16, 2).pick(1, 4096, 1000).pick(1, 4096, 7)
                .bytes(big).build());
        write(dir, "markers", new Input().bool(false).bool(true).pick(1, 16, 1).pick(1, 4096, 100)
                .bytes(new byte[600]).build());
    }

    private void ddpSegments() throws IOException {
        String dir = "org/jwarp/ddp/DdpReceiverFuzzTestInputs/ddpReceiver_5041_7_1";
        byte[][] untagged = {untaggedSegment(1, 100, false), untaggedSegment(1, 50, true), untaggedSegment(2, 256, true)};
        Input in = new Input().bool(true).pick(1, 4, 4).pick(0, 12, untagged.length);
        for (byte[] s : untagged) {
            in.pick(0, 7, 5).pick(0, 600, s.length).bytes(s).pick(0, 16, 3);
        }
        write(dir, "untagged", in.build());
        // tagged Writes: the fixer puts the registered STag in; the TO walks the region and past it
        long[] tos = {0, 4000, 4096};
        Input t = new Input().bool(true).pick(1, 4, 1).pick(0, 12, tos.length);
        for (long to : tos) {
            byte[] s = taggedSegment(0, to, 96, to == 4096);
            t.pick(0, 7, 3).pick(0, 600, s.length).bytes(s).pick(0, 16, 0);
        }
        write(dir, "tagged", t.build());
        // out of order: a later MO first
        ByteBuffer ooo = ByteBuffer.wrap(untaggedSegment(1, 40, true));
        ooo.putInt(DdpHeader.MO_OFFSET, 100);
        byte[] first = untaggedSegment(1, 100, false);
        write(dir, "out-of-order", new Input().bool(false).pick(1, 4, 2).pick(0, 12, 2)
                .pick(0, 7, 5).pick(0, 600, ooo.capacity()).bytes(ooo.array()).pick(0, 16, 1)
                .pick(0, 7, 5).pick(0, 600, first.length).bytes(first).pick(0, 16, 1).build());
    }

    private void terminates() throws IOException {
        String dir = "org/jwarp/rdmap/TerminateCodecFuzzTestInputs/terminateCodec_5040_4_8";
        ByteBuffer hdrs = ByteBuffer.allocate(64);
        new DdpHeader().wrap(hdrs, 0).putUntagged(true, 0x41, 0, 1, 3, 0);
        ReadRequestHeader.put(hdrs, DdpHeader.UNTAGGED_HEADER_LENGTH, 0x10, 0x2000, 64, 0x20, 0x3000);
        Object[][] cases = {
            {TermCode.MPA_CRC_ERROR, 0, 0, false},
            {TermCode.DDP_UNTAGGED_MSN_NO_BUFFER, DdpHeader.UNTAGGED_HEADER_LENGTH, 0, true},
            {TermCode.RDMAP_INVALID_STAG, DdpHeader.UNTAGGED_HEADER_LENGTH, ReadRequestHeader.LENGTH, true},
            {TermCode.DDP_TAGGED_INVALID_STAG, DdpHeader.TAGGED_HEADER_LENGTH, 0, false},
        };
        int i = 0;
        for (Object[] c : cases) {
            ByteBuffer out = ByteBuffer.allocate(TerminateCodec.MAX_PAYLOAD_LENGTH);
            if ((int) c[1] == DdpHeader.TAGGED_HEADER_LENGTH) {
                new DdpHeader().wrap(hdrs, 0).putTagged(true, 0x40, 0x77, 12);
            }
            int n = TerminateCodec.encode(out, 0, (TermCode) c[0], 60, hdrs, 0, (int) c[1], (int) c[2], (boolean) c[3]);
            byte[] p = new byte[n];
            out.get(0, p);
            write(dir, "term" + i++, new Input().pick(0, 8, i % 3).bytes(p).build());
        }
        // Linux siw's layout: layer/etype nibbles swapped, Hdrct bits at 0x0100..0x0400
        write(dir, "siw", new Input().pick(0, 8, 0).bytes(new byte[] {0x21, 0x02, 0x00, 0x00}).build());
    }

    private void negotiations() throws IOException {
        String dir = "org/jwarp/negotiation/NegotiationFuzzTestInputs/negotiation_6581_9";
        byte[][] requests = {enhancedRequest(), rev1Request(), clientServerRequest()};
        int i = 0;
        for (byte[] req : requests) {
            for (boolean acceptP2p : new boolean[] {true, false}) {
                // responder: ord (bool, int), requireP2p, maxIrd (bool, int), requiredOrd, rtr, enhanced, policy,
                // acceptP2p, crc, markers, pd length; then pd bytes and the frame from the front
                Input in = new Input().bool(true).bool(true).pick(1, 64, 64)
                        .bool(false).pick(0, 300, 8).bool(false).bool(false).pick(0, 300, 16).pick(0, 8, i % 3)
                        .pick(1, 7, 6).bool(true).bool(i % 2 == 0).bool(acceptP2p).bool(true).bool(false)
                        .pick(0, 40, 4).bytes("JWS1".getBytes()).bytes(req);
                write(dir, "responder" + i++, in.build());
            }
        }
        byte[][] replies = {enhancedReply(), rejectReply(),
                MpaFrame.reply().revision(1).ulpPrivateData(new byte[] {9}).build().toBytes(),
                MpaFrame.reply().crc(true).enhancedData(new EnhancedConnectionData(false, false, false, false, 2, 2))
                        .build().toBytes()};
        int j = 0;
        for (byte[] rep : replies) {
            // initiator: p2p, ird (bool, int), ord (bool, int), rtr, enhanced, crc, pd length, fallback
            Input in = new Input().bool(false).bool(true).pick(1, 64, 64)
                    .bool(true).bool(false).pick(0, 300, 16).bool(false).pick(0, 300, 8).pick(1, 7, 6).bool(true)
                    .bool(true).pick(0, 40, 9).bytes("JWC1hello".getBytes()).bool(true).bytes(rep);
            write(dir, "initiator" + j++, in.build());
        }
    }
}
