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
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * Round-trip latency of RDMAP operations (RFC 5040 §4.3: Send, RDMA Write, RDMA Read) through
 * the transport-neutral verbs API, for any provider: {@code -p provider=soft|disni
 * -p address=127.0.0.1|10.77.0.1}. SampleTime gives the p50/p99/p99.9 distribution.
 * Semantics are perftest's (see {@link ProviderPingPong}): {@code sendRtt} is ib_send_lat's
 * ping-pong, {@code writeRtt} ib_write_lat's (Writes both ways, each side polls the last byte
 * of its buffer; no Send), {@code readRtt} one Read post to completion. {@code wait=spin}
 * busy-polls the CQs as perftest does; {@code wait=await} blocks in {@code CompletionQueue.await}.
 * {@code scripts/bench} uses {@link BenchMain}; this stays for JMH's profilers.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED"})
public class ProviderLatencyBenchmark {
    @Param({"soft"})
    public String provider;

    @Param({"127.0.0.1"})
    public String address;

    @Param({"64"})
    public int size;

    @Param({"await"})
    public String wait;

    private ProviderFixture fixture;
    private ProviderPingPong ops;

    @Setup(Level.Trial)
    public void setUp(BenchmarkParams params) throws Exception {
        String method = params.getBenchmark();
        ProviderPingPong.Peer peer = method.endsWith("readRtt") ? ProviderPingPong.Peer.NONE
                : method.endsWith("writeRtt") ? ProviderPingPong.Peer.WRITE_POLL : ProviderPingPong.Peer.ECHO;
        ProviderPingPong.Wait w = ProviderPingPong.Wait.valueOf(wait.toUpperCase(java.util.Locale.ROOT));
        fixture = new ProviderFixture(provider, address, 1, size, 16, !"disni".equals(provider), true);
        ops = new ProviderPingPong(fixture, w, peer);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        ops.close();
        fixture.close();
    }

    @Benchmark
    public int sendRtt() throws Exception {
        return ops.sendRtt();
    }

    @Benchmark
    public int writeRtt() throws Exception {
        return ops.writeRtt();
    }

    @Benchmark
    public int readRtt() throws Exception {
        return ops.readRtt();
    }
}
