package org.jwarp.cli;

import java.io.PrintStream;
import org.jwarp.mpa.MpaDecodeException;
import org.jwarp.mpa.MpaFrameLimits;
import org.jwarp.mpa.MpaFrame;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.HdrHistogram.Histogram;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.ConnectionRequest;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.Rdma;
import org.jwarp.verbs.RdmaProvider;
import org.jwarp.verbs.SendOpcode;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code jwarp demo}, the project's first command: a listener and an initiator in one JVM on
 * loopback connect in the RFC 6581 peer-to-peer model, print both MPA frames (RFC 5044 §7.1,
 * RFC 6581 §9) decoded, the chosen RTR and the final IRD/ORD of both sides, then measure Send
 * ping-pong, RDMA Write and RDMA Read (RFC 5040 §4) latency percentiles and bandwidth with
 * perftest's semantics (see {@link ClientCommand}: write latency is ib_write_lat's Write ping-pong).
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Loopback RDMA demo: P2P connection setup, then send/write/read latency and bandwidth.")
public final class DemoCommand implements Callable<Integer> {
    @Option(names = "--provider", description = "Provider name (default: ${DEFAULT-VALUE}).")
    String provider = Rdma.DEFAULT_PROVIDER;
    @Option(names = "--address", description = "Loopback address to use (default: ${DEFAULT-VALUE}).")
    String address = "127.0.0.1";
    @Option(names = "--port", description = "Listener port, 0 = any free port (default: ${DEFAULT-VALUE}).")
    int port = 0;
    @Option(names = "--size", description = "Latency message size in bytes (default: ${DEFAULT-VALUE}).")
    int size = 64;
    @Option(names = "--iters", description = "Latency iterations per op (default: ${DEFAULT-VALUE}).")
    int iters = 5000;
    @Option(names = "--bw-size", description = "Bandwidth message size in bytes (default: ${DEFAULT-VALUE}).")
    int bwSize = 65536;
    @Option(names = "--bw-iters", description = "Bandwidth messages per op (default: ${DEFAULT-VALUE}).")
    int bwIters = 2000;
    @Option(names = "--window", description = "Outstanding operations in the bandwidth runs (default: ${DEFAULT-VALUE}).")
    int window = 16;
    @Option(names = "--rtr", split = ",", description = "RTR types the initiator offers: write, read, send (default: write,read).")
    Set<String> rtr = Set.of("write", "read");
    @Option(names = "--ird", description = "IRD of both sides (default: ${DEFAULT-VALUE}).")
    int ird = ConnectionParameters.DEFAULT_IRD_ORD;
    @Option(names = "--ord", description = "ORD of both sides (default: ${DEFAULT-VALUE}).")
    int ord = ConnectionParameters.DEFAULT_IRD_ORD;
    @Option(names = "--ops", split = ",", description = "Operations to run (default: send,write,read).")
    List<String> ops = List.of("send", "write", "read");
    @Option(names = "--json", description = "Print one JSON object instead of text.")
    boolean json;

    @Override
    public Integer call() throws Exception {
        PrintStream out = System.out;
        long t0 = System.nanoTime();
        int buf = Math.max(size, bwSize);
        List<SendOpcode> opcodes = new ArrayList<>();
        for (String o : ops) {
            opcodes.add(ClientCommand.parseOp(o));
        }
        ConnectionParameters initiator = ConnectionParameters.builder().ird(ird).ord(ord).peerToPeer(true)
                .rtrTypes(ClientCommand.parseRtr(rtr)).build();
        ConnectionParameters responder = ConnectionParameters.builder().ird(ird).ord(ord).peerToPeer(true)
                .rtrTypes(org.jwarp.ground.RtrType.WRITE, org.jwarp.ground.RtrType.READ, org.jwarp.ground.RtrType.SEND)
                .build();
        Map<String, Object> report = Json.object();
        try (RdmaProvider prov = Rdma.open(provider);
             Device dev = prov.open(InetAddress.getByName(address));
             Listener listener = dev.connectionManager().listen(new InetSocketAddress(InetAddress.getByName(address), port), 4)) {
            if (!json) {
                out.println("jwarp demo: provider " + prov.name() + ", listener " + listener.localAddress()
                        + ", peer-to-peer, RTR offered " + ClientCommand.parseRtr(rtr).toString().toLowerCase(Locale.ROOT));
            }
            CompletableFuture<Responder> accepted = new CompletableFuture<>();
            CompletableFuture<Long> served = new CompletableFuture<>();
            Thread server = new Thread(() -> {
                try {
                    ConnectionRequest req = listener.next(Duration.ofSeconds(10));
                    Responder r = Responder.accept(dev, req, responder, buf, buf);
                    accepted.complete(r);
                    served.complete(r.serve(null));
                } catch (Throwable e) {
                    accepted.completeExceptionally(e);
                    served.completeExceptionally(e);
                }
            }, "jwarp-demo-responder");
            server.setDaemon(true);
            server.start();

            ClientCommand.Progress progress = new ClientCommand.Progress(System.err);
            List<Map<String, Object>> results = new ArrayList<>();
            Responder r;
            try (Workload w = Workload.connect(dev, (InetSocketAddress) listener.localAddress(),
                    initiator, buf, window, Duration.ofSeconds(10))) {
                r = accepted.get(10, TimeUnit.SECONDS);
                report.put("negotiation", negotiation(w.connection(), r.connection()));
                if (!json) {
                    printNegotiation(out, w.connection(), r.connection());
                    out.println();
                    out.println(ClientCommand.header() + "   (" + ClientCommand.SEMANTICS + ")");
                }
                for (SendOpcode op : opcodes) {
                    String name = ClientCommand.name(op);
                    Histogram h = w.latency(op, size, iters, progress);
                    double bw = w.bandwidth(op, bwSize, bwIters, window, progress);
                    progress.done();
                    Map<String, Object> lat = ClientCommand.resultJson(name, size, iters, h, bw);
                    lat.put("bandwidthBytes", bwSize);
                    lat.put("bandwidthIters", bwIters);
                    results.add(lat);
                    if (!json) {
                        out.println(ClientCommand.row(name, size, iters, h, bw) + "   (bw with " + bwSize + " B x "
                                + bwIters + ", window " + window + ")");
                    }
                }
            }
            long answered;
            try {
                answered = served.get(10, TimeUnit.SECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                throw new org.jwarp.verbs.RdmaException("responder did not finish: " + r.connection().queuePair());
            }
            r.close();
            server.join(5000);
            double secs = (System.nanoTime() - t0) / 1e9;
            report.put("results", results);
            report.put("responderMessages", answered);
            report.put("seconds", secs);
            if (json) {
                out.println(Json.write(report));
            } else {
                out.printf(Locale.ROOT, "%ndone in %.1f s; responder answered %d sends; connection closed cleanly%n",
                        secs, answered);
            }
        }
        return 0;
    }

    private static void printNegotiation(PrintStream out, Connection init, Connection resp) {
        if (init.info().mpaRequest().length > 0) {
            out.println("MPA Request  (initiator -> responder): " + Json.write(frameJson(init.info().mpaRequest())));
            out.println("MPA Reply    (responder -> initiator): " + Json.write(frameJson(init.info().mpaReply())));
        }
        var i = init.info();
        var r = resp.info();
        out.println("RTR: " + (i.rtr() == null ? "none" : i.rtr().name().toLowerCase(Locale.ROOT)) + ", CRC "
                + (i.crc() ? "on" : "off") + ", MPA revision " + i.mpaRevision());
        out.println("initiator: ird " + i.ird() + " ord " + i.ord() + "  (peer sent ird " + i.peerIrd() + " ord "
                + i.peerOrd() + ")");
        out.println("responder: ird " + r.ird() + " ord " + r.ord() + "  (peer sent ird " + r.peerIrd() + " ord "
                + r.peerOrd() + ")");
    }

    private static Map<String, Object> negotiation(Connection init, Connection resp) {
        Map<String, Object> m = Json.object();
        if (init.info().mpaRequest().length > 0) {
            m.put("request", frameJson(init.info().mpaRequest()));
            m.put("reply", frameJson(init.info().mpaReply()));
        }
        m.put("initiator", ClientCommand.describeJson(init.info()));
        m.put("responder", ClientCommand.describeJson(resp.info()));
        return m;
    }

    /** The frame as `jwarp mpa decode` shows it (RFC 5044 §7.1.1 fields, RFC 6581 §9 enhanced data). */
    static Map<String, Object> frameJson(byte[] frame) {
        if (frame == null) {
            return Json.object();
        }
        try {
            return MpaCommand.frameJson(MpaFrame.decode(frame, MpaFrameLimits.RFC));
        } catch (MpaDecodeException e) {
            Map<String, Object> m = Json.object();
            m.put("error", e.getMessage());
            return m;
        }
    }
}
