package org.jwarp.bench;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import org.jwarp.cli.WindowedPosts;
import org.jwarp.verbs.CompletionQueue;
import org.jwarp.verbs.QueuePair;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaTimeoutException;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WorkCompletion;

/**
 * The measured operations, shared by the JMH benchmarks and {@link BenchMain}, over a
 * {@link ProviderFixture}, with perftest's semantics (RFC 5040 §4.3 RDMA messages):
 * <ul>
 *   <li>{@link #sendRtt}: Send ping-pong into a pre-posted receive; the peer echoes (ib_send_lat);</li>
 *   <li>{@link #writeRtt}: ib_write_lat: each side RDMA-Writes {@code size} bytes into the other's
 *       buffer, waits for that Write's completion (every Write signaled, as perftest's) and polls
 *       the last byte of its own buffer for the iteration number; no Send, no receive completion.
 *       Memory polling is the only way to see a Write arrive, so both sides spin on memory in
 *       either {@link Wait} mode (perftest has no event mode for it). The spin calls
 *       {@link CompletionQueue#progress} (a no-op on RNICs and kernel devices; the soft provider's
 *       manual progress); {@code -Djwarp.bench.writeProgress=false} spins without it, perftest's
 *       loop verbatim;</li>
 *   <li>{@link #readRtt}: one RDMA Read of {@code size} bytes, post to completion (ib_read_lat);</li>
 *   <li>{@link #bandwidth}: ib_write_bw / ib_read_bw / ib_send_bw: {@code n} operations with up to
 *       {@code window} outstanding and every {@code window/4}-th Write or Send signaled (perftest's CQ
 *       moderation; Reads every one by default).
 *       Sends are flow-controlled by credits the peer returns as zero-length Sends after it has
 *       re-posted the receives (an iWARP Send without a posted receive is fatal, RFC 5041 §7.2,
 *       so perftest's reliance on RNR retry has no equivalent).</li>
 *   <li>{@link #bandwidthPerftest}: ib_write_bw / ib_send_bw / ib_read_bw as perftest 4.5 runs
 *       them by default, for comparing with perftest on the same device.</li>
 * </ul>
 * The server half ({@link PeerSide}) runs on its own thread in this JVM or in a {@link BenchPeer}
 * JVM ({@link ProviderFixture#remote}). Posting and reaping reuse one
 * {@link SendRequest} and {@link WorkCompletion} arrays: nothing is allocated per operation.
 */
final class ProviderPingPong implements AutoCloseable {
    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());
    private static final long TIMEOUT_NANOS = ProviderFixture.TIMEOUT.toNanos();
    /** Memory spins of the Write ping-pong call {@link CompletionQueue#progress} (default). */
    static final boolean WRITE_PROGRESS = Boolean.parseBoolean(System.getProperty("jwarp.bench.writeProgress", "true"));
    /**
     * Spin loops pause ({@link Thread#onSpinWait}, x86 PAUSE) between empty polls (default);
     * {@code -Djwarp.bench.spinPause=false} spins without, as perftest's loops do (under qemu TCG a
     * PAUSE leaves translated code and made round trips 1.0-2.3x slower).
     */
    static final boolean SPIN_PAUSE = Boolean.parseBoolean(System.getProperty("jwarp.bench.spinPause", "true"));
    private static final boolean LITTLE = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

    /** How a thread waits for a completion: busy-poll (perftest's way) or block in {@code await}. */
    enum Wait { SPIN, AWAIT }

    /** What the server thread does. */
    enum Peer {
        /** Echo every Send (send latency). */
        ECHO,
        /** Answer each Write by polling the last byte and writing back (write latency). */
        WRITE_POLL,
        /** Re-post receives and return credits (send bandwidth). */
        SEND_SINK,
        /**
         * Re-post receives and RDMA-Write the count received into the client's region (send
         * bandwidth with perftest's semantics, {@link #bandwidthPerftest}).
         */
        CREDIT_WRITE,
        /** Nothing (read latency, write and read bandwidth). */
        NONE
    }

    /** Bandwidth operations. */
    enum BwOp { SEND, WRITE, READ }

    private final ProviderFixture f;
    private final int size;
    private final Wait wait;
    /** The server half when it runs in this JVM; null when a {@link BenchPeer} JVM answers. */
    private final PeerSide peer;

    private final SendRequest wr = new SendRequest();
    private final WorkCompletion[] wcs = wcs(64);
    private final QueuePair[] qps;
    private final ByteBuffer clientRx;
    private final ByteBuffer clientTx;
    /** Index of the last payload byte, and the aligned word that holds it. */
    private final int last;
    private final int lastWord;
    private final int lastShift;
    private final int sinkWindow;
    private byte counter;
    /** Send WR ids are unique: a provider may retire unsignaled WRs up to the signaled one's id. */
    private long seq;
    private int next;

    /** perftest's send queue window for bandwidth (its default tx depth, DEF_TX_BW). */
    static final int PERFTEST_TX_DEPTH = 128;
    /** perftest's receive depth for ib_send_bw (DEF_RX_SEND). */
    static final int PERFTEST_RX_DEPTH = 512;
    /** perftest's CQ moderation (DEF_CQ_MOD): every 100th work request signaled... */
    static final int PERFTEST_CQ_MOD = 100;
    /** ...unless the message is larger than this (MSG_SIZE_CQ_MOD_LIMIT): then every one. */
    static final int PERFTEST_CQ_MOD_SIZE_LIMIT = 8192;

    ProviderPingPong(ProviderFixture f, Wait wait, Peer mode) throws RdmaException {
        this(f, wait, mode, 16);
    }

    /** {@code sinkWindow}: receives the peer keeps posted in {@link Peer#SEND_SINK} and {@link Peer#CREDIT_WRITE} mode. */
    ProviderPingPong(ProviderFixture f, Wait wait, Peer mode, int sinkWindow) throws RdmaException {
        this.f = f;
        this.size = f.size;
        this.wait = wait;
        this.sinkWindow = sinkWindow;
        this.credits = f.client.iwarp;
        if (size < 1) {
            throw new IllegalArgumentException("size must be at least 1 byte (the polled byte)");
        }
        this.last = size - 1;
        this.lastWord = last & ~7;
        this.lastShift = 8 * (LITTLE ? last - lastWord : 7 - (last - lastWord));
        qps = new QueuePair[f.client.conns.length];
        for (int i = 0; i < qps.length; i++) {
            qps[i] = f.client.conns[i].queuePair();
        }
        clientRx = f.client.rx.buffer().order(ByteOrder.nativeOrder());
        clientTx = f.client.tx.buffer().order(ByteOrder.nativeOrder());
        for (int i = 0; i < size; i++) {
            clientTx.put(i, (byte) (i + 1));
        }
        clientTx.put(last, (byte) 0);
        if (f.server != null) {
            // in-JVM server half; a peer JVM posts its receives before it accepts
            for (int i = 0; i < f.server.conns.length; i++) {
                PeerSide.prePost(mode, f.server.conns[i].queuePair(), i, f.server, size, sinkWindow);
            }
        }
        if (mode == Peer.ECHO) {
            for (int i = 0; i < qps.length; i++) {
                qps[i].postRecv(i, f.client.rx, 0, size);
            }
        } else if (mode == Peer.CREDIT_WRITE) {
            clientRx.putLong(0, 0); // the peer's receive count arrives here
        } else if (mode == Peer.SEND_SINK) {
            // one receive per credit the sink can have in flight, plus slack; re-posted as taken
            for (int i = 0; i < 6; i++) {
                qps[0].postRecv(i, f.client.rx, 0, 8);
            }
        }
        peer = f.server == null || mode == Peer.NONE ? null
                : new PeerSide(f.server, mode, wait == Wait.SPIN, size, sinkWindow, f.client.rx.address(), f.client.rx.rkey());
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
        WorkCompletion wc = drainUntil(WcOpcode.RECV);
        int len = wc.byteLength;
        qps[(int) wc.wrId].postRecv(wc.wrId, f.client.rx, 0, size);
        return len;
    }

    /**
     * ib_write_lat: write {@code size} bytes whose last byte is the iteration number into the
     * peer's buffer, then spin until the peer's Write puts the same number into the last byte of
     * ours. Every Write is signaled and its completion polled before the spin (perftest's loop);
     * the spin drives the provider's progress unless {@link #WRITE_PROGRESS} is off.
     */
    int writeRtt() throws Exception {
        byte n = ++counter;
        clientTx.put(last, n);
        wr.write(++seq, f.client.tx, 0, size, f.peerRxAddr, f.peerRxKey);
        wr.signaled = true;
        qps[0].postSend(wr);
        drainUntil(WcOpcode.RDMA_WRITE);
        CompletionQueue cq = f.client.cq;
        long deadline = 0;
        int spins = 0;
        while (lastByte(clientRx) != n) {
            if (WRITE_PROGRESS) {
                cq.progress();
            }
            if (SPIN_PAUSE) {
                Thread.onSpinWait();
            }
            if ((++spins & 0xFFFF) == 0) {
                checkPeer();
                long now = System.nanoTime();
                if (deadline == 0) {
                    deadline = now + TIMEOUT_NANOS;
                } else if (now > deadline) {
                    throw new RdmaTimeoutException("no write from the peer for iteration " + n);
                }
            }
        }
        return n;
    }

    /** The last payload byte of {@code b}, read with a volatile load of its aligned word. */
    private byte lastByte(ByteBuffer b) {
        return (byte) ((long) LONGS.getVolatile(b, lastWord) >>> lastShift);
    }

    /** One RDMA Read of {@code size} bytes from the server's tx region. */
    int readRtt() throws Exception {
        int i = nextQp();
        qps[i].postSend(wr.read(++seq, f.client.rx, 0, size, f.peerTxAddr, f.peerTxKey));
        return drainUntil(WcOpcode.RDMA_READ).byteLength;
    }

    /**
     * {@code n} operations of {@code size} bytes with at most {@code window} outstanding on the
     * first queue pair; returns the nanoseconds from the first post to the last completion (for
     * Sends: to the credit that says the peer took the last one). {@code n} is rounded up to a
     * multiple of the signaling interval; the rounded count is returned by {@link #lastCount()}.
     */
    long bandwidth(BwOp op, int n, int window) throws Exception {
        return bandwidth(op, n, window, 0);
    }

    /** As above with every {@code signalEvery}-th operation signaled (0: window/4, perftest's --cq-mod). */
    long bandwidth(BwOp op, int n, int window, int signalEvery) throws Exception {
        // Sends: the sink's window (its credit interval must match ours); Reads: at most ORD outstanding
        int w = op == BwOp.SEND ? sinkWindow : op == BwOp.READ ? Math.min(window, f.ord) : window;
        // Reads are all signaled by default: unsignaled 1 MiB Reads 12-16 deep stalled the soft provider
        int mod = op == BwOp.SEND ? Math.max(1, w / 4) : signalEvery > 0 ? Math.min(signalEvery, w)
                : op == BwOp.READ ? 1 : WindowedPosts.defaultSignalEvery(w);
        int count = (n + mod - 1) / mod * mod;
        lastCount = count;
        QueuePair qp = qps[0];
        long base = seq + 1;
        seq += count;
        long t0 = System.nanoTime();
        if (op == BwOp.SEND) {
            int posted = 0;
            int credited = 0;
            long deadline = System.nanoTime() + TIMEOUT_NANOS;
            while (credited < count) {
                while (posted < count && posted - credited < w) {
                    wr.send(base + posted, f.client.tx, 0, size);
                    wr.signaled = posted % mod == mod - 1;
                    qp.postSend(wr);
                    posted++;
                }
                int got = waitFor(f.client.cq, wcs);
                for (int k = 0; k < got; k++) {
                    WorkCompletion wc = wcs[k];
                    check(wc);
                    if (wc.opcode == WcOpcode.RECV) {
                        credited += mod;
                        qp.postRecv(wc.wrId, f.client.rx, 0, 8);
                    }
                }
                if (got == 0) {
                    checkPeer();
                    if (System.nanoTime() > deadline) {
                        throw new RdmaTimeoutException("send bandwidth: no credit within " + ProviderFixture.TIMEOUT);
                    }
                } else {
                    deadline = System.nanoTime() + TIMEOUT_NANOS;
                }
            }
            long t = System.nanoTime() - t0;
            // the last signaled Send's own completion may trail the credit
            drainPending();
            return t;
        }
        // the loop jwarp client runs (WindowedPosts): same window, signaling and retirement
        boolean write = op == BwOp.WRITE;
        int signalMod = mod;
        WindowedPosts.run(count, w, signalMod, 1, base, (from, k) -> {
            for (int i = from; i < from + k; i++) {
                if (write) {
                    wr.write(base + i, f.client.tx, 0, size, f.peerRxAddr, f.peerRxKey);
                } else {
                    wr.read(base + i, f.client.rx, 0, size, f.peerTxAddr, f.peerTxKey);
                }
                wr.signaled = WindowedPosts.signaled(i, count, signalMod);
                qp.postSend(wr);
            }
        }, this::reapChecked, wcs);
        return System.nanoTime() - t0;
    }

    private long reapDeadline;

    /** One {@link #waitFor} round for {@link WindowedPosts}: failed completions throw, as does a silence of {@link ProviderFixture#TIMEOUT}. */
    private int reapChecked(WorkCompletion[] out) throws RdmaException, InterruptedException {
        int got = waitFor(f.client.cq, out);
        for (int k = 0; k < got; k++) {
            check(out[k]);
        }
        if (got > 0) {
            reapDeadline = 0;
            return got;
        }
        checkPeer();
        long now = System.nanoTime();
        if (reapDeadline == 0) {
            reapDeadline = now + TIMEOUT_NANOS;
        } else if (now > reapDeadline) {
            reapDeadline = 0;
            throw new RdmaTimeoutException("bandwidth: no completion within " + ProviderFixture.TIMEOUT);
        }
        return 0;
    }

    /** Sends {@link #bandwidthPerftest} posted over this connection's life (against the peer's receive count). */
    private long sentTotal;
    /** Whether {@link #bandwidthPerftest}'s Sends wait for the peer's credits (iWARP devices). */
    private final boolean credits;

    /**
     * perftest's send window for {@code n} operations: its tx depth, cut to {@code n} (perftest
     * cuts tx_depth to the iteration count).
     */
    static int perftestTxDepth(int n) {
        return Math.max(1, Math.min(PERFTEST_TX_DEPTH, n));
    }

    /**
     * perftest's CQ moderation for a message of {@code size} bytes and {@code n} operations: every
     * 100th work request signaled, every one above 8 KiB (perftest turns moderation off there "to
     * prevent incorrect BW calculation"), never more than the tx depth apart.
     */
    static int perftestCqMod(int size, int n) {
        int mod = size > PERFTEST_CQ_MOD_SIZE_LIMIT ? 1 : PERFTEST_CQ_MOD;
        return Math.min(mod, perftestTxDepth(n));
    }

    /** perftest's ib_send_bw receive depth: 512, cut to {@code n}. */
    static int perftestRxDepth(int n) {
        return Math.max(1, Math.min(PERFTEST_RX_DEPTH, n));
    }

    /**
     * One pass of {@code n} operations as perftest's run_iter_bw makes them, the first {@code len}
     * bytes of the {@code size}-byte buffers each (the full size when measuring, less when warming
     * up the same code cheaply); returns the nanoseconds from before the first post to the reaping
     * of the last operation's completion, perftest's "BW average" interval (its byte count is
     * {@code n * len}). One queue pair; work requests posted one at a time (post list 1) while
     * fewer than {@link #perftestTxDepth} are uncompleted; request {@code k} signaled when
     * {@code k % mod == mod - 1} or it is the last ({@link #perftestCqMod}); a completion retires
     * its request and every one before it. Reads: the same window; the connection's ORD (asked for
     * at the device's maximum, as perftest's outstanding-reads default) bounds those in flight,
     * the rest wait in the send queue. Sends ({@link Peer#CREDIT_WRITE} peer): a Send is posted
     * only while the Sends posted so far, plus one, less the receive count the peer last wrote
     * into the first 8 bytes of the client's region, stay under the peer's receive depth
     * ({@code sinkWindow}), as perftest does over iWARP (a Send without a posted receive is fatal
     * there, RFC 5041 §7.2); on other devices (rxe) without that bound, as perftest relies on RNR
     * retry there. Spinning polls as perftest's loop does: one poll after each round of
     * posts, the bounded native spin when nothing can be posted until a completion arrives.
     */
    long bandwidthPerftest(BwOp op, int n, int len) throws Exception {
        if (len < 1 || len > size) {
            throw new IllegalArgumentException("length " + len + " outside 1.." + size);
        }
        int depth = perftestTxDepth(n);
        int mod = perftestCqMod(size, n);
        QueuePair qp = qps[0];
        CompletionQueue cq = f.client.cq;
        long base = seq + 1;
        seq += n;
        int posted = 0;
        int completed = 0;
        long idle = 0;
        long deadline = 0;
        long t0 = System.nanoTime();
        while (completed < n) {
            while (posted < n && posted - completed < depth) {
                if (op == BwOp.SEND) {
                    if (credits && sentTotal + 1 - (long) LONGS.getVolatile(clientRx, 0) >= sinkWindow) {
                        break;
                    }
                    wr.send(base + posted, f.client.tx, 0, len);
                    sentTotal++;
                } else if (op == BwOp.WRITE) {
                    wr.write(base + posted, f.client.tx, 0, len, f.peerRxAddr, f.peerRxKey);
                } else {
                    wr.read(base + posted, f.client.rx, 0, len, f.peerTxAddr, f.peerTxKey);
                }
                wr.signaled = posted % mod == mod - 1 || posted == n - 1;
                qp.postSend(wr);
                posted++;
            }
            // nothing more can be posted before a completion: spin for one; otherwise (a Send held
            // back by the peer's credit) a single poll, then the credit is read again
            int got = posted == n || posted - completed == depth ? waitFor(cq, wcs) : cq.poll(wcs, wcs.length);
            for (int k = 0; k < got; k++) {
                WorkCompletion wc = wcs[k];
                check(wc);
                int done = (int) (wc.wrId - base) + 1;
                if (done > completed) {
                    completed = done;
                }
            }
            if (got > 0) {
                idle = 0;
                deadline = 0;
            } else if ((++idle & 0xFFFF) == 0 || posted == n || posted - completed == depth) {
                checkPeer();
                long now = System.nanoTime();
                if (deadline == 0) {
                    deadline = now + TIMEOUT_NANOS;
                } else if (now > deadline) {
                    throw new RdmaTimeoutException(op + " bandwidth: " + completed + " of " + n + " completed, "
                            + posted + " posted, nothing more within " + ProviderFixture.TIMEOUT);
                }
            }
        }
        return System.nanoTime() - t0;
    }

    private int lastCount;

    /** The operation count of the last {@link #bandwidth} call after rounding. */
    int lastCount() {
        return lastCount;
    }

    private int pending;
    private int pendingAt;

    /** Completions reaped in a batch but not yet looked at are dropped (bandwidth tail). */
    private void drainPending() throws Exception {
        while (pendingAt < pending) {
            check(wcs[pendingAt++]);
        }
        long end = System.nanoTime() + 5_000_000L;
        while (System.nanoTime() < end && f.client.cq.poll(wcs, wcs.length) > 0) {
            end = System.nanoTime() + 5_000_000L;
        }
        pending = 0;
        pendingAt = 0;
    }

    private static void check(WorkCompletion wc) throws RdmaException {
        if (!wc.isSuccess()) {
            throw new RdmaException("completion failed: " + wc);
        }
    }

    /**
     * Reaps client completions until one with {@code op}; earlier ones (Send completions of the
     * request) are consumed. Completions reaped in the same batch after it stay for the next call.
     */
    private WorkCompletion drainUntil(WcOpcode op) throws Exception {
        long deadline = 0;
        while (true) {
            while (pendingAt < pending) {
                WorkCompletion wc = wcs[pendingAt++];
                check(wc);
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
        return spinFor(cq, out);
    }

    /**
     * Up to 65,536 polls until a completion: without {@link #SPIN_PAUSE}, one
     * {@link CompletionQueue#spin} (on DiSNI a single native call that loops over ibv_poll_cq, as
     * perftest's loop does); with it, polls with a PAUSE between them.
     */
    static int spinFor(CompletionQueue cq, WorkCompletion[] out) {
        if (!SPIN_PAUSE) {
            return cq.spin(out, out.length, 65536, 0);
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
        Throwable t = peer == null ? null : peer.failure();
        if (t != null) {
            throw new RdmaException("peer thread failed: " + t, t);
        }
    }

    @Override
    public void close() {
        if (peer != null) {
            peer.close();
        }
    }
}
