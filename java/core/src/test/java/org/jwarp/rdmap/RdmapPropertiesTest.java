package org.jwarp.rdmap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Label;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.jwarp.memory.StagAccess;
import org.jwarp.memory.StagRegion;

/** RFC 5040 §5 end to end over the FPDU stream, and Terminate decoder fuzzing. */
class RdmapPropertiesTest {

    @Property(tries = 60)
    @Label("RFC 5040 §5: random Sends, Writes and Reads over random MULPDUs and chunkings arrive intact and complete in order")
    void randomTrafficArrivesIntact_5040_5(@ForAll @IntRange(min = 128, max = 9000) int mulpdu, @ForAll boolean crc,
            @ForAll boolean markers, @ForAll @IntRange(min = 1, max = 12) int ops, @ForAll long seed) {
        int mul = markers ? Math.min(mulpdu, 16384) : mulpdu;
        RdmapSettings s = new RdmapSettings(mul, crc, markers, 4, 4, 64, 64);
        RdmapPair p = new RdmapPair(s, s, seed);
        Random r = new Random(seed);
        int size = 40_000;
        ByteBuffer bMem = ByteBuffer.allocateDirect(size);
        StagRegion bMr = p.stags.register(p.pdB, bMem, 0, size, 0x5000, StagAccess.REMOTE_WRITE | StagAccess.REMOTE_READ);
        ByteBuffer aMem = ByteBuffer.allocateDirect(size);
        StagRegion aMr = p.stags.register(p.pdA, aMem, 0, size, 0x9_0000, StagAccess.LOCAL_WRITE);
        byte[] initial = new byte[size];
        r.nextBytes(initial);
        bMem.put(0, initial);
        byte[] expectB = initial.clone();
        byte[] expectA = new byte[size];
        List<byte[]> sends = new ArrayList<>();
        ByteBuffer rq = ByteBuffer.allocateDirect(ops * 6000);
        List<Long> posted = new ArrayList<>();
        for (int i = 0; i < ops; i++) {
            int kind = r.nextInt(3);
            int len = r.nextInt(6000);
            // Writes go to B's lower half, Reads source its upper half: a Read Response is fetched when it is
            // sent, so a later Write to the same bytes would race it (RFC 5040 §5.5 leaves that to fencing).
            int half = size / 2;
            int off = kind == 1 ? r.nextInt(half - len + 1) : half + r.nextInt(half - len + 1);
            byte[] data = new byte[len];
            r.nextBytes(data);
            switch (kind) {
                case 0 -> {
                    p.b.postReceive(i, rq, i * 6000, 6000);
                    sends.add(data);
                    p.a.postSend(i, RdmapOpcode.SEND, RdmapEndpointTest.direct(data), 0, len, 0, true);
                }
                case 1 -> {
                    System.arraycopy(data, 0, expectB, off, len);
                    p.a.postWrite(i, RdmapEndpointTest.direct(data), 0, len, bMr.stag(), 0x5000 + off, true);
                }
                default -> {
                    int dst = r.nextInt(size - len + 1);
                    System.arraycopy(expectB, off, expectA, dst, len);
                    p.a.postRead(i, aMr.stag(), 0x9_0000 + dst, len, bMr.stag(), 0x5000 + off, true);
                }
            }
            posted.add((long) i);
            if (r.nextInt(3) == 0) {
                p.pump();
            }
        }
        p.pump();
        assertTrue(p.evA.localErrors.isEmpty(), () -> "A errors " + p.evA.localErrors);
        assertTrue(p.evB.localErrors.isEmpty(), () -> "B errors " + p.evB.localErrors);
        assertEquals(posted, p.evA.sendCompletions.stream().map(c -> c[0]).toList(), "completions in posting order");
        assertEquals(sends.size(), p.evB.receives.size());
        for (int i = 0; i < sends.size(); i++) {
            long[] c = p.evB.receives.get(i);
            assertEquals(sends.get(i).length, c[2]);
            assertArrayEquals(sends.get(i), RdmapEndpointTest.read(rq, (int) c[0] * 6000, (int) c[2]));
        }
        assertArrayEquals(expectB, RdmapEndpointTest.read(bMem, 0, size));
        // Only bytes some Read targeted are defined in A's memory; the rest stays zero.
        assertArrayEquals(expectA, RdmapEndpointTest.read(aMem, 0, size));
    }

    @Property(tries = 1000)
    @Label("Terminate decoder fuzz: random payloads decode or throw RdmapFormatException, nothing else")
    void terminateDecoderFuzz(@ForAll("payloads") byte[] payload) {
        ByteBuffer b = ByteBuffer.wrap(payload);
        try {
            TerminateMessage t = TerminateCodec.decode(b, 0, payload.length);
            assertTrue(t.ddpHeader().length == 0 || t.ddpHeader().length == 14 || t.ddpHeader().length == 18);
        } catch (RdmapFormatException expected) {
            assertTrue(expected.getMessage().contains("RFC 5040"));
        }
    }

    @Provide
    Arbitrary<byte[]> payloads() {
        return Arbitraries.bytes().array(byte[].class).ofMinSize(0).ofMaxSize(60);
    }

    @Property(tries = 300)
    @Label("RDMAP engine fuzz: random bytes after a valid stream start never throw and never write outside regions")
    void engineFuzz(@ForAll("noise") byte[] noise, @ForAll boolean crc, @ForAll long seed) {
        RdmapSettings s = new RdmapSettings(1000, crc, false, 2, 2, 8, 8);
        RdmapPair p = new RdmapPair(s, s, seed);
        ByteBuffer guarded = ByteBuffer.allocateDirect(300);
        for (int i = 0; i < 300; i++) {
            guarded.put(i, (byte) 0xEE);
        }
        StagRegion mr = p.stags.register(p.pdB, guarded, 50, 200, 0, StagAccess.ALL);
        ByteBuffer rq = ByteBuffer.allocateDirect(300);
        for (int i = 0; i < 300; i++) {
            rq.put(i, (byte) 0xEE);
        }
        p.b.postReceive(1, rq, 50, 200);
        // Plausible framing: FPDUs built from noise so the decoder reaches the DDP and RDMAP checks.
        Random r = new Random(seed);
        int off = 0;
        while (off < noise.length) {
            int len = Math.min(noise.length - off, 14 + r.nextInt(60));
            ByteBuffer seg = ByteBuffer.allocateDirect(len);
            seg.put(0, noise, off, len);
            if (len >= 6 && r.nextBoolean()) {
                seg.put(0, (byte) ((seg.get(0) & 0xC0) | 1));
                seg.put(1, (byte) (0x40 | (seg.get(1) & 0x0F)));
                if ((seg.get(0) & 0x80) != 0 && r.nextBoolean()) {
                    seg.putInt(2, mr.stag());
                }
            }
            RdmapEndpointTest.inject(p, seg, crc);
            off += len;
        }
        p.b.transmit(ByteBuffer.allocateDirect(1 << 16));
        assertTrue(p.evB.localErrors.size() <= 1);
        for (int i = 0; i < 50; i++) {
            for (ByteBuffer b : new ByteBuffer[] {guarded, rq}) {
                assertEquals((byte) 0xEE, b.get(i));
                assertEquals((byte) 0xEE, b.get(299 - i));
            }
        }
    }

    @Provide
    Arbitrary<byte[]> noise() {
        return Arbitraries.bytes().array(byte[].class).ofMinSize(0).ofMaxSize(600);
    }
}
