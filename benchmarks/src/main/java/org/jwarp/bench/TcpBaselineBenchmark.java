package org.jwarp.bench;

import java.io.IOException;
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
 * Baseline: raw NIO TCP over loopback, blocking. {@code rtt} is a ping-pong of {@code size} bytes
 * (compare with the soft provider's Send or Write ping-pong); {@code stream} is a continuous
 * stream of {@link ProviderBandwidthBenchmark#BATCH} messages per invocation (compare with
 * {@link ProviderBandwidthBenchmark}).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED"})
public class TcpBaselineBenchmark {
    @Param({"64"})
    public int size;

    private TcpBaseline echo;
    private TcpBaseline sink;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        echo = new TcpBaseline(size, TcpBaseline.Mode.ECHO, false);
        sink = new TcpBaseline(size, TcpBaseline.Mode.SINK, false);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        echo.close();
        sink.close();
    }

    @Benchmark
    public int rtt() throws IOException {
        return echo.pingPong();
    }

    @Benchmark
    @OperationsPerInvocation(ProviderBandwidthBenchmark.BATCH)
    public long stream() throws IOException {
        return sink.stream(ProviderBandwidthBenchmark.BATCH);
    }
}
