package org.jwarp.bench;

import java.util.concurrent.TimeUnit;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionRequest;
import org.jwarp.verbs.RdmaTimeoutException;
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
 * Connection setup cost: one operation is a full connect (TCP handshake, MPA Request/Reply with
 * the RFC 6581 enhanced negotiation and RTR, QP to RTS) followed by a close; an acceptor thread
 * accepts every request and closes its end. Connections per second = 1e6 / mean µs per op.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED"})
public class ConnectionSetupBenchmark {
    @Param({"soft"})
    public String provider;

    @Param({"127.0.0.1"})
    public String address;

    private ProviderFixture fixture;
    private Thread acceptor;
    private volatile boolean running;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        fixture = new ProviderFixture(provider, address, 0, 64, 4);
        running = true;
        acceptor = new Thread(this::acceptLoop, "bench-acceptor");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    private void acceptLoop() {
        Connection[] recent = new Connection[4];
        int k = 0;
        try {
            while (running) {
                ConnectionRequest r;
                try {
                    r = fixture.listener.next(java.time.Duration.ofMillis(200));
                } catch (RdmaTimeoutException e) {
                    continue;
                }
                Connection c = r.accept(fixture.server.qp(4), ProviderFixture.params(true));
                // Close the end accepted a few connections ago: the initiator has long finished with it.
                if (recent[k] != null) {
                    recent[k].close();
                }
                recent[k] = c;
                k = (k + 1) % recent.length;
            }
        } catch (Exception e) {
            if (running) {
                org.slf4j.LoggerFactory.getLogger(ConnectionSetupBenchmark.class).error("acceptor failed", e);
            }
        } finally {
            for (Connection c : recent) {
                if (c != null) {
                    c.close();
                }
            }
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws InterruptedException {
        running = false;
        acceptor.join(2000);
        fixture.close();
    }

    @Benchmark
    public boolean connectAndClose() throws Exception {
        Connection c = fixture.device.connectionManager().connect(fixture.listener.localAddress(),
                fixture.client.qp(4), ProviderFixture.params(true), ProviderFixture.TIMEOUT);
        boolean open = c.isOpen();
        c.close();
        return open;
    }
}
