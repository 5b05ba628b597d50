package org.jwarp.soft;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import org.jwarp.soft.cm.SoftListener;
import org.jwarp.soft.cq.SoftCompletionQueue;
import org.jwarp.soft.verbs.SoftMemoryRegion;
import org.jwarp.soft.verbs.SoftProtectionDomain;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.ConnectionRequest;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.WorkCompletion;

/** Loopback test bench: one provider, one device, a listener, and helpers to connect both ends. */
final class SoftFixture implements AutoCloseable {
    static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    final SoftProvider provider;
    final SoftDevice device;
    final SoftProtectionDomain pd;
    final SoftCompletionQueue cq;
    final SoftProtectionDomain pd2;
    final SoftCompletionQueue cq2;
    SoftListener listener;

    SoftFixture() throws RdmaException {
        this(defaultConfig());
    }

    /** The fixture's configuration: the defaults with 5 s setup timeouts. */
    static SoftConfig defaultConfig() {
        return SoftConfig.defaults().withTimeouts(Duration.ofSeconds(5), Duration.ofSeconds(5), Duration.ofSeconds(5));
    }

    SoftFixture(SoftConfig config) throws RdmaException {
        this(new SoftProvider(config));
    }

    /** On {@code provider} (a test-only provider, e.g. with a longer reactor sleep). */
    SoftFixture(SoftProvider provider) throws RdmaException {
        this.provider = provider;
        device = provider.open(LOOPBACK);
        pd = device.allocateProtectionDomain();
        cq = device.createCompletionQueue(256);
        pd2 = device.allocateProtectionDomain();
        cq2 = device.createCompletionQueue(256);
    }

    SoftListener listen(int backlog) throws RdmaException {
        listener = (SoftListener) device.connectionManager().listen(new InetSocketAddress(LOOPBACK, 0), backlog);
        return listener;
    }

    InetSocketAddress address() {
        return listener.localAddress();
    }

    /** Applied to both QP configurations (SGEs, inline size). */
    java.util.function.UnaryOperator<QueuePairConfig> qpTweak = java.util.function.UnaryOperator.identity();

    QueuePairConfig initiatorQp() {
        return qpTweak.apply(QueuePairConfig.of(pd, cq, 32));
    }

    QueuePairConfig responderQp() {
        return qpTweak.apply(QueuePairConfig.of(pd2, cq2, 32));
    }

    SoftMemoryRegion region(SoftProtectionDomain p, int size, Access first, Access... more) throws RdmaException {
        return p.register(ByteBuffer.allocateDirect(size), EnumSet.of(first, more));
    }

    /** Both ends of one connection. */
    record Pair(Connection initiator, Connection responder) implements AutoCloseable {
        @Override
        public void close() {
            initiator.close();
            responder.close();
        }
    }

    /** Connects with {@code ip} while a thread accepts with {@code rp}. */
    /**
     * Longest wait for a connection setup or a completion that must come: generous, because a
     * loaded 2-core CI machine can stall a thread for seconds; a passing run never waits it out.
     */
    static final long SETUP_SECONDS = 30;

    Pair connect(ConnectionParameters ip, ConnectionParameters rp) throws Exception {
        return connect(ip, req -> rp);
    }

    Pair connect(ConnectionParameters ip, Function<ConnectionRequest, ConnectionParameters> decide) throws Exception {
        return connect(initiatorQp(), responderQp(), ip, decide);
    }

    /** As {@link #connect(ConnectionParameters, Function)} with QP configurations of the caller's (own CQs, PDs). */
    Pair connect(QueuePairConfig iq, QueuePairConfig rq, ConnectionParameters ip,
                 Function<ConnectionRequest, ConnectionParameters> decide) throws Exception {
        if (listener == null) {
            listen(8);
        }
        CompletableFuture<Connection> acc = CompletableFuture.supplyAsync(() -> {
            try {
                ConnectionRequest r = listener.next(Duration.ofSeconds(SETUP_SECONDS));
                return r.accept(rq, decide.apply(r));
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        Connection c = device.connectionManager().connect(address(), iq, ip, Duration.ofSeconds(SETUP_SECONDS));
        try {
            return new Pair(c, acc.get(SETUP_SECONDS, TimeUnit.SECONDS));
        } catch (ExecutionException e) {
            c.close();
            throw e;
        }
    }

    /** The soft stream behind a connection. */
    static SoftStream stream(org.jwarp.verbs.Connection c) {
        return ((SoftConnection) c).stream();
    }

    /** Waits up to 30 s for {@code cond}, else fails naming {@code what}. */
    static void waitUntil(String what, java.util.function.BooleanSupplier cond) throws InterruptedException {
        long end = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("timed out waiting until " + what);
            }
            Thread.sleep(1);
        }
    }

    static WorkCompletion[] wcs(int n) {
        WorkCompletion[] a = new WorkCompletion[n];
        for (int i = 0; i < n; i++) {
            a[i] = new WorkCompletion();
        }
        return a;
    }

    /** Waits for exactly one completion (fails after {@value #SETUP_SECONDS} s: "no hang", not a speed bound). */
    static WorkCompletion one(SoftCompletionQueue q) throws InterruptedException {
        WorkCompletion[] a = wcs(1);
        int n = q.await(a, 1, SETUP_SECONDS, TimeUnit.SECONDS);
        if (n != 1) {
            throw new AssertionError("no completion within " + SETUP_SECONDS + " s");
        }
        return a[0];
    }

    static ConnectionParameters.Builder p2p() {
        return ConnectionParameters.builder().peerToPeer(true);
    }

    static ConnectionParameters.Builder clientServer() {
        return ConnectionParameters.builder().peerToPeer(false).rtrTypes(java.util.Set.of());
    }

    @Override
    public void close() {
        provider.close();
    }
}
