package org.jwarp.cli;

import java.lang.invoke.VarHandle;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import org.jwarp.verbs.Access;
import org.jwarp.verbs.CompletionQueue;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.ConnectionRequest;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.ProtectionDomain;
import org.jwarp.verbs.QueuePair;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.Rdma;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaProvider;
import org.jwarp.verbs.RdmaTimeoutException;
import org.jwarp.ground.RtrType;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code jwarp server}: the passive side of an rping/ib_send_lat-style test over any provider.
 * It listens, accepts each connection with RFC 6581 parameters and answers the client's
 * workload: it echoes Sends (latency), acknowledges Sends with a zero-length Send (bandwidth
 * credits), and exposes one registered buffer for the client's RDMA Writes and Reads, whose
 * address, STag and length travel in the accept private data (RFC 5044 §7.1 private data).
 */
@Command(name = "server", mixinStandardHelpOptions = true,
        description = "Accept RDMA connections and serve a client's send/write/read test (rping-like).")
public final class ServerCommand implements Callable<Integer> {
    @Option(names = "--bind", description = "Local address to listen on (default: ${DEFAULT-VALUE}).")
    String bind = "0.0.0.0";
    @Option(names = "--port", description = "TCP port (default: ${DEFAULT-VALUE}).")
    int port = 7471;
    @Option(names = "--size", description = "Largest message size served when the client asks for none (default: ${DEFAULT-VALUE}).")
    int size = 65536;
    @Option(names = "--p2p", description = "Accept in the RFC 6581 peer-to-peer model (RTR) when the client asks for it.")
    boolean p2p;
    @Option(names = "--rtr", split = ",", description = "Acceptable RTR types: write, read, send (default: write,read).")
    Set<String> rtr = Set.of("write", "read");
    @Option(names = "--ird", description = "Inbound RDMA Read depth offered (default: ${DEFAULT-VALUE}).")
    int ird = 16;
    @Option(names = "--ord", description = "Outbound RDMA Read depth wanted (default: ${DEFAULT-VALUE}).")
    int ord = 16;
    @Option(names = "--provider", description = "Provider name (default: ${DEFAULT-VALUE}).")
    String provider = Rdma.DEFAULT_PROVIDER;
    @Option(names = "--count", description = "Serve this many connections, then exit; 0 = forever (default: ${DEFAULT-VALUE}).")
    int count = 0;
    @Option(names = "--iters", description = "Accepted for symmetry with the client; the client drives the count.")
    int iters;
    @Option(names = "--op", description = "Accepted for symmetry with the client; the client names the op.")
    String op;
    @Option(names = "--size-limit", description = "Largest buffer a client may request, bytes (default: ${DEFAULT-VALUE}).")
    int sizeLimit = 16 << 20;

    @Override
    public Integer call() throws Exception {
        ConnectionParameters params = ConnectionParameters.builder().ird(ird).ord(ord).peerToPeer(p2p)
                .rtrTypes(ClientCommand.parseRtr(rtr)).build();
        try (RdmaProvider prov = Rdma.open(provider);
             Device dev = prov.open(InetAddress.getByName(bind));
             Listener l = dev.connectionManager().listen(new InetSocketAddress(InetAddress.getByName(bind), port), 16)) {
            System.out.println("jwarp server: " + prov.name() + " listening on " + l.localAddress());
            int served = 0;
            while (count == 0 || served < count) {
                ConnectionRequest req;
                try {
                    req = l.next(Duration.ofSeconds(1));
                } catch (RdmaTimeoutException e) {
                    continue;
                }
                try (Responder r = Responder.accept(dev, req, params, size, sizeLimit)) {
                    System.out.println("connected: " + ClientCommand.describe(r.connection()));
                    long n = r.serve(null);
                    System.out.println("connection done: " + n + " messages answered");
                } catch (RdmaException e) {
                    System.err.println("jwarp server: connection failed: " + e.getMessage());
                }
                served++;
            }
        }
        return 0;
    }

    /**
     * The server side of the workload on one connection (used by {@code server} and {@code demo}).
     * Receive slots are posted once and re-posted as soon as their message is taken; a Send whose
     * first byte is {@link ClientCommand#CREDIT_TAG} gets a zero-length Send back (a credit), any
     * other Send is copied to an echo buffer and sent back. Either answer follows the re-post, so
     * an answered peer always finds a buffer (RFC 5041 §7.2: a Send without one is fatal).
     */
    static final class Responder implements AutoCloseable {
        private static final long KIND_RECV = 1L << 40;
        private static final long KIND_ECHO = 2L << 40;
        private static final long KIND_ACK = 3L << 40;
        private static final long SLOT_MASK = (1L << 40) - 1;

        private final ProtectionDomain pd;
        private final CompletionQueue cq;
        private final MemoryRegion slotsMr;
        private final MemoryRegion echoMr;
        private final MemoryRegion targetMr;
        private final Connection conn;
        private final int slots;
        private final int slotSize;
        /** The client's receive area for write-latency Writes, or null (an old client). */
        private final ClientCommand.Hello hello;
        private volatile boolean stop;

        private Responder(ProtectionDomain pd, CompletionQueue cq, MemoryRegion slotsMr, MemoryRegion echoMr,
                          MemoryRegion targetMr, Connection conn, int slots, int slotSize, ClientCommand.Hello hello) {
            this.hello = hello;
            this.pd = pd;
            this.cq = cq;
            this.slotsMr = slotsMr;
            this.echoMr = echoMr;
            this.targetMr = targetMr;
            this.conn = conn;
            this.slots = slots;
            this.slotSize = slotSize;
        }

        /** Accepts {@code req}, sized by the client's request header (or {@code defaultSize}). */
        static Responder accept(Device dev, ConnectionRequest req, ConnectionParameters params, int defaultSize,
                                int sizeLimit) throws RdmaException {
            ClientCommand.Hello hello = ClientCommand.Hello.decode(req.privateData());
            int bufSize = hello == null ? defaultSize : hello.bufferSize();
            int window = hello == null ? 16 : hello.window();
            if (bufSize < 0 || bufSize > sizeLimit || window < 1 || window > 1024) {
                req.reject(("size " + bufSize + "/window " + window + " not served").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                throw new RdmaException("rejected a client asking for " + bufSize + " bytes x " + window);
            }
            int slotSize = Math.max(16, bufSize);
            ProtectionDomain pd = dev.allocateProtectionDomain();
            CompletionQueue cq = null;
            try {
                cq = dev.createCompletionQueue(4 * window + 16);
                MemoryRegion slotsMr = pd.register(ByteBuffer.allocateDirect(slotSize * window),
                        EnumSet.of(Access.LOCAL_WRITE));
                MemoryRegion echo = pd.register(ByteBuffer.allocateDirect(slotSize * window),
                        EnumSet.of(Access.LOCAL_WRITE));
                MemoryRegion target = pd.register(ByteBuffer.allocateDirect(Math.max(16, bufSize)),
                        EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ));
                byte[] pdata = ClientCommand.RemoteBuffer.encode(target.address(), target.rkey(), target.length());
                ConnectionParameters p = params.toBuilder().privateData(pdata)
                        .peerToPeer(params.peerToPeer() && req.peerToPeer()).build();
                if (!p.peerToPeer()) {
                    p = p.toBuilder().rtrTypes(Set.of()).build();
                }
                // receive slots are posted before the Reply goes out: the client may send at once
                QueuePairConfig qpc = new QueuePairConfig(pd, cq, cq, window + 4, window + 4).withBeforeConnect(qp -> {
                    for (int i = 0; i < window; i++) {
                        qp.postRecv(KIND_RECV | i, slotsMr, i * slotSize, slotSize);
                    }
                });
                Connection conn = req.accept(qpc, p);
                return new Responder(pd, cq, slotsMr, echo, target, conn, window, slotSize, hello);
            } catch (RdmaException | RuntimeException e) {
                if (cq != null) {
                    cq.close();
                }
                pd.close();
                throw e;
            }
        }

        Connection connection() {
            return conn;
        }

        private void postSlot(int i) throws RdmaException {
            conn.queuePair().postRecv(KIND_RECV | i, slotsMr, i * slotSize, slotSize);
        }

        void stop() {
            stop = true;
        }

        /**
         * Answers until the peer disconnects (posted receives flush) or {@link #stop()}; returns
         * the number of Sends answered. {@code onMessage} may be null.
         */
        long serve(Runnable onMessage) throws RdmaException, InterruptedException {
            WorkCompletion[] wcs = new WorkCompletion[16];
            for (int i = 0; i < wcs.length; i++) {
                wcs[i] = new WorkCompletion();
            }
            SendRequest wr = new SendRequest();
            QueuePair qp = conn.queuePair();
            ByteBuffer view = slotsMr.buffer().order(ByteOrder.BIG_ENDIAN);
            ByteBuffer echoView = echoMr.buffer();
            long answered = 0;
            while (!stop) {
                int n = cq.await(wcs, wcs.length, 200, TimeUnit.MILLISECONDS);
                for (int k = 0; k < n; k++) {
                    WorkCompletion wc = wcs[k];
                    if (wc.status == WcStatus.WR_FLUSH_ERR) {
                        return answered;
                    }
                    if (!wc.isSuccess()) {
                        throw new RdmaException("server completion failed: " + wc);
                    }
                    int slot = (int) (wc.wrId & SLOT_MASK);
                    if (wc.opcode == WcOpcode.RECV && wc.byteLength == ClientCommand.WRITE_START_LENGTH
                            && view.get(slot * slotSize) == ClientCommand.WRITE_TAG) {
                        // a control message, not an answered Send: the write-latency phase
                        int size = view.getInt(slot * slotSize + 4);
                        int iters = view.getInt(slot * slotSize + 8);
                        postSlot(slot);
                        writePong(size, iters, wr);
                    } else if (wc.opcode == WcOpcode.RECV) {
                        answered++;
                        if (wc.byteLength > 0 && view.get(slot * slotSize) == ClientCommand.CREDIT_TAG) {
                            postSlot(slot);
                            wr.send(KIND_ACK | slot, null, 0, 0);
                            qp.postSend(wr);
                        } else {
                            // copy out and re-post first, so the slot is ready before the peer sees the echo
                            echoView.put(slot * slotSize, view, slot * slotSize, wc.byteLength);
                            postSlot(slot);
                            wr.send(KIND_ECHO | slot, echoMr, slot * slotSize, wc.byteLength);
                            qp.postSend(wr);
                        }
                        if (onMessage != null) {
                            onMessage.run();
                        }
                    }
                }
                if (!conn.isOpen()) {
                    return answered;
                }
            }
            return answered;
        }

        /**
         * The server half of ib_write_lat: clears the last byte of the target buffer, says ready
         * with a zero-length Send, then {@code iters} times waits (spinning) until the client's
         * Write puts the iteration number there and writes {@code size} bytes ending in the same
         * number into the client's receive area. Every 8th Write and the last are signaled.
         */
        private void writePong(int size, int iters, SendRequest wr) throws RdmaException, InterruptedException {
            if (hello == null || !hello.hasArea() || size < 1 || size > targetMr.length() || size > slotSize * slots
                    || iters < 1) {
                throw new RdmaException("write latency: the client sent no receive area or a bad size " + size);
            }
            QueuePair qp = conn.queuePair();
            ByteBuffer target = targetMr.buffer();
            ByteBuffer src = echoMr.buffer();
            int last = size - 1;
            target.put(last, (byte) 0);
            qp.postSend(wr.send(KIND_ACK, null, 0, 0));
            WorkCompletion[] wcs = new WorkCompletion[8];
            for (int i = 0; i < wcs.length; i++) {
                wcs[i] = new WorkCompletion();
            }
            int every = Math.max(1, Math.min(8, slots));
            long unreaped = 1;
            for (int i = 1; i <= iters && !stop; i++) {
                byte v = (byte) i;
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                int spins = 0;
                while (true) {
                    VarHandle.acquireFence();
                    if (target.get(last) == v) {
                        break;
                    }
                    Thread.onSpinWait();
                    if ((++spins & 0xFFFF) == 0 && (System.nanoTime() > deadline || !conn.isOpen())) {
                        throw new RdmaException("write latency: no Write from the client for iteration " + i);
                    }
                }
                src.put(last, v);
                wr.write(KIND_ECHO, echoMr, 0, size, hello.address(), hello.rkey());
                wr.signaled = i % every == 0 || i == iters;
                qp.postSend(wr);
                if (wr.signaled) {
                    unreaped++;
                    while (unreaped > 0) {
                        int n = cq.await(wcs, wcs.length, 200, TimeUnit.MILLISECONDS);
                        for (int k = 0; k < n; k++) {
                            if (!wcs[k].isSuccess()) {
                                throw new RdmaException("write latency: completion failed: " + wcs[k]);
                            }
                            unreaped--;
                        }
                        if (n == 0 && !conn.isOpen()) {
                            return;
                        }
                    }
                }
            }
        }

        @Override
        public void close() {
            conn.close();
            slotsMr.close();
            echoMr.close();
            targetMr.close();
            cq.close();
            pd.close();
        }
    }

    static Set<RtrType> rtrOf(Set<String> names) {
        return ClientCommand.parseRtr(names);
    }
}
