package org.jwarp.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * RDMA Write bandwidth (RFC 5040 §4.3 tagged RDMA Write, ib_write_bw's scheme): batches of
 * {@link #BATCH} Writes of {@code size} bytes with {@code window} outstanding; one benchmark
 * operation is one Write (JMH divides by the batch). Bandwidth = size / time per op; compare with
 * {@link TcpBaselineBenchmark#stream} (a continuous TCP stream). {@code scripts/bench} uses
 * {@link BenchMain} instead; this stays for profiling with JMH's profilers.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED"})
public class ProviderBandwidthBenchmark {
    static final int BATCH = 64;

    @Param({"soft"})
    public String provider;

    @Param({"127.0.0.1"})
    public String address;

    @Param({"1048576"})
    public int size;

    @Param({"4"})
    public int window;

    @Param({"await"})
    public String wait;

    private ProviderFixture fixture;
    private ProviderPingPong ops;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        fixture = new ProviderFixture(provider, address, 1, size, Math.max(16, window * 2 + 8),
                !"disni".equals(provider), true);
        ops = new ProviderPingPong(fixture, ProviderPingPong.Wait.valueOf(wait.toUpperCase(java.util.Locale.ROOT)),
                ProviderPingPong.Peer.NONE);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        ops.close();
        fixture.close();
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long writeBandwidth() throws Exception {
        return ops.bandwidth(ProviderPingPong.BwOp.WRITE, BATCH, window);
    }
}
