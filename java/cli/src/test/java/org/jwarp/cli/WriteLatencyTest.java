package org.jwarp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.HdrHistogram.Histogram;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.CompletionQueue;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.ProtectionDomain;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.Rdma;
import org.jwarp.verbs.RdmaProvider;
import org.jwarp.verbs.SendOpcode;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WorkCompletion;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The client's write latency is ib_write_lat's Write ping-pong (RFC 5040 §5.1 RDMA Write both
 * ways, each side polling the last byte of its own buffer), not a Write's post-to-completion time.
 */
class WriteLatencyTest {

    /** The jwarp server's responder for one connection, accepted and served on a daemon thread. */
    private record Server(CompletableFuture<Responder> accepted, CompletableFuture<Long> served) {
        static Server start(Device dev, Listener l, ConnectionParameters params, int size) {
            Server s = new Server(new CompletableFuture<>(), new CompletableFuture<>());
            Thread t = new Thread(() -> {
                try {
                    Responder r = Responder.accept(dev, l.next(Duration.ofSeconds(10)),
                            params, size, 1 << 20);
                    s.accepted.complete(r);
                    s.served.complete(r.serve(null));
                } catch (Throwable e) {
                    s.accepted.completeExceptionally(e);
                    s.served.completeExceptionally(e);
                }
            });
            t.setDaemon(true);
            t.start();
            return s;
        }
    }

    @Test
    @DisplayName("write latency: the server's Writes land in the client's receive area, last byte = iteration")
    void writeLatencyIsAWritePingPong_5040_5_1() throws Exception {
        ConnectionParameters params = ConnectionParameters.builder().build();
        int size = 300;
        int iters = 77;
        try (RdmaProvider prov = Rdma.open("soft");
             Device dev = prov.open(InetAddress.getLoopbackAddress());
             Listener l = dev.connectionManager().listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 4)) {
            Server server = Server.start(dev, l, params, size);
            try (Workload w = Workload.connect(dev, (InetSocketAddress) l.localAddress(),
                    params, size, 4, Duration.ofSeconds(10))) {
                Responder r = server.accepted.get(10, TimeUnit.SECONDS);
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
            assertEquals(10L, server.served.get(10, TimeUnit.SECONDS), "only the 10 Sends count as answered");
        }
    }

    /**
     * A Send that reaches the server while it reaps its last write-latency Write is a Send like
     * any other (RFC 5040 §5.3): it is echoed, not counted as one of the Write completions. The
     * client chains its last Write and the next Send, so the Send's receive completion is in the
     * server's CQ when the server reaps that Write.
     */
    @Test
    @DisplayName("write latency: a Send arriving while the server reaps its last Write is still echoed")
    void sendDuringTheLastWritePongIsEchoed_5040_5_3() throws Exception {
        ConnectionParameters params = ConnectionParameters.builder().build();
        int size = 64;
        int window = 4;
        int rounds = 20;
        try (RdmaProvider prov = Rdma.open("soft");
             Device dev = prov.open(InetAddress.getLoopbackAddress());
             Listener l = dev.connectionManager().listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 4);
             ProtectionDomain pd = dev.allocateProtectionDomain();
             CompletionQueue cq = dev.createCompletionQueue(64, null);
             MemoryRegion mr = pd.register(ByteBuffer.allocateDirect(2 * size),
                     EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE))) {
            Server server = Server.start(dev, l, params, size);
            ClientCommand.Hello hello = new ClientCommand.Hello(size, window, mr.address() + size, mr.rkey());
            QueuePairConfig qpc = new QueuePairConfig(pd, cq, cq, window + 4, window + 4);
            try (Connection c = dev.connectionManager().connect((InetSocketAddress) l.localAddress(), qpc,
                    params.toBuilder().privateData(hello.encode()).build(), Duration.ofSeconds(10))) {
                Responder r = server.accepted.get(10, TimeUnit.SECONDS);
                ClientCommand.RemoteBuffer remote = ClientCommand.RemoteBuffer.decode(c.info().peerPrivateData());
                WorkCompletion[] wcs = new WorkCompletion[8];
                for (int i = 0; i < wcs.length; i++) {
                    wcs[i] = new WorkCompletion();
                }
                ByteBuffer b = mr.buffer().order(ByteOrder.BIG_ENDIAN);
                SendRequest start = new SendRequest();
                SendRequest write = new SendRequest();
                SendRequest send = new SendRequest();
                for (int round = 0; round < rounds; round++) {
                    // a write-latency phase of one iteration: the start Send, the server's ready Send
                    c.queuePair().postRecv(1, mr, size, size);
                    b.put(0, ClientCommand.WRITE_TAG).put(1, (byte) 0).put(2, (byte) 0).put(3, (byte) 0)
                            .putInt(4, size).putInt(8, 1);
                    c.queuePair().postSend(start.send(10, mr, 0, ClientCommand.WRITE_START_LENGTH));
                    reap(cq, wcs, 2, c);
                    // the iteration's Write, and chained behind it the next Send (an echo request)
                    c.queuePair().postRecv(2, mr, size, size);
                    b.put(size - 1, (byte) 1);
                    write.write(11, mr, 0, size, remote.address(), remote.rkey());
                    write.signaled = false;
                    send.send(12, mr, 0, size);
                    b.put(0, ClientCommand.ECHO_TAG);
                    write.next = send;
                    c.queuePair().postSend(write);
                    // the Send's completion and its echo
                    int echoes = 0;
                    for (int pending = 2; pending > 0; ) {
                        int n = reap(cq, wcs, 1, c);
                        for (int k = 0; k < n; k++) {
                            if (wcs[k].opcode == WcOpcode.RECV) {
                                echoes++;
                            }
                        }
                        pending -= n;
                    }
                    assertEquals(1, echoes, "round " + round + ": the Send was echoed");
                }
                r.stop();
            }
            assertEquals((long) rounds, server.served.get(10, TimeUnit.SECONDS), "every Send was answered");
        }
    }

    /** At least {@code min} completions (all successful) within 10 s, else the QP's state in the failure. */
    private static int reap(CompletionQueue cq, WorkCompletion[] wcs, int min, Connection c) throws Exception {
        int got = 0;
        while (got < min) {
            int n = cq.await(wcs, wcs.length, 10, TimeUnit.SECONDS);
            assertTrue(n > 0, "no completion within 10 s: " + c.queuePair());
            for (int k = 0; k < n; k++) {
                assertTrue(wcs[k].isSuccess(), "completion failed: " + wcs[k]);
            }
            got += n;
        }
        return got;
    }
}
