package org.jwarp.bench;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.jwarp.mpa.Crc32c;
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
 * MPA CRC32c (RFC 5044 §4.4) throughput over a direct buffer, next to plain copies of the same
 * bytes: {@code ByteBuffer.put} direct to direct and {@code System.arraycopy} heap to heap. All
 * three report operations per second for {@code size} bytes, so crc/copy is the cost ratio.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class CrcBenchmark {
    @Param({"1456", "65536"})
    int size;

    private final Crc32c crc = new Crc32c();
    private ByteBuffer src;
    private ByteBuffer dst;
    private byte[] srcArray;
    private byte[] dstArray;

    @Setup
    public void setup() {
        src = ByteBuffer.allocateDirect(size);
        dst = ByteBuffer.allocateDirect(size);
        srcArray = new byte[size];
        dstArray = new byte[size];
        for (int i = 0; i < size; i++) {
            src.put(i, (byte) i);
            srcArray[i] = (byte) i;
        }
    }

    @Benchmark
    public int crc32c() {
        return crc.compute(src, 0, size);
    }

    @Benchmark
    public ByteBuffer baselineByteBufferPut() {
        return dst.put(0, src, 0, size);
    }

    @Benchmark
    public byte[] baselineArraycopy() {
        System.arraycopy(srcArray, 0, dstArray, 0, size);
        return dstArray;
    }
}
