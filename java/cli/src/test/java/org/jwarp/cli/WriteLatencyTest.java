package org.jwarp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.HdrHistogram.Histogram;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.Rdma;
import org.jwarp.verbs.RdmaProvider;
import org.jwarp.verbs.SendOpcode;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The client's write latency is ib_write_lat's Write ping-pong (RFC 5040 §5.1 RDMA Write both
 * ways, each side polling the last byte of its own buffer), not a Write's post-to-completion time.
 */
class WriteLatencyTest {

    @Test
    @DisplayName("write latency: the server's Writes land in the client's receive area, last byte = iteration")
    void writeLatencyIsAWritePingPong_5040_5_1() throws Exception {
        ConnectionParameters params = ConnectionParameters.builder().build();
        int size = 300;
        int iters = 77;
        try (RdmaProvider prov = Rdma.open("soft");
             Device dev = prov.open(InetAddress.getLoopbackAddress());
             Listener l = dev.connectionManager().listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 4)) {
            CompletableFuture<ServerCommand.Responder> accepted = new CompletableFuture<>();
            CompletableFuture<Long> served = new CompletableFuture<>();
            Thread t = new Thread(() -> {
                try {
                    ServerCommand.Responder r = ServerCommand.Responder.accept(dev, l.next(Duration.ofSeconds(10)),
                            params, size, 1 << 20);
                    accepted.complete(r);
                    served.complete(r.serve(null));
                } catch (Throwable e) {
                    accepted.completeExceptionally(e);
                    served.completeExceptionally(e);
                }
            });
            t.setDaemon(true);
            t.start();
            try (ClientCommand.Workload w = ClientCommand.Workload.connect(dev, (InetSocketAddress) l.localAddress(),
                    params, size, 4, Duration.ofSeconds(10))) {
                ServerCommand.Responder r = accepted.get(10, TimeUnit.SECONDS);
                assertNotEquals((byte) iters, w.receivedLastByte(size), "not the expected byte before the test");
                Histogram h = w.latency(SendOpcode.RDMA_WRITE, size, iters, null);
                assertEquals(iters, h.getTotalCount());
                assertEquals((byte) iters, w.receivedLastByte(size),
                        "the server answered the last Write with a Write carrying the iteration number");
                assertTrue(h.getValueAtPercentile(50) > 0);
                // the phase is a control exchange: the Send ping-pong afterwards still works
                Histogram s = w.latency(SendOpcode.SEND, size, 10, null);
                assertEquals(10, s.getTotalCount());
                r.stop();
            }
            assertEquals(10L, served.get(10, TimeUnit.SECONDS), "only the 10 Sends count as answered");
        }
    }
}
