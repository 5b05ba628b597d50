package org.jwarp.bench;

import java.net.InetAddress;
import java.util.concurrent.TimeUnit;

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
 * round trip (§5.2). CRC32c is on (RFC 5044 §4.4), as negotiated by default. Both ends are one
 * {@link ProviderFixture} connection of the soft provider on the loopback address: the client sends
 * and writes from its tx region and receives and reads into its rx region; the server receives
 * into rx slots and echoes from tx.
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

    private ProviderFixture fixture;
    private QueuePair client;
    private Thread echo;
    private volatile boolean running;
    private final SendRequest wr = new SendRequest();
    private final WorkCompletion[] wcs = {new WorkCompletion(), new WorkCompletion()};

    @Setup(Level.Trial)
    public void setup() throws Exception {
        fixture = new ProviderFixture("soft", InetAddress.getLoopbackAddress().getHostAddress(), 1, 65536, 16);
        client = fixture.client.conns[0].queuePair();
        running = true;
        client.postRecv(RECV, fixture.client.rx, 0, 32768);
        for (int i = 0; i < 4; i++) {
            fixture.server.conns[0].queuePair().postRecv(RECV | i, fixture.server.rx, i * 8192, 8192);
        }
        echo = new Thread(this::echoLoop, "soft-bench-echo");
        echo.setDaemon(true);
        echo.start();
    }

    private void echoLoop() {
        WorkCompletion[] w = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion(), new WorkCompletion()};
        SendRequest s = new SendRequest();
        QueuePair qp = fixture.server.conns[0].queuePair();
        try {
            while (running) {
                int n = fixture.server.cq.await(w, w.length, 100, TimeUnit.MILLISECONDS);
                for (int i = 0; i < n; i++) {
                    if (!w[i].isSuccess()) {
                        return;
                    }
                    if (w[i].opcode == WcOpcode.RECV) {
                        int slot = (int) (w[i].wrId & 0xFF);
                        // echo from a separate area, then re-post, so the peer always finds a buffer
                        fixture.server.tx.buffer().put(40000 + slot * 4096, fixture.server.rx.buffer(), slot * 8192,
                                Math.min(4096, w[i].byteLength));
                        qp.postRecv(w[i].wrId, fixture.server.rx, slot * 8192, 8192);
                        qp.postSend(s.send(slot, fixture.server.tx, 40000 + slot * 4096, w[i].byteLength));
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
            int k = fixture.client.cq.await(wcs, n - got, 5, TimeUnit.SECONDS);
            if (k <= 0) {
                throw new RdmaException("no completion within 5 s");
            }
            for (int i = 0; i < k; i++) {
                if (!wcs[i].isSuccess()) {
                    throw new RdmaException("failed: " + wcs[i]);
                }
                if (wcs[i].opcode == WcOpcode.RECV) {
                    client.postRecv(RECV, fixture.client.rx, 0, 32768);
                }
            }
            got += k;
        }
        return got;
    }

    @Benchmark
    public int sendPingPong() throws Exception {
        client.postSend(wr.send(1, fixture.client.tx, 0, size));
        return reap(2);
    }

    @Benchmark
    public int rdmaWrite() throws Exception {
        client.postSend(wr.write(2, fixture.client.tx, 0, size, fixture.peerRxAddr + 32768, fixture.peerRxKey));
        return reap(1);
    }

    @Benchmark
    public int rdmaRead() throws Exception {
        client.postSend(wr.read(3, fixture.client.rx, 32768, size, fixture.peerTxAddr + 32768, fixture.peerTxKey));
        return reap(1);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws InterruptedException {
        running = false;
        fixture.close();
        echo.join(2000);
    }
}
