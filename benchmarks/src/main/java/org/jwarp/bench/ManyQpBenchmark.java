package org.jwarp.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Send ping-pong RTT (RFC 5040 §4.3 Send) with {@code qps} connections open and used in
 * round-robin order: one shared CQ per side, each call uses the next queue pair. Shows how the
 * per-operation cost grows with the number of active RDMAP streams (reactor selection, cache
 * footprint).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED"})
public class ManyQpBenchmark {
    @Param({"soft"})
    public String provider;

    @Param({"127.0.0.1"})
    public String address;

    @Param({"1", "10", "100", "1000"})
    public int qps;

    @Param({"64"})
    public int size;

    @Param({"await"})
    public String wait;

    private ProviderFixture fixture;
    private ProviderPingPong ops;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        fixture = new ProviderFixture(provider, address, qps, size, 4);
        ops = new ProviderPingPong(fixture, ProviderPingPong.Wait.valueOf(wait.toUpperCase(java.util.Locale.ROOT)),
                ProviderPingPong.Peer.ECHO);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        ops.close();
        fixture.close();
    }

    @Benchmark
    public int rttRoundRobin() throws Exception {
        return ops.sendRtt();
    }
}
