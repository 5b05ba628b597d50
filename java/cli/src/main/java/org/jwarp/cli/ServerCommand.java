package org.jwarp.cli;

import java.io.PrintWriter;
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
import org.jwarp.verbs.RecvRequest;
import org.jwarp.ground.RtrType;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code jwarp server}: the passive side of an rping/ib_send_lat-style test over any provider.
 * It listens, accepts each connection with RFC 6581 parameters and answers the client's
 * workload: it echoes Sends (latency), acknowledges Sends with a zero-length Send (bandwidth
 * credits), and exposes one registered buffer for the client's RDMA Writes and Reads, whose
 * address, STag and length travel in the accept private data (RFC 5044 §7.1 private data).
 */
@Command(name = "server", mixinStandardHelpOptions = true, resourceBundle = "org.jwarp.cli.ServerCommand",
        description = "Accept RDMA connections and serve a client's send/write/read test (rping-like).")
public final class ServerCommand implements Callable<Integer> {
    @Option(names = "--bind", description = "Local address to listen on (default: ${DEFAULT-VALUE}).")
    String bind = "0.0.0.0";
    @Option(names = "--port", description = "TCP port (default: ${DEFAULT-VALUE}).")
    int port = 7471;
    @Option(names = "--size", description = "Largest message size served when the client asks for none (default: ${DEFAULT-VALUE}).")
    int size = 65536;
    @Mixin
    ConnectionOptions setup = new ConnectionOptions();
    @Option(names = "--count", description = "Serve this many connections, then exit; 0 = forever (default: ${DEFAULT-VALUE}).")
    int count = 0;
    @Option(names = "--iters", description = "Accepted for symmetry with the client; the client drives the count.")
    int iters;
    @Option(names = "--op", description = "Accepted for symmetry with the client; the client names the op.")
    String op;
    @Option(names = "--sge", description = "SGEs each receive buffer is scattered over (default: ${DEFAULT-VALUE}).")
    int sge = 1;
    @Option(names = "--inline-size", description = "Inline bytes asked for; echoes up to it go inline (default: ${DEFAULT-VALUE}).")
    int inlineSize;
    @Option(names = "--verify", description = "Check every received Send against the client's byte pattern; a mismatch ends the connection.")
    boolean verify;
    @Option(names = "--size-limit", description = "Largest buffer a client may request, bytes (default: ${DEFAULT-VALUE}).")
    int sizeLimit = 16 << 20;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        ConnectionParameters params = setup.builder().rtrTypes(ClientCommand.parseRtr(setup.rtr)).build();
        try (RdmaProvider prov = Rdma.open(setup.provider);
             Device dev = prov.open(InetAddress.getByName(bind));
             Listener l = dev.connectionManager().listen(new InetSocketAddress(InetAddress.getByName(bind), port), 16)) {
            out.println("jwarp server: " + prov.name() + " listening on " + l.localAddress());
            out.flush();
            int served = 0;
            while (count == 0 || served < count) {
                ConnectionRequest req;
                try {
                    req = l.next(Duration.ofSeconds(1));
                } catch (RdmaTimeoutException e) {
                    continue;
                }
                try (Responder r = Responder.accept(dev, req, params, size, sizeLimit,
                        new WorkSettings(sge, 1, inlineSize, verify))) {
                    out.println("connected: " + ClientCommand.describe(r.connection()));
                    out.flush();
                    long n = r.serve(null);
                    out.println("connection done: " + n + " messages answered");
                    out.flush();
                } catch (RdmaException e) {
                    err.println("jwarp server: connection failed: " + e.getMessage());
                    err.flush();
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
        private final WorkSettings settings;
        private final RecvRequest recv = new RecvRequest();
        private volatile boolean stop;

        private Responder(ProtectionDomain pd, CompletionQueue cq, MemoryRegion slotsMr, MemoryRegion echoMr,
                          MemoryRegion targetMr, Connection conn, int slots, int slotSize, WorkSettings settings) {
            this.settings = settings;
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
            return accept(dev, req, params, defaultSize, sizeLimit, WorkSettings.DEFAULT);
        }

        static Responder accept(Device dev, ConnectionRequest req, ConnectionParameters params, int defaultSize,
                                int sizeLimit, WorkSettings settings) throws RdmaException {
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
            MemoryRegion slotsMr = null;
            MemoryRegion echo = null;
            MemoryRegion target = null;
            try {
                cq = dev.createCompletionQueue(4 * window + 16);
                slotsMr = pd.register(ByteBuffer.allocateDirect(slotSize * window),
                        EnumSet.of(Access.LOCAL_WRITE));
                echo = pd.register(ByteBuffer.allocateDirect(slotSize * window),
                        EnumSet.of(Access.LOCAL_WRITE));
                target = pd.register(ByteBuffer.allocateDirect(Math.max(16, bufSize)),
                        EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ));
                ByteBuffer t = target.buffer();
                for (int i = 0; i < t.capacity(); i++) {
                    t.put(i, WorkSettings.targetByte(i)); // what a client's --verify Read expects
                }
                byte[] pdata = ClientCommand.RemoteBuffer.encode(target.address(), target.rkey(), target.length());
                ConnectionParameters p = params.toBuilder().privateData(pdata)
                        .peerToPeer(params.peerToPeer() && req.peerToPeer()).build();
                if (!p.peerToPeer()) {
                    p = p.toBuilder().rtrTypes(Set.of()).build();
                }
                // receive slots are posted before the Reply goes out: the client may send at once
                RecvRequest rr = new RecvRequest();
                MemoryRegion slots = slotsMr;
                QueuePairConfig qpc = new QueuePairConfig(pd, cq, cq, window + 4, window + 4)
                        .withSge(settings.sge(), settings.sge()).withInline(settings.inlineSize()).withBeforeConnect(qp -> {
                            for (int i = 0; i < window; i++) {
                                qp.postRecv(slotRequest(rr, settings, slots, i, slotSize));
                            }
                        });
                Connection conn = req.accept(qpc, p);
                return new Responder(pd, cq, slotsMr, echo, target, conn, window, slotSize, settings);
            } catch (RdmaException | RuntimeException e) {
                try {
                    Closing.all(target, echo, slotsMr, cq, pd);
                } catch (RuntimeException | Error again) {
                    e.addSuppressed(again);
                }
                throw e;
            }
        }

        Connection connection() {
            return conn;
        }

        private void postSlot(int i) throws RdmaException {
            conn.queuePair().postRecv(slotRequest(recv, settings, slotsMr, i, slotSize));
        }

        /** Receive slot i, scattered over {@code --sge} contiguous pieces (RFC 5041 §5.3). */
        static RecvRequest slotRequest(RecvRequest r, WorkSettings settings, MemoryRegion mr, int i, int slotSize) {
            r.set(KIND_RECV | i, mr, (long) i * slotSize, slotSize);
            int n = Math.min(settings.sge(), slotSize);
            if (n > 1) {
                r.sgl.clear();
                long at = (long) i * slotSize;
                for (int k = 0; k < n; k++) {
                    int len = slotSize / n + (k < slotSize % n ? 1 : 0);
                    r.sgl.add(mr, at, len);
                    at += len;
                }
            }
            return r;
        }

        /** The client's Send payload is its buffer pattern, byte i = i, after the tag byte 0. */
        private void verify(ByteBuffer view, int slot, int len) throws RdmaException {
            for (int i = 1; i < len; i++) {
                byte got = view.get(slot * slotSize + i);
                if (got != (byte) i) {
                    throw new RdmaException("--verify: received Send payload mismatch at byte " + i + " of " + len
                            + ": expected 0x" + Integer.toHexString(i & 0xFF) + ", got 0x" + Integer.toHexString(got & 0xFF));
                }
            }
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
                    if (wc.opcode == WcOpcode.RECV) {
                        answered++;
                        if (settings.verify()) {
                            verify(view, slot, wc.byteLength);
                        }
                        if (wc.byteLength > 0 && view.get(slot * slotSize) == ClientCommand.CREDIT_TAG) {
                            postSlot(slot);
                            wr.send(KIND_ACK | slot, null, 0, 0);
                            qp.postSend(wr);
                        } else {
                            // copy out and re-post first, so the slot is ready before the peer sees the echo
                            echoView.put(slot * slotSize, view, slot * slotSize, wc.byteLength);
                            postSlot(slot);
                            wr.send(KIND_ECHO | slot, echoMr, slot * slotSize, wc.byteLength);
                            wr.inline = wc.byteLength > 0 && wc.byteLength <= settings.inlineSize();
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

        @Override
        public void close() {
            Closing.all(conn, slotsMr, echoMr, targetMr, cq, pd);
        }
    }

    static Set<RtrType> rtrOf(Set<String> names) {
        return ClientCommand.parseRtr(names);
    }
}
