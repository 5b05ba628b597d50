package org.jwarp.bench;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import org.jwarp.verbs.CompletionQueue;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.QueuePair;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaTimeoutException;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WorkCompletion;
import org.jwarp.verbs.WorkRequestException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The measured operations, shared by the JMH benchmarks and {@link BenchMain}, over a
 * {@link ProviderFixture}. Each mirrors a perftest program (RFC 5040 §4.3 RDMA messages):
 * <ul>
 *   <li>{@link #sendRtt}: Send ping-pong into a pre-posted receive (ib_send_lat);</li>
 *   <li>{@link #writeRtt}: RDMA Write of {@code size} bytes followed by a zero-length Send that
 *       tells the peer the data is placed (RFC 5040 §5.5 ordering); the peer answers the same way;</li>
 *   <li>{@link #writePollRtt}: ib_write_lat's scheme: each side writes into the other's buffer and
 *       polls the last 8 bytes for the iteration number (needs {@link Wait#SPIN});</li>
 *   <li>{@link #readRtt}: one RDMA Read of {@code size} bytes (ib_read_lat); no peer thread work;</li>
 *   <li>{@link #writeStream}: RDMA Writes of {@code size} bytes with {@code window} outstanding
 *       (ib_write_bw); one call is one completed Write.</li>
 * </ul>
 * The server side's echo runs on its own thread. Posting and reaping reuse one
 * {@link SendRequest} and {@link WorkCompletion} arrays: nothing is allocated per operation.
 */
final class ProviderPingPong implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ProviderPingPong.class);
    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());
    private static final long TIMEOUT_NANOS = ProviderFixture.TIMEOUT.toNanos();

    /** How a thread waits for a completion: busy-poll (perftest's way) or block in {@code await}. */
    enum Wait { SPIN, AWAIT }

    /** What the server thread does. */
    enum Peer { ECHO, WRITE_POLL, NONE }

    private final ProviderFixture f;
    private final int size;
    private final Wait wait;
    private final Thread peer;
    private volatile boolean running = true;
    private volatile Throwable peerFailure;

    private final SendRequest wr = new SendRequest();
    private final SendRequest notify = new SendRequest();
    private final WorkCompletion[] wcs = wcs(16);
    private final QueuePair[] qps;
    private final ByteBuffer clientRx;
    private final ByteBuffer clientTx;
    private final int last;
    private long counter;
    /** Send WR ids are unique: a provider may retire unsignaled WRs up to the signaled one's id. */
    private long seq;
    private int outstanding;
    private int next;

    ProviderPingPong(ProviderFixture f, Wait wait, Peer mode) throws RdmaException {
        this.f = f;
        this.size = f.size;
        this.wait = wait;
        this.last = Math.max(size, 8) - 8;
        qps = new QueuePair[f.client.conns.length];
        for (int i = 0; i < qps.length; i++) {
            qps[i] = f.client.conns[i].queuePair();
        }
        clientRx = f.client.rx.buffer().order(ByteOrder.nativeOrder());
        clientTx = f.client.tx.buffer().order(ByteOrder.nativeOrder());
        for (int i = 0; i < size; i++) {
            clientTx.put(i, (byte) i);
        }
        notify.send(0, null, 0, 0);
        if (mode == Peer.ECHO) {
            for (int i = 0; i < qps.length; i++) {
                qps[i].postRecv(i, f.client.rx, 0, size);
                f.server.conns[i].queuePair().postRecv(i, f.server.rx, 0, size);
            }
        }
        peer = mode == Peer.NONE ? null : new Thread(mode == Peer.ECHO ? this::echoLoop : this::writePollLoop,
                "bench-peer");
        if (peer != null) {
            peer.setDaemon(true);
            peer.start();
        }
    }

    static WorkCompletion[] wcs(int n) {
        WorkCompletion[] a = new WorkCompletion[n];
        for (int i = 0; i < n; i++) {
            a[i] = new WorkCompletion();
        }
        return a;
    }

    /** Next connection in round-robin order. */
    private int nextQp() {
        int i = next;
        next = i + 1 == qps.length ? 0 : i + 1;
        return i;
    }

    /** Send {@code size} bytes and wait for the echo. Returns the received length. */
    int sendRtt() throws Exception {
        int i = nextQp();
        qps[i].postSend(wr.send(++seq, f.client.tx, 0, size));
        return awaitRecv(i);
    }

    /** RDMA Write {@code size} bytes plus a zero-length Send; wait for the peer's Write + Send. */
    int writeRtt() throws Exception {
        int i = nextQp();
        wr.write(++seq, f.client.tx, 0, size, f.server.rx.address(), f.server.rx.rkey());
        wr.signaled = false;
        qps[i].postSend(wr);
        notify.wrId = ++seq;
        qps[i].postSend(notify);
        return awaitRecv(i);
    }

    /** ib_write_lat: write with the iteration number in the last long, poll ours for the answer. */
    long writePollRtt() throws Exception {
        long n = ++counter;
        LONGS.setVolatile(clientTx, last, n);
        wr.write(++seq, f.client.tx, 0, size, f.server.rx.address(), f.server.rx.rkey());
        wr.signaled = (n & 7) == 0;
        qps[0].postSend(wr);
        long deadline = System.nanoTime() + TIMEOUT_NANOS;
        int spins = 0;
        while ((long) LONGS.getVolatile(clientRx, last) != n) {
            Thread.onSpinWait();
            if ((++spins & 0xFFFF) == 0) {
                checkPeer();
                if (System.nanoTime() > deadline) {
                    throw new RdmaTimeoutException("no write from the peer for iteration " + n);
                }
            }
        }
        if (wr.signaled) {
            drainUntil(WcOpcode.RDMA_WRITE);
        }
        return n;
    }

    /** One RDMA Read of {@code size} bytes from the server's tx region. */
    int readRtt() throws Exception {
        int i = nextQp();
        qps[i].postSend(wr.read(++seq, f.client.rx, 0, size, f.server.tx.address(), f.server.tx.rkey()));
        return drainUntil(WcOpcode.RDMA_READ).byteLength;
    }

    /** Keeps {@code window} Writes in flight; returns once one more Write has been posted. */
    int writeStream(int window) throws Exception {
        if (outstanding == window) {
            drainUntil(WcOpcode.RDMA_WRITE);
            outstanding--;
        }
        qps[0].postSend(wr.write(++seq, f.client.tx, 0, size, f.server.rx.address(), f.server.rx.rkey()));
        outstanding++;
        return outstanding;
    }

    /** Waits for the Writes still in flight. */
    void drainStream() throws Exception {
        while (outstanding > 0) {
            drainUntil(WcOpcode.RDMA_WRITE);
            outstanding--;
        }
    }

    private int awaitRecv(int i) throws Exception {
        WorkCompletion wc = drainUntil(WcOpcode.RECV);
        int len = wc.byteLength;
        qps[(int) wc.wrId].postRecv(wc.wrId, f.client.rx, 0, size);
        return len;
    }

    private int pending;
    private int pendingAt;

    /**
     * Reaps client completions until one with {@code op}; earlier ones (Send completions of the
     * request) are consumed. Completions reaped in the same batch after it stay for the next call.
     */
    private WorkCompletion drainUntil(WcOpcode op) throws Exception {
        long deadline = 0;
        while (true) {
            while (pendingAt < pending) {
                WorkCompletion wc = wcs[pendingAt++];
                if (!wc.isSuccess()) {
                    throw new RdmaException("completion failed: " + wc);
                }
                if (wc.opcode == op) {
                    return wc;
                }
            }
            pendingAt = 0;
            pending = waitFor(f.client.cq, wcs);
            if (pending == 0) {
                checkPeer();
                if (deadline == 0) {
                    deadline = System.nanoTime() + TIMEOUT_NANOS;
                } else if (System.nanoTime() > deadline) {
                    throw new RdmaTimeoutException("no " + op + " completion within " + ProviderFixture.TIMEOUT);
                }
            }
        }
    }

    /** One poll round: spins up to ~64k times or blocks up to 100 ms; returns what it reaped. */
    private int waitFor(CompletionQueue cq, WorkCompletion[] out) throws InterruptedException {
        if (wait == Wait.AWAIT) {
            return cq.await(out, out.length, 100, TimeUnit.MILLISECONDS);
        }
        for (int spins = 0; spins < 65536; spins++) {
            int n = cq.poll(out, out.length);
            if (n > 0) {
                return n;
            }
            Thread.onSpinWait();
        }
        return 0;
    }

    private void checkPeer() throws RdmaException {
        Throwable t = peerFailure;
        if (t != null) {
            throw new RdmaException("peer thread failed: " + t, t);
        }
    }

    private void echoLoop() {
        WorkCompletion[] out = wcs(16);
        SendRequest reply = new SendRequest();
        SendRequest done = new SendRequest().send(0, null, 0, 0);
        MemoryRegion stx = f.server.tx;
        MemoryRegion srx = f.server.rx;
        long id = 0;
        long craddr = f.client.rx.address();
        int crkey = f.client.rx.rkey();
        try {
            while (running) {
                int n = waitFor(f.server.cq, out);
                for (int k = 0; k < n; k++) {
                    WorkCompletion wc = out[k];
                    if (!wc.isSuccess()) {
                        if (running) {
                            throw new RdmaException("peer completion failed: " + wc);
                        }
                        return;
                    }
                    if (wc.opcode != WcOpcode.RECV) {
                        continue;
                    }
                    int idx = (int) wc.wrId;
                    QueuePair qp = f.server.conns[idx].queuePair();
                    qp.postRecv(idx, srx, 0, size);
                    if (wc.byteLength == 0) {
                        reply.write(++id, stx, 0, size, craddr, crkey);
                        reply.signaled = false;
                        qp.postSend(reply);
                        done.wrId = ++id;
                        qp.postSend(done);
                    } else {
                        qp.postSend(reply.send(++id, stx, 0, wc.byteLength));
                    }
                }
            }
        } catch (WorkRequestException e) {
            if (running) {
                fail(e);
            }
        } catch (Throwable t) {
            fail(t);
        }
    }

    private void writePollLoop() {
        ByteBuffer rx = f.server.rx.buffer().order(ByteOrder.nativeOrder());
        ByteBuffer tx = f.server.tx.buffer().order(ByteOrder.nativeOrder());
        SendRequest reply = new SendRequest();
        WorkCompletion[] out = wcs(16);
        QueuePair qp = f.server.conns[0].queuePair();
        long seen = 0;
        long id = 0;
        try {
            while (running) {
                long v = (long) LONGS.getVolatile(rx, last);
                if (v == seen) {
                    Thread.onSpinWait();
                    continue;
                }
                seen = v;
                LONGS.setVolatile(tx, last, v);
                reply.write(++id, f.server.tx, 0, size, f.client.rx.address(), f.client.rx.rkey());
                reply.signaled = (v & 7) == 0;
                qp.postSend(reply);
                if (reply.signaled) {
                    while (running && f.server.cq.poll(out, out.length) == 0) {
                        Thread.onSpinWait();
                    }
                }
            }
        } catch (Throwable t) {
            if (running) {
                fail(t);
            }
        }
    }

    private void fail(Throwable t) {
        peerFailure = t;
        LOG.error("benchmark peer thread failed", t);
    }

    @Override
    public void close() {
        running = false;
        if (peer != null) {
            try {
                peer.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
