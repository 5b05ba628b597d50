package org.jwarp.bench;

import java.util.concurrent.TimeUnit;

import org.jwarp.soft.SoftConfig;
import org.jwarp.verbs.QueuePair;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WorkCompletion;
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
 * Latency of the embedded provider over loopback, one operation outstanding (ib_*_lat style):
 * Send ping-pong round trip (RFC 5040 §5.3; a responder thread echoes), RDMA Write post to
 * completion (§5.1; completes once the FPDUs are handed to TCP, as siw does) and RDMA Read
 * round trip (§5.2). CRC32c is on (RFC 5044 §4.4), as negotiated by default.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED"})
public class SoftLatencyBenchmark {
    private static final long RECV = 1L << 40;

    @Param({"64", "4096"})
    int size;

    private SoftPair pair;
    private Thread echo;
    private volatile boolean running;
    private final SendRequest wr = new SendRequest();
    private final WorkCompletion[] wcs = {new WorkCompletion(), new WorkCompletion()};

    @Setup(Level.Trial)
    public void setup() throws Exception {
        pair = new SoftPair(SoftConfig.defaults(), 65536, 16);
        running = true;
        pair.initiator.queuePair().postRecv(RECV, pair.bufA, 32768, 32768);
        for (int i = 0; i < 4; i++) {
            pair.responder.queuePair().postRecv(RECV | i, pair.bufB, i * 8192, 8192);
        }
        echo = new Thread(this::echoLoop, "soft-bench-echo");
        echo.setDaemon(true);
        echo.start();
    }

    private void echoLoop() {
        WorkCompletion[] w = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion(), new WorkCompletion()};
        SendRequest s = new SendRequest();
        QueuePair qp = pair.responder.queuePair();
        try {
            while (running) {
                int n = pair.cqB.await(w, w.length, 100, TimeUnit.MILLISECONDS);
                for (int i = 0; i < n; i++) {
                    if (!w[i].isSuccess()) {
                        return;
                    }
                    if (w[i].opcode == WcOpcode.RECV) {
                        int slot = (int) (w[i].wrId & 0xFF);
                        // echo from a separate area, then re-post, so the peer always finds a buffer
                        pair.bufB.buffer().put(40000 + slot * 4096, pair.bufB.buffer(), slot * 8192,
                                Math.min(4096, w[i].byteLength));
                        qp.postRecv(w[i].wrId, pair.bufB, slot * 8192, 8192);
                        qp.postSend(s.send(slot, pair.bufB, 40000 + slot * 4096, w[i].byteLength));
                    }
                }
            }
        } catch (Exception e) {
            // benchmark ends
        }
    }

    private int reap(int n) throws RdmaException, InterruptedException {
        int got = 0;
        while (got < n) {
            int k = pair.cqA.await(wcs, n - got, 5, TimeUnit.SECONDS);
            SoftPair.check(k > 0, "no completion within 5 s");
            for (int i = 0; i < k; i++) {
                SoftPair.check(wcs[i].isSuccess(), "failed: " + wcs[i]);
                if (wcs[i].opcode == WcOpcode.RECV) {
                    pair.initiator.queuePair().postRecv(RECV, pair.bufA, 32768, 32768);
                }
            }
            got += k;
        }
        return got;
    }

    @Benchmark
    public int sendPingPong() throws Exception {
        pair.initiator.queuePair().postSend(wr.send(1, pair.bufA, 0, size));
        return reap(2);
    }

    @Benchmark
    public int rdmaWrite() throws Exception {
        pair.initiator.queuePair().postSend(wr.write(2, pair.bufA, 0, size, pair.bufB.address() + 32768,
                pair.bufB.rkey()));
        return reap(1);
    }

    @Benchmark
    public int rdmaRead() throws Exception {
        pair.initiator.queuePair().postSend(wr.read(3, pair.bufA, 0, size, pair.bufB.address() + 32768,
                pair.bufB.rkey()));
        return reap(1);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws InterruptedException {
        running = false;
        pair.close();
        echo.join(2000);
    }
}
