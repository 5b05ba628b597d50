package org.jwarp.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.Callable;

import java.util.concurrent.atomic.AtomicInteger;

import org.jwarp.ground.RtrType;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.ConnectionRequest;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.Rdma;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaProvider;
import org.jwarp.verbs.RdmaTimeoutException;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code jwarp rping}: the ping of rdma-core's {@code rping}, wire-compatible with it in both
 * roles and over either provider. Per iteration: Send of the source advertisement (RFC 5040 §5.3),
 * RDMA Read of the ping data (§5.2), go-ahead, Send of the sink advertisement, RDMA Write of the
 * data back (§5.1), go-ahead (see {@link RpingSession}). Connections use rping's parameters:
 * IRD 1 and ORD 1 (RFC 6581 §9.1, {@code responder_resources}/{@code initiator_depth} of
 * rdma_cm), retry counts 7, send queue 16, receive queue 2.
 *
 * <p>Exit status as rping's: 0 when the pings (or, for a server, the client's session) completed,
 * 22 ({@code EINVAL}) for a bad option, 255 for a failure once running. Unlike rping, which only
 * times out address resolution, every step waits at most {@code --timeout}, and a server whose
 * client disconnects in the middle of an iteration fails instead of exiting 0.
 */
@Command(name = "rping", exitCodeOnInvalidInput = RpingException.EXIT_USAGE,
        description = "RDMA ping, wire-compatible with rdma-core's rping (-s server or -c client).")
public final class RpingCommand implements Callable<Integer> {
    /** rping's default port. */
    static final int DEFAULT_PORT = 7174;

    @Spec
    CommandSpec spec;

    @Option(names = "-s", description = "Server side.")
    boolean serverRole;
    @Option(names = "-c", description = "Client side.")
    boolean clientRole;
    @Option(names = "-a", paramLabel = "ADDR", description = "Address: the server's to connect to (-c, required), "
            + "or the one to listen on (-s, default any).")
    String address;
    @Option(names = "-I", paramLabel = "ADDR", description = "Source address of the client: the local device to use "
            + "(default: the address the route to -a leaves from).")
    String source;
    @Option(names = {"-p", "--port"}, paramLabel = "PORT", description = "Port (default: ${DEFAULT-VALUE}).")
    int port = DEFAULT_PORT;
    @Option(names = "-C", paramLabel = "COUNT", description = "Ping this many times; none or 0 = until interrupted.")
    int count;
    @Option(names = "-S", paramLabel = "SIZE", description = "Ping data size, " + RpingSession.MIN_SIZE + ".."
            + RpingSession.MAX_SIZE + " (default: ${DEFAULT-VALUE}).")
    int size = 64;
    @Option(names = "-v", description = "Print the ping data.")
    boolean verbose;
    @Option(names = "-V", description = "Verify the ping data written back (client).")
    boolean validate;
    @Option(names = "-d", description = "Debug lines on stdout.")
    boolean debug;
    @Option(names = "-P", description = "Persistent server: serve connections until interrupted, each on its own thread.")
    boolean persistent;
    @Option(names = "--provider", description = "Provider: soft, disni or ffm (default: ${DEFAULT-VALUE}).")
    String provider = Rdma.DEFAULT_PROVIDER;
    @Option(names = "--timeout", paramLabel = "SECONDS", description = "Longest wait of any one step, seconds "
            + "(default: ${DEFAULT-VALUE}).")
    double timeoutSeconds = 10;
    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
    boolean help;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try {
            validate();
            return serverRole ? runServer(out, err) : runClient(out);
        } catch (RpingException e) {
            err.println("jwarp rping: " + e.getMessage());
            if (e.kind() == RpingException.Kind.USAGE) {
                err.println("usage: jwarp rping -s [-vVdP] [-S size] [-C count] [-a addr] [-p port]");
                err.println("       jwarp rping -c [-vVd] [-S size] [-C count] [-I addr] -a addr [-p port]");
            }
            err.flush();
            return e.exitStatus();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("jwarp rping: interrupted");
            err.flush();
            return RpingException.EXIT_FAILED;
        }
    }

    /** The option rules of rping (EINVAL when broken), plus ours for --timeout and the role. */
    void validate() throws RpingException {
        if (serverRole == clientRole) {
            throw usage(serverRole ? "-s and -c exclude each other" : "one of -s (server) or -c (client) is required");
        }
        if (size < RpingSession.MIN_SIZE || size > RpingSession.MAX_SIZE) {
            throw usage("invalid size " + size + " (-S): rping's range is " + RpingSession.MIN_SIZE + " to "
                    + RpingSession.MAX_SIZE);
        }
        if (count < 0) {
            throw usage("invalid count " + count + " (-C): 0 or more");
        }
        if (port < 0 || port > 65535) {
            throw usage("invalid port " + port + " (-p): 0 to 65535");
        }
        if (!(timeoutSeconds > 0) || timeoutSeconds > 86_400) {
            throw usage("invalid --timeout " + timeoutSeconds + ": more than 0 and at most 86400 seconds");
        }
        if (clientRole && address == null) {
            throw usage("-a ADDR (the server's address) is required with -c");
        }
        if (serverRole && source != null) {
            throw usage("-I is a client option");
        }
    }

    private static RpingException usage(String message) {
        return new RpingException(RpingException.Kind.USAGE, message);
    }

    private long timeoutNanos() {
        return (long) (timeoutSeconds * 1e9);
    }

    /**
     * rping's connection parameters (rdma_conn_param of its client: responder_resources 1,
     * initiator_depth 1, retry_count 7, rnr_retry_count 7), in the client-server model of
     * RFC 5044 §7.1 unless the peer asked for RFC 6581's peer-to-peer model.
     */
    static ConnectionParameters connectionParameters(boolean peerToPeer) {
        return ConnectionParameters.builder().ird(1).ord(1).retryCount(7).rnrRetryCount(7).peerToPeer(peerToPeer)
                .rtrTypes(peerToPeer ? Set.of(RtrType.WRITE, RtrType.READ) : Set.of()).build();
    }

    private int runClient(PrintWriter out) throws RpingException, InterruptedException {
        InetAddress dst = resolve(address, "-a");
        InetAddress src = source != null ? resolve(source, "-I") : routeSource(dst);
        try (RdmaProvider prov = open(provider);
             Device dev = prov.open(src);
             RpingSession s = RpingSession.open(dev, false, size, timeoutNanos(), verbose, validate, debug, out)) {
            InetSocketAddress server = new InetSocketAddress(dst, port);
            Connection c;
            try {
                c = dev.connectionManager().connect(server, s.queuePairConfig(), connectionParameters(false),
                        Duration.ofNanos(timeoutNanos()));
            } catch (RdmaException e) {
                throw new RpingException(RpingException.Kind.SETUP_FAILED, "connect to " + server + " failed: "
                        + e.getMessage(), e);
            }
            s.attach(c);
            s.runClient(count);
            return 0;
        } catch (RdmaException e) {
            throw new RpingException(RpingException.Kind.SETUP_FAILED, prefix(provider) + e.getMessage(), e);
        }
    }

    private int runServer(PrintWriter out, PrintWriter err) throws RpingException, InterruptedException {
        InetAddress bind = address == null ? anyLocal() : resolve(address, "-a");
        if (bind.isAnyLocalAddress() && !provider.equalsIgnoreCase(Rdma.DEFAULT_PROVIDER)) {
            throw usage("-a ADDR is required with --provider " + provider + ": it picks the device");
        }
        try (RdmaProvider prov = open(provider);
             Device dev = prov.open(bind);
             Listener l = dev.connectionManager().listen(new InetSocketAddress(bind, port), 3)) {
            if (debug) {
                out.println("listening on " + l.localAddress() + " (" + prov.name() + ", " + dev.info().name() + ")");
                out.flush();
            }
            if (!persistent) {
                return serve(dev, nextRequest(l), out, err);
            }
            AtomicInteger n = new AtomicInteger();
            while (!Thread.currentThread().isInterrupted()) {
                ConnectionRequest req = nextRequest(l);
                Thread t = new Thread(() -> {
                    try {
                        serve(dev, req, out, err);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }, "jwarp-rping-" + n.incrementAndGet());
                t.setDaemon(true);
                t.start();
            }
            throw new InterruptedException();
        } catch (RdmaException e) {
            throw new RpingException(RpingException.Kind.SETUP_FAILED, prefix(provider) + e.getMessage(), e);
        }
    }

    /** Waits for a connection request as rping's server does: without a time limit. */
    private static ConnectionRequest nextRequest(Listener l) throws RdmaException, InterruptedException {
        while (true) {
            try {
                return l.next(Duration.ofSeconds(1));
            } catch (RdmaTimeoutException e) {
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
            }
        }
    }

    /** One server connection; returns its exit status, having printed why it failed. */
    private int serve(Device dev, ConnectionRequest req, PrintWriter out, PrintWriter err) throws InterruptedException {
        if (debug) {
            out.println("connect request from " + req.remote());
            out.flush();
        }
        try (RpingSession s = RpingSession.open(dev, true, size, timeoutNanos(), verbose, validate, debug, out)) {
            Connection c;
            try {
                c = req.accept(s.queuePairConfig(), connectionParameters(req.peerToPeer()));
            } catch (RdmaException e) {
                throw new RpingException(RpingException.Kind.SETUP_FAILED, "accepting " + req.remote() + " failed: "
                        + e.getMessage(), e);
            }
            s.attach(c);
            s.runServer();
            return 0;
        } catch (RdmaException e) {
            return fail(err, new RpingException(RpingException.Kind.SETUP_FAILED, e.getMessage(), e));
        } catch (RpingException e) {
            return fail(err, e);
        }
    }

    private static int fail(PrintWriter err, RpingException e) {
        synchronized (err) {
            err.println("jwarp rping: " + e.getMessage());
            err.flush();
        }
        return e.exitStatus();
    }

    private static RdmaProvider open(String name) throws RdmaException {
        return Rdma.open(name);
    }

    private static String prefix(String provider) {
        return "provider " + provider + ": ";
    }

    private static InetAddress resolve(String host, String option) throws RpingException {
        try {
            return InetAddress.getByName(host);
        } catch (UnknownHostException e) {
            throw usage("cannot resolve " + option + " " + host + ": " + e.getMessage());
        }
    }

    private static InetAddress anyLocal() {
        return new InetSocketAddress(0).getAddress();
    }

    /**
     * The local address the route to {@code dst} leaves from (what rdma_resolve_addr binds when
     * rping's client has no -I): a connected UDP socket learns it without sending anything.
     */
    static InetAddress routeSource(InetAddress dst) throws RpingException {
        try (DatagramSocket s = new DatagramSocket()) {
            s.connect(dst, DEFAULT_PORT);
            InetAddress a = s.getLocalAddress();
            if (a == null || a.isAnyLocalAddress()) {
                throw new RpingException(RpingException.Kind.SETUP_FAILED, "no route to " + dst.getHostAddress()
                        + "; name the source with -I");
            }
            return a;
        } catch (IOException e) {
            throw new RpingException(RpingException.Kind.SETUP_FAILED, "no route to " + dst.getHostAddress() + ": "
                    + e.getMessage(), e);
        }
    }
}
