package org.jwarp.disni.impl;

import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmId;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.jwarp.disni.NativeErrnoException;
import org.jwarp.disni.natives.JwarpNative;
import org.jwarp.ground.TermCode;
import org.jwarp.mpa.MpaDecodeException;
import org.jwarp.negotiation.NegotiationAction;
import org.jwarp.negotiation.NegotiationDecision;
import org.jwarp.negotiation.NegotiationOutcome;
import org.jwarp.provider.CmNegotiation;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionInfo;
import org.jwarp.verbs.ConnectionManager;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.ConnectionRejectedException;
import org.jwarp.verbs.ConnectionTerminatedException;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaTimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * rdma_cm connection setup for a {@link DisniDevice}, on the device's event channel: listen,
 * connect, and the RFC 6581 section 9.1 IRD/ORD negotiation decided and checked by the project's
 * engines ({@link CmNegotiation}). On iWARP the kernel's MPA layer carries the values given in
 * rdma_conn_param; on RoCE the engine's enhanced data travels as
 * {@link org.jwarp.negotiation.CmPrivateData}. Every wait has a deadline; every CM error becomes an
 * exception.
 */
final class DisniConnectionManager implements ConnectionManager {
    private static final Logger LOG = LoggerFactory.getLogger(DisniConnectionManager.class);
    static final int RESOLVE_MS = 2000;
    static final Duration ACCEPT_TIMEOUT = Duration.ofSeconds(15);

    private final DisniDevice device;
    private final RdmaCm cm;
    private final CmDispatcher dispatcher;
    private final InetAddress localAddress;
    private final boolean roce;
    final CmNegotiation negotiation;

    DisniConnectionManager(DisniDevice device) {
        this.device = device;
        this.cm = device.cm;
        this.dispatcher = device.dispatcher;
        this.localAddress = device.localAddress;
        this.roce = device.roce;
        this.negotiation = new CmNegotiation(device.info());
    }

    private void checkOpen() throws RdmaException {
        device.checkOpen();
    }

    @Override
    public Listener listen(InetSocketAddress address, int backlog) throws RdmaException {
        checkOpen();
        RdmaCmId id = null;
        try {
            id = dispatcher.createId();
            final RdmaCmId lid = id;
            dispatcher.locked(() -> {
                cm.bindAddr(lid, address);
                cm.listen(lid, backlog);
                return null;
            });
            InetSocketAddress bound = dispatcher.locked(() -> (InetSocketAddress) cm.getSrcAddr(lid));
            DisniListener l = new DisniListener(device, id, bound);
            device.track(l);
            return l;
        } catch (IOException e) {
            if (id != null) {
                dispatcher.destroy(id, false);
            }
            throw new RdmaException("listen on " + address + ": " + e.getMessage(), e);
        }
    }

    /** The platform's EADDRINUSE as the native layer reports it in {@link NativeErrnoException#errno()}. */
    static final int EADDRINUSE = JwarpNative.probe(JwarpNative.PROBE_ERRNO_EADDRINUSE);
    /** Fresh rdma_cm ids tried when rdma_connect reports EADDRINUSE. */
    private static final int ADDRINUSE_ATTEMPTS = 3;

    /**
     * Connects within {@code timeout}. Kernel iWARP (siw) binds the TCP source port that rdma_cm
     * picked in its own port space; when a kernel TCP socket already holds that port,
     * rdma_connect fails at once with EADDRINUSE (seen in the guest with the soft provider's
     * sockets on the same address). A fresh id gets a fresh port, so that case is retried.
     */
    @Override
    public Connection connect(InetSocketAddress remote, QueuePairConfig qpc, ConnectionParameters params,
            Duration timeout) throws RdmaException {
        checkOpen();
        long deadline = System.nanoTime() + timeout.toNanos();
        for (int attempt = 1; ; attempt++) {
            try {
                return connectOnce(remote, qpc, params, deadline);
            } catch (RdmaException e) {
                if (attempt >= ADDRINUSE_ATTEMPTS || !retryable(e) || System.nanoTime() >= deadline) {
                    throw e;
                }
                LOG.debug("connect to {}: {}; retrying with a fresh rdma_cm id", remote, e.getMessage());
            }
        }
    }

    /** Only rdma_connect's own EADDRINUSE (typed errno from the native layer) is worth a fresh id. */
    static boolean retryable(RdmaException e) {
        return !(e instanceof ConnectionRejectedException) && NativeErrnoException.errnoOf(e) == EADDRINUSE;
    }

    private Connection connectOnce(InetSocketAddress remote, QueuePairConfig qpc, ConnectionParameters params,
            long deadline) throws RdmaException {
        CmNegotiation.Initiator neg = negotiation.initiator(params);
        int ird = neg.responderResources();
        int ord = neg.initiatorDepth();
        byte[] pd = neg.privateData();
        RdmaCmId id;
        try {
            id = dispatcher.createId();
        } catch (IOException e) {
            throw new RdmaException("rdma_create_id: " + e.getMessage(), e);
        }
        DisniQp qp = null;
        boolean ok = false;
        boolean abandoned = false;
        try {
            int ms = remainingMs(deadline, RESOLVE_MS);
            dispatcher.locked(() -> {
                cm.bindAddr(id, new InetSocketAddress(localAddress, 0));
                cm.resolveAddr(id, null, remote, ms);
                return null;
            });
            expect(dispatcher.await(id, deadline, "address resolution of " + remote), CmEvent.ADDR_RESOLVED, remote,
                    "address resolution");
            int ms2 = remainingMs(deadline, RESOLVE_MS);
            dispatcher.locked(() -> {
                cm.resolveRoute(id, ms2);
                return null;
            });
            expect(dispatcher.await(id, deadline, "route resolution to " + remote), CmEvent.ROUTE_RESOLVED, remote,
                    "route resolution");
            qp = device.createQp(id, qpc);
            if (qpc.beforeConnect() != null) {
                qpc.beforeConnect().prepare(qp); // receives posted before rdma_connect, as with rdma_cm
            }
            final DisniQp q = qp;
            long idp = CmDispatcher.ptr(id);
            int w = connectWithin(id, idp, ird, ord, params, pd, deadline, remote);
            if (w != CONNECT_RETURNED) {
                abandoned = true; // the helper thread destroys the id once rdma_connect returns
                if (w == CONNECT_INTERRUPTED) {
                    throw new RdmaException("connect to " + remote + ": interrupted (cancelled) during rdma_connect");
                }
                throw new RdmaTimeoutException("connect to " + remote + ": rdma_connect did not return within the timeout");
            }
            CmEvent ev = dispatcher.await(id, deadline, "connect to " + remote);
            if (ev.type() == CmEvent.REJECTED) {
                throw neg.rejected(ev, ev.status(), remote);
            }
            expect(ev, CmEvent.ESTABLISHED, remote, "connect");
            NegotiationDecision d;
            byte[] peerPd;
            try {
                d = neg.onReply(ev, false);
                peerPd = neg.peerPrivateData(d.outcome());
            } catch (MpaDecodeException | IllegalArgumentException bad) {
                disconnectQuietly(id);
                throw new ConnectionTerminatedException("connect to " + remote + ": the responder's RFC 6581 section 9 "
                        + "data is not usable: " + bad.getMessage(), TermCode.MPA_INVALID_REQ_REP, false);
            }
            NegotiationOutcome o = d.outcome();
            if (d.action() != NegotiationAction.ESTABLISH) {
                disconnectQuietly(id);
                if (d.term() != null) {
                    throw new ConnectionTerminatedException("connect to " + remote + ": " + o.reason()
                            + "; disconnected (rdma_cm cannot send the MPA TERM itself)", d.term(), false);
                }
                throw new RdmaException("connect to " + remote + " closed: " + o.reason());
            }
            LOG.debug("connect to {}: {} (event rr={} id={})", remote, o, ev.responderResources(), ev.initiatorDepth());
            q.established(o.ord());
            InetSocketAddress local = dispatcher.locked(() -> (InetSocketAddress) cm.getSrcAddr(id));
            ConnectionInfo ci = CmNegotiation.info(local, remote, o, o.peerValuesKnown() ? o.peerIrd() : -1,
                    o.peerValuesKnown() ? o.peerOrd() : -1, peerPd, roce);
            DisniConnection c = new DisniConnection(device, id, q, ci);
            device.track(c);
            ok = true;
            return c;
        } catch (IOException e) {
            if (e instanceof RdmaException r) {
                throw r;
            }
            throw new RdmaException("connect to " + remote + ": " + e.getMessage(), e);
        } catch (IllegalStateException e) {
            throw new RdmaException("connect to " + remote + ": " + e.getMessage(), e);
        } finally {
            if (!ok) {
                if (qp != null) {
                    qp.failed(); // released with its id: later posts are refused
                    DisniDevice.detach(qp, qpc);
                }
                if (!abandoned) {
                    dispatcher.destroy(id, qp != null);
                }
            }
        }
    }

    /**
     * Runs rdma_connect on a helper thread: kernel iWARP drivers (siw) connect the TCP stream
     * synchronously inside rdma_connect, which would otherwise block past the caller's deadline
     * (about 130 s of SYN retries towards a silent address). Returns false on timeout; the
     * helper then destroys the id itself when the call returns.
     */
    static final int CONNECT_RETURNED = 0;
    static final int CONNECT_TIMED_OUT = 1;
    static final int CONNECT_INTERRUPTED = 2;

    private int connectWithin(RdmaCmId id, long idp, int ird, int ord, ConnectionParameters params, byte[] pd,
            long deadline, InetSocketAddress remote) throws RdmaException {
        java.util.concurrent.CompletableFuture<Void> f = new java.util.concurrent.CompletableFuture<>();
        java.util.concurrent.atomic.AtomicBoolean gaveUp = new java.util.concurrent.atomic.AtomicBoolean();
        Thread t = new Thread(() -> {
            try {
                JwarpNative.connect(idp, ird, ord, params.retryCount(), params.rnrRetryCount(), pd);
                f.complete(null);
            } catch (Throwable e) {
                f.completeExceptionally(e);
            }
            synchronized (gaveUp) {
                if (gaveUp.get()) {
                    dispatcher.destroy(id, true);
                }
            }
        }, "jwarp-disni-connect");
        t.setDaemon(true);
        t.start();
        try {
            f.get(Math.max(1, deadline - System.nanoTime()), java.util.concurrent.TimeUnit.NANOSECONDS);
            return CONNECT_RETURNED;
        } catch (java.util.concurrent.TimeoutException e) {
            synchronized (gaveUp) {
                if (!f.isDone()) {
                    gaveUp.set(true);
                    return CONNECT_TIMED_OUT;
                }
            }
            return failConnect(f, remote);
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable c = e.getCause();
            throw new RdmaException("connect to " + remote + ": " + c.getMessage(), c);
        } catch (InterruptedException e) {
            // a cancel: rdma_connect may still block in the kernel (siw connects TCP inside it), and
            // destroying the id now would wait for it under the channel lock, stalling every CM call
            // of the device; the helper thread destroys the id once rdma_connect returns
            Thread.currentThread().interrupt();
            synchronized (gaveUp) {
                if (!f.isDone()) {
                    gaveUp.set(true);
                    return CONNECT_INTERRUPTED;
                }
            }
            return failConnect(f, remote);
        }
    }

    private static int failConnect(java.util.concurrent.CompletableFuture<Void> f, InetSocketAddress remote)
            throws RdmaException {
        try {
            f.join();
            return CONNECT_RETURNED;
        } catch (java.util.concurrent.CompletionException e) {
            Throwable c = e.getCause();
            throw new RdmaException("connect to " + remote + ": " + c.getMessage(), c);
        }
    }

    void disconnectQuietly(RdmaCmId id) {
        try {
            dispatcher.locked(() -> cm.disconnect(id));
        } catch (IOException e) {
            LOG.debug("rdma_disconnect: {}", e.toString());
        }
    }

    static int remainingMs(long deadline, int cap) throws RdmaTimeoutException {
        long left = (deadline - System.nanoTime()) / 1_000_000L;
        if (left <= 0) {
            throw new RdmaTimeoutException("connection setup timed out");
        }
        return (int) Math.min(left, cap);
    }

    static void expect(CmEvent ev, int type, InetSocketAddress remote, String step) throws RdmaException {
        if (ev.type() == type) {
            return;
        }
        String why;
        if (ev.type() == CmEvent.ADDR_ERROR) {
            why = "address error";
        } else if (ev.type() == CmEvent.ROUTE_ERROR) {
            why = "route error";
        } else if (ev.type() == CmEvent.UNREACHABLE) {
            why = "peer unreachable";
        } else if (ev.type() == CmEvent.CONNECT_ERROR) {
            why = "connect error";
        } else if (ev.type() == CmEvent.REJECTED) {
            why = "rejected (no listener or refused)";
        } else {
            why = "unexpected " + ev.typeName();
        }
        throw new RdmaException(step + " with " + remote + " failed: " + why + " (" + ev.typeName() + ", status "
                + ev.status() + ")");
    }

}
