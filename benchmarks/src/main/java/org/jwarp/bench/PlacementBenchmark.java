package org.jwarp.bench;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.jwarp.ddp.DdpHeader;
import org.jwarp.ddp.DdpReceiveHandler;
import org.jwarp.ddp.DdpReceiver;
import org.jwarp.ddp.DdpSegmenter;
import org.jwarp.memory.StagAccess;
import org.jwarp.memory.StagRegion;
import org.jwarp.memory.StagDomain;
import org.jwarp.memory.StagTable;
import org.jwarp.rdmap.RdmapEndpoint;
import org.jwarp.rdmap.RdmapListener;
import org.jwarp.rdmap.RdmapSettings;
import org.jwarp.ground.TermCode;
import org.jwarp.rdmap.TerminateMessage;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * DDP tagged placement (RFC 5041 §5.2 and §7.1 checks) and a whole RDMA Write through the RDMAP
 * engine (segment + MPA framing + CRC + decode + validate + place), next to plain copies of the
 * same message bytes. Every benchmark moves one message of {@code size} bytes per operation, so
 * ops/s ratios read directly: placement / baselineByteBufferPut is the cost of validation and
 * headers, rdmaWrite* / baselineByteBufferPut the cost of the whole wire path (two copies:
 * source to FPDU, FPDU to sink).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class PlacementBenchmark {
    @Param({"4096", "65536"})
    int size;

    @Param({"1450"})
    int mulpdu;

    private DdpReceiver rx;
    private ByteBuffer segments;
    private int[] segIndex;
    private int[] segLength;
    private ByteBuffer payload;
    private ByteBuffer sink;
    private byte[] payloadArray;
    private byte[] sinkArray;

    private RdmapEndpoint sender;
    private RdmapEndpoint sinkEndpoint;
    private RdmapEndpoint senderNoCrc;
    private RdmapEndpoint sinkNoCrc;
    private ByteBuffer wire;
    private int stag;
    private int stagNoCrc;

    /** The benchmarks ignore completions; an error would fail the run. */
    static final class Quiet implements RdmapListener, DdpReceiveHandler {
        @Override
        public void onSendCompletion(long wrId, int opcode, int byteLength) {
        }

        @Override
        public void onReceiveCompletion(long wrId, int opcode, int byteLength, int invalidatedStag) {
        }

        @Override
        public void onLocalError(TermCode code, String detail) {
            throw new IllegalStateException(code + ": " + detail);
        }

        @Override
        public void onPeerTerminate(TerminateMessage term) {
            throw new IllegalStateException(term.toString());
        }

        @Override
        public TermCode checkTagged(int rsvdUlp, int stag, long to, int payloadLength) {
            return null;
        }

        @Override
        public int taggedAccess(int rsvdUlp) {
            return StagAccess.REMOTE_WRITE;
        }

        @Override
        public TermCode checkUntagged(int qn, int rsvdUlp, int msn, int payloadLength) {
            return null;
        }

        @Override
        public void onTaggedMessage(int rsvdUlp, int stag, int length) {
        }

        @Override
        public void onUntaggedMessage(int qn, int msn, int rsvdUlp, int rsvdUlp32, long cookie, ByteBuffer buffer,
                int offset, int length) {
        }

        @Override
        public void onError(TermCode code, ByteBuffer segment, int index, int length) {
            throw new IllegalStateException(code.toString());
        }
    }

    @Setup
    public void setup() {
        StagDomain pd = new StagDomain();
        StagTable stags = new StagTable(16);
        sink = ByteBuffer.allocateDirect(size);
        StagRegion mr = stags.register(pd, sink, 0, size, 0, StagAccess.REMOTE_WRITE);
        Quiet quiet = new Quiet();
        rx = new DdpReceiver(pd, stags, new int[] {1}, quiet);
        int max = DdpSegmenter.maxPayload(true, mulpdu);
        int n = (int) DdpSegmenter.segmentCount(size, max);
        segments = ByteBuffer.allocateDirect(size + n * DdpHeader.TAGGED_HEADER_LENGTH);
        segIndex = new int[n];
        segLength = new int[n];
        DdpHeader h = new DdpHeader();
        int w = 0;
        for (int i = 0; i < n; i++) {
            long off = (long) i * max;
            int len = DdpSegmenter.segmentLength(size, off, max);
            h.wrap(segments, w).putTagged(DdpSegmenter.isLast(size, off, max), 0x40, mr.stag(), off);
            for (int j = 0; j < len; j++) {
                segments.put(w + DdpHeader.TAGGED_HEADER_LENGTH + j, (byte) (off + j));
            }
            segIndex[i] = w;
            segLength[i] = DdpHeader.TAGGED_HEADER_LENGTH + len;
            w += segLength[i];
        }
        payload = ByteBuffer.allocateDirect(size);
        payloadArray = new byte[size];
        sinkArray = new byte[size];

        StagDomain pdB = new StagDomain();
        ByteBuffer sinkB = ByteBuffer.allocateDirect(size);
        stag = stags.register(pdB, sinkB, 0, size, 0, StagAccess.REMOTE_WRITE).stag();
        RdmapSettings crcOn = new RdmapSettings(mulpdu, true, false, 4, 4, 64, 64);
        RdmapSettings crcOff = new RdmapSettings(mulpdu, false, false, 4, 4, 64, 64);
        sender = new RdmapEndpoint(crcOn, new StagDomain(), stags, quiet);
        sinkEndpoint = new RdmapEndpoint(crcOn, pdB, stags, quiet);
        StagDomain pdC = new StagDomain();
        stagNoCrc = stags.register(pdC, ByteBuffer.allocateDirect(size), 0, size, 0, StagAccess.REMOTE_WRITE).stag();
        senderNoCrc = new RdmapEndpoint(crcOff, new StagDomain(), stags, quiet);
        sinkNoCrc = new RdmapEndpoint(crcOff, pdC, stags, quiet);
        wire = ByteBuffer.allocateDirect(2 * size + 64 * 1024);
    }

    @Benchmark
    public long placement() {
        for (int i = 0; i < segIndex.length; i++) {
            rx.receive(segments, segIndex[i], segLength[i]);
        }
        return rx.segmentCount();
    }

    @Benchmark
    public int rdmaWriteCrc() {
        return writeOnce(sender, sinkEndpoint, stag);
    }

    @Benchmark
    public int rdmaWriteNoCrc() {
        return writeOnce(senderNoCrc, sinkNoCrc, stagNoCrc);
    }

    private int writeOnce(RdmapEndpoint from, RdmapEndpoint to, int target) {
        from.postWrite(0, payload, 0, size, target, 0, false);
        wire.clear();
        int n = from.transmit(wire);
        wire.flip();
        to.receive(wire);
        return n;
    }

    @Benchmark
    public ByteBuffer baselineByteBufferPut() {
        return sink.put(0, payload, 0, size);
    }

    @Benchmark
    public byte[] baselineArraycopy() {
        System.arraycopy(payloadArray, 0, sinkArray, 0, size);
        return sinkArray;
    }
}
