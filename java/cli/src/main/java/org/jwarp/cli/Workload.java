package org.jwarp.cli;

import static org.jwarp.cli.ClientCommand.CREDIT_TAG;
import static org.jwarp.cli.ClientCommand.ECHO_TAG;
import static org.jwarp.cli.ClientCommand.WRITE_START_LENGTH;
import static org.jwarp.cli.ClientCommand.WRITE_TAG;
import static org.jwarp.cli.ClientCommand.name;

import java.lang.invoke.VarHandle;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;

import org.jwarp.cli.ClientCommand.Hello;
import org.jwarp.cli.ClientCommand.Progress;
import org.jwarp.cli.ClientCommand.RemoteBuffer;
import org.HdrHistogram.Histogram;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.CompletionQueue;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionRejectedException;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.ProtectionDomain;
import org.jwarp.verbs.QueuePair;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.CompletionChannel;
import org.jwarp.verbs.SharedReceiveQueue;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.SendOpcode;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;

/**
 * The active side of the workload on one connection (used by {@code client} and {@code demo}):
 * one local region, laid out as [send area | receive area], plus the remote buffer.
 */
final class Workload implements AutoCloseable {
    private static final long RECV = 1L << 40;
    private static final long AWAIT_MS = 10_000;

    private final ProtectionDomain pd;
    private final CompletionQueue cq;
    /** --events: the channel the CQ signals, else null. */
    private CompletionChannel channel;
    /** --srq: where receives are posted, else null (the QP's own receive queue). */
    private SharedReceiveQueue srq;
    private final MemoryRegion mr;
    private final Connection conn;
    private final RemoteBuffer remote;
    private final int bufSize;
    private final int window;
    private final WorkCompletion[] wcs = new WorkCompletion[64];
    private final SendRequest wr = new SendRequest();
    private final WorkSettings settings;
    /** Preallocated WRs of one chain (--post-list), linked as they are filled. */
    private final SendRequest[] chain;
    private long nextId;

    private Workload(ProtectionDomain pd, CompletionQueue cq, MemoryRegion mr, Connection conn,
                     RemoteBuffer remote, int bufSize, int window, WorkSettings settings) {
        this.settings = settings;
        this.chain = new SendRequest[settings.postList()];
        for (int i = 0; i < chain.length; i++) {
            chain[i] = new SendRequest();
        }
        this.pd = pd;
        this.cq = cq;
        this.mr = mr;
        this.conn = conn;
        this.remote = remote;
        this.bufSize = bufSize;
        this.window = window;
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new WorkCompletion();
        }
    }

    static Workload connect(Device dev, InetSocketAddress server, ConnectionParameters params, int bufSize,
                            int window, Duration timeout) throws RdmaException {
        return connect(dev, server, params, bufSize, window, timeout, WorkSettings.DEFAULT);
    }

    static Workload connect(Device dev, InetSocketAddress server, ConnectionParameters params, int bufSize,
                            int window, Duration timeout, WorkSettings settings) throws RdmaException {
        ProtectionDomain pd = dev.allocateProtectionDomain();
        CompletionQueue cq = null;
        CompletionChannel ch = null;
        SharedReceiveQueue sq = null;
        MemoryRegion mr = null;
        try {
            ch = settings.events() ? dev.createCompletionChannel() : null;
            cq = dev.createCompletionQueue(4 * window + 16, ch);
            sq = settings.srq() ? pd.createSharedReceiveQueue(window + 4, settings.sge()) : null;
            int slot = Math.max(16, bufSize);
            mr = pd.register(ByteBuffer.allocateDirect(slot * (window + 1)),
                    EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
            ByteBuffer b = mr.buffer();
            for (int i = 0; i < b.capacity(); i++) {
                b.put(i, (byte) i);
            }
            // the receive area (after the send slot) takes the server's write-latency Writes
            Hello hello = new Hello(bufSize, window, mr.address() + slot, mr.rkey());
            ConnectionParameters p = params.toBuilder().privateData(hello.encode()).build();
            QueuePairConfig qpc = new QueuePairConfig(pd, cq, cq, window + 4, window + 4)
                    .withSge(settings.sge(), settings.sge()).withInline(settings.inlineSize()).withSrq(sq);
            Connection c;
            try {
                c = dev.connectionManager().connect(server, qpc, p, timeout);
            } catch (ConnectionRejectedException e) {
                throw withReason(e);
            } catch (RdmaException e) {
                if (UserError.isUnreachable(e)) {
                    throw UserError.connectFailed(server, e);
                }
                throw e;
            }
            RemoteBuffer rb;
            try {
                rb = RemoteBuffer.decode(c.info().peerPrivateData());
            } catch (RdmaException e) {
                c.close();
                throw e;
            }
            Workload w = new Workload(pd, cq, mr, c, rb, bufSize, window, settings);
            w.channel = ch;
            w.srq = sq;
            return w;
        } catch (RdmaException | RuntimeException e) {
            Closing.all(mr, sq, cq, ch);
            pd.close();
            throw e;
        }
    }

    /** The server's reason for a reject travels as its private data (ASCII); name it. */
    static ConnectionRejectedException withReason(ConnectionRejectedException e) {
        byte[] pd = e.privateData();
        if (pd.length == 0) {
            return e;
        }
        StringBuilder why = new StringBuilder(pd.length);
        for (byte b : pd) {
            why.append(b >= 0x20 && b < 0x7f ? (char) b : '?');
        }
        ConnectionRejectedException r = new ConnectionRejectedException(e.getMessage() + "; the server says: " + why,
                pd, e.peerIrd(), e.requiredOrd());
        r.initCause(e);
        return r;
    }

    Connection connection() {
        return conn;
    }

    /** The last byte of the receive area's first {@code size} bytes (where the server's Writes land). */
    byte receivedLastByte(int size) {
        VarHandle.acquireFence();
        return mr.buffer().get(slotSize() + size - 1);
    }

    private int slotSize() {
        return Math.max(16, bufSize);
    }

    /**
     * Latency of {@code iters} operations of {@code size} bytes, in nanoseconds, with perftest's
     * semantics: a Send ping-pong round trip, a Write ping-pong round trip (each side polls the
     * last byte of its buffer), or one Read from post to completion.
     */
    Histogram latency(SendOpcode op, int size, int iters, Progress progress) throws RdmaException,
            InterruptedException {
        return latency(op, size, 0, iters, progress);
    }

    /**
     * As above after {@code warm} operations of the same kind that are not recorded (the JIT's
     * warm-up on both ends, counted in operations as {@code BenchMain --warmup-iters} counts them)
     * and then batches of {@code warm / 10} until this JVM's JIT is quiet ({@link JitQuiet}); none
     * when {@code warm} is 0. {@link #lastLatencyJitMillis} tells how much JIT work still fell into
     * the recorded phase.
     */
    Histogram latency(SendOpcode op, int size, int warm, int iters, Progress progress) throws RdmaException,
            InterruptedException {
        checkSize(size);
        if (warm < 0) {
            throw new IllegalArgumentException("--warmup must be >= 0");
        }
        if (op == SendOpcode.RDMA_WRITE && size < 1) {
            throw new IllegalArgumentException("--size: write latency needs at least 1 byte (the polled byte)");
        }
        if (warm > 0) {
            // the count first, then batches until this JVM's JIT finished nothing for half a second
            // (as scripts/bench's BenchMain): by count alone the recorded phase ran while C2 still
            // compiled the loop on a 2-core host
            // the warm-up records into a histogram of its own: the recording path compiles with the
            // rest of the loop, not inside the recorded phase (60-110 ms of JIT there before)
            Histogram scratch = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
            latencyPhase(op, size, warm, scratch, true, progress);
            int batch = Math.max(1, warm / 10);
            JitQuiet quiet = new JitQuiet();
            do {
                latencyPhase(op, size, batch, scratch, true, progress);
            } while (!quiet.settled());
        }
        long jit0 = JitQuiet.compilationMillis();
        Histogram h = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
        latencyPhase(op, size, iters, h, false, progress);
        lastLatencyJitMillis = jit0 < 0 ? -1 : JitQuiet.compilationMillis() - jit0;
        return h;
    }

    /** This JVM's JIT compilation time during the last recorded latency phase in ms (-1: not reported). */
    long lastLatencyJitMillis = -1;

    /** {@code count} operations, each recorded into {@code h} ({@code warmUp}: a warm-up phase's own histogram). */
    private void latencyPhase(SendOpcode op, int size, int count, Histogram h, boolean warmUp, Progress progress)
            throws RdmaException, InterruptedException {
        if (op == SendOpcode.RDMA_WRITE) {
            writeLatency(size, count, h, warmUp, progress);
            return;
        }
        QueuePair qp = conn.queuePair();
        String phase = name(op) + (warmUp ? " latency warm-up" : " latency");
        int recvOff = slotSize();
        if (op == SendOpcode.SEND) {
            postRecv(qp, RECV, mr, recvOff, slotSize());
            if (size > 0) {
                mr.buffer().put(0, ECHO_TAG);
            }
        }
        for (int i = 0; i < count; i++) {
            long t0 = System.nanoTime();
            post(op, size);
            int pending = op == SendOpcode.SEND ? 2 : 1;
            while (pending > 0) {
                int n = reap();
                for (int k = 0; k < n; k++) {
                    pending--;
                    if (wcs[k].opcode == WcOpcode.RECV) {
                        if (wcs[k].byteLength != size) {
                            throw new RdmaException("echo of " + wcs[k].byteLength + " bytes, expected " + size);
                        }
                        if (settings.verify()) {
                            verify("echoed Send", recvOff, 0, size, false);
                        }
                        if (i + 1 < count) {
                            postRecv(qp, RECV, mr, recvOff, slotSize());
                        }
                    }
                }
            }
            long t = System.nanoTime() - t0;
            h.recordValue(Math.min(t, h.getHighestTrackableValue()));
            if (settings.verify() && op == SendOpcode.RDMA_READ) {
                verify("RDMA Read", 0, 0, size, true);
            }
            if (progress != null) {
                progress.update(phase, i + 1, count);
            }
        }
    }

    /**
     * ib_write_lat: tells the server to start (a {@link ClientCommand#WRITE_TAG} Send, answered with a
     * zero-length Send once it is ready), then for each iteration writes {@code size} bytes
     * whose last byte is the iteration number into the server's buffer and spins until the
     * server's Write puts the same number into the last byte of our receive area. No Send and
     * no receive completion is involved in an iteration. As perftest's loop and the benchmarks'
     * ({@code ProviderPingPong.writeRtt}): every Write is signaled and its completion reaped before
     * the spin, and the spin drives the provider's progress ({@link CompletionQueue#progress}: the
     * soft provider's manual progress, a no-op elsewhere). Each iteration is recorded into {@code h}
     * ({@code warmUp}: a warm-up phase's own histogram); the server answers as many as the start
     * message names, so phases follow one another.
     */
    private void writeLatency(int size, int total, Histogram h, boolean warmUp, Progress progress)
            throws RdmaException, InterruptedException {
        QueuePair qp = conn.queuePair();
        ByteBuffer b = mr.buffer();
        int recvOff = slotSize();
        int mine = recvOff + size - 1;
        b.put(mine, (byte) 0);
        postRecv(qp, RECV, mr, recvOff, slotSize());
        String phase = warmUp ? "write latency warm-up" : "write latency";
        ByteBuffer start = mr.buffer().order(ByteOrder.BIG_ENDIAN);
        start.put(0, WRITE_TAG).put(1, (byte) 0).put(2, (byte) 0).put(3, (byte) 0).putInt(4, size).putInt(8, total);
        wr.send(++nextId, mr, 0, WRITE_START_LENGTH);
        qp.postSend(wr);
        // the start Send's completion and the server's ready Send: nothing else is outstanding
        for (int pending = 2; pending > 0; ) {
            pending -= reap();
        }
        for (int i = 1; i <= total; i++) {
            byte v = (byte) i;
            b.put(size - 1, v);
            long t0 = System.nanoTime();
            fill(wr, SendOpcode.RDMA_WRITE, ++nextId, 0, size); // --sge and --inline-size apply
            wr.signaled = true;
            postOrExplain(wr);
            reap();
            long deadline = 0;
            int spins = 0;
            while (true) {
                VarHandle.acquireFence();
                if (b.get(mine) == v) {
                    break;
                }
                cq.progress();
                Thread.onSpinWait();
                if ((++spins & 0xFFFF) == 0) {
                    long now = System.nanoTime();
                    if (deadline == 0) {
                        deadline = now + TimeUnit.MILLISECONDS.toNanos(AWAIT_MS);
                    } else if (now > deadline) {
                        throw new RdmaException("write latency: no Write from the server for iteration " + i
                                + " within " + AWAIT_MS + " ms");
                    }
                }
            }
            long t = System.nanoTime() - t0;
            h.recordValue(Math.min(t, h.getHighestTrackableValue()));
            if (progress != null) {
                progress.update(phase, i, total);
            }
        }
    }

    /** Bytes per second of {@code iters} operations with up to {@code win} outstanding, no warm-up. */
    double bandwidth(SendOpcode op, int size, int iters, int win, Progress progress) throws RdmaException,
            InterruptedException {
        return bandwidth(op, size, iters, win, 0, 0, 1, progress).median();
    }

    /**
     * A bandwidth measurement: bytes per second of the median pass and of the slowest and fastest,
     * {@code passes} timed passes of {@code opsPerPass} operations each.
     */
    record Bandwidth(double median, double min, double max, int passes, int opsPerPass, long jitMillis) {
        /**
         * The median of {@code bytesPerSec} (the upper one of an even count, as scripts/bench), its
         * min and max; {@code jitMillis} this JVM's JIT time during the passes (-1: not reported).
         */
        static Bandwidth of(double[] bytesPerSec, int opsPerPass, long jitMillis) {
            double[] s = bytesPerSec.clone();
            java.util.Arrays.sort(s);
            return new Bandwidth(s[s.length / 2], s[0], s[s.length - 1], s.length, opsPerPass, jitMillis);
        }
    }

    /**
     * {@code iters} operations of {@code size} bytes with up to {@code win} outstanding, every
     * {@code signalEvery}-th signaled (0: a quarter of the window for Sends and Writes, every Read),
     * as {@code passes} timed passes of {@code iters / passes} operations (at most {@code iters}
     * passes), each timed from first post to last retirement (ib_*_bw); the median pass is the
     * result (scripts/bench's {@code --bw-passes}: a median of passes leaves out the stall a single
     * long pass takes in). Before them, unrecorded passes of an eighth of a timed pass until
     * {@code warmOps} have run and then until the JIT is quiet ({@link JitQuiet}). Writes and Reads
     * run {@link WindowedPosts}, the benchmarks' loop; Sends wait for the server's credit (one per
     * Send) besides.
     */
    Bandwidth bandwidth(SendOpcode op, int size, int iters, int win, int signalEvery, int warmOps, int passes,
                        Progress progress) throws RdmaException, InterruptedException {
        checkSize(size);
        if (passes < 1) {
            throw new IllegalArgumentException("--passes must be at least 1, got " + passes);
        }
        int w = Math.min(win, window);
        if (op == SendOpcode.RDMA_READ) {
            w = Math.max(1, Math.min(w, conn.info().ord()));
        }
        if (op == SendOpcode.SEND && size < 1) {
            throw new IllegalArgumentException("--size: send bandwidth needs at least 1 byte for the credit tag");
        }
        int every = signalEvery > 0 ? Math.min(signalEvery, w)
                : op == SendOpcode.RDMA_READ ? 1 : WindowedPosts.defaultSignalEvery(w);
        int p = Math.min(passes, iters);
        int perPass = iters / p;
        int pass = Math.max(1, perPass / 8);
        for (int done = 0; done < warmOps; done += pass) {
            bandwidthPass(op, size, pass, w, every, null);
        }
        if (warmOps > 0) {
            // then passes until this JVM's JIT finished nothing for half a second (as scripts/bench's
            // BenchMain): by count alone, the measured pass ran while C1 and C2 still compiled the loop
            // (1 MiB Writes: 28-55 compilations inside it, 0.59x the bench's bandwidth)
            JitQuiet quiet = new JitQuiet();
            do {
                bandwidthPass(op, size, pass, w, every, null);
            } while (!quiet.settled());
        }
        double[] bps = new double[p];
        long jit0 = JitQuiet.compilationMillis();
        for (int i = 0; i < p; i++) {
            long nanos = bandwidthPass(op, size, perPass, w, every, progress);
            bps[i] = (double) size * perPass / (nanos / 1e9);
        }
        long jit = jit0 < 0 ? -1 : JitQuiet.compilationMillis() - jit0;
        if (settings.verify() && op == SendOpcode.RDMA_WRITE && size > 0) {
            // read the written bytes back (RFC 5040 §5.2) and compare with what was written
            QueuePair qp = conn.queuePair();
            mr.buffer().put(slotSize(), new byte[size]);
            fill(wr, SendOpcode.RDMA_READ, ++nextId, slotSize(), Math.min(size, slotSize()));
            qp.postSend(wr);
            reap();
            verify("RDMA Write, read back", slotSize(), 0, Math.min(size, slotSize()), false);
        }
        return Bandwidth.of(bps, perPass, jit);
    }

    /** Receives posted for the server's credits and not yet taken (bounded by the window across passes). */
    private int creditRecvs;

    /** One pass of the bandwidth phase; returns nanoseconds from the first post to the last retirement. */
    private long bandwidthPass(SendOpcode op, int size, int iters, int w, int every, Progress progress)
            throws RdmaException, InterruptedException {
        String phase = name(op) + " bandwidth";
        long base = nextId + 1;
        nextId += iters;
        if (op != SendOpcode.SEND) {
            long t0 = System.nanoTime();
            WindowedPosts.run(iters, w, every, chain.length, base, (from, k) -> {
                for (int i = 0; i < k; i++) {
                    SendRequest r = chain[i];
                    fill(r, op, base + from + i, 0, size);
                    r.signaled = WindowedPosts.signaled(from + i, iters, every);
                    r.next = i + 1 < k ? chain[i + 1] : null;
                }
                postOrExplain(chain[0]);
                if (progress != null) {
                    progress.update(phase, from + k, iters);
                }
            }, this::reapInto, wcs);
            return System.nanoTime() - t0;
        }
        QueuePair qp = conn.queuePair();
        int recvOff = slotSize();
        mr.buffer().put(0, CREDIT_TAG);
        while (creditRecvs < w) {
            postRecv(qp, RECV, mr, recvOff, 16);
            creditRecvs++;
        }
        int credits = w;
        int posted = 0;
        int retired = 0;
        int done = 0;
        long t0 = System.nanoTime();
        while (done < iters || retired < posted) {
            int room = Math.min(Math.min(iters - posted, w - (posted - retired)), credits);
            while (room > 0) {
                int k = Math.min(room, chain.length);
                for (int i = 0; i < k; i++) {
                    SendRequest r = chain[i];
                    fill(r, op, base + posted + i, 0, size);
                    r.signaled = WindowedPosts.signaled(posted + i, iters, every);
                    r.next = i + 1 < k ? chain[i + 1] : null;
                }
                postOrExplain(chain[0]);
                posted += k;
                room -= k;
                credits -= k;
            }
            int n = reap();
            for (int k = 0; k < n; k++) {
                WorkCompletion wc = wcs[k];
                if (wc.opcode == WcOpcode.RECV) {
                    credits++;
                    done++;
                    creditRecvs--;
                    if (posted < iters) {
                        postRecv(qp, RECV, mr, recvOff, 16);
                        creditRecvs++;
                    }
                } else {
                    long r = wc.wrId - base + 1;
                    if (r > retired && r <= posted) {
                        retired = (int) r;
                    }
                }
            }
            if (progress != null) {
                progress.update(phase, done, iters);
            }
        }
        return System.nanoTime() - t0;
    }

    /** {@link #reap} for {@link WindowedPosts} (the array is this workload's own). */
    private int reapInto(WorkCompletion[] out) throws RdmaException, InterruptedException {
        return reap();
    }

    private void checkSize(int size) {
        if (size > bufSize || size > remote.length()) {
            throw new IllegalArgumentException("--size: " + size + " exceeds the negotiated buffer "
                    + Math.min(bufSize, remote.length()));
        }
    }

    private void post(SendOpcode op, int size) throws RdmaException {
        fill(wr, op, ++nextId, 0, size);
        postOrExplain(wr);
    }

    /** Posts {@code r}; a post refused because the server closed or reset the stream says so. */
    private void postOrExplain(SendRequest r) throws RdmaException {
        try {
            conn.queuePair().postSend(r);
        } catch (RdmaException e) {
            if (conn.isOpen()) {
                throw e;
            }
            RdmaException cause = conn.failure();
            throw new RdmaException("the server closed or reset the connection ("
                    + (cause != null ? cause.getMessage() : "the connection is closed") + ")", e);
        }
    }

    /**
     * Fills {@code r} for {@code size} bytes at local offset {@code off}, split into
     * {@code --sge} contiguous SGEs (RFC 5041 §5.3), inline when it fits {@code --inline-size}.
     */
    private void fill(SendRequest r, SendOpcode op, long id, int off, int size) {
        switch (op) {
            case SEND -> r.send(id, mr, off, size);
            case RDMA_WRITE -> r.write(id, mr, off, size, remote.address(), remote.rkey());
            case RDMA_READ -> r.read(id, mr, off, size, remote.address(), remote.rkey());
            default -> throw new IllegalArgumentException("unsupported op " + op);
        }
        int sges = op == SendOpcode.RDMA_READ ? Math.min(settings.sge(), conn.queuePair().caps().maxSgeRd())
                : settings.sge(); // the --verify read-back of a Write stays within maxSgeRd
        int n = Math.min(sges, Math.max(1, size));
        if (n > 1) {
            r.sgl.clear();
            int at = off;
            for (int i = 0; i < n; i++) {
                int len = size / n + (i < size % n ? 1 : 0);
                r.sgl.add(mr, at, len);
                at += len;
            }
        }
        r.inline = op != SendOpcode.RDMA_READ && size > 0 && size <= settings.inlineSize();
    }

    /**
     * Compares {@code len} bytes at local offset {@code at} with the local bytes at
     * {@code ref} (or, with {@code serverPattern}, the server buffer's pattern); throws on
     * the first mismatch.
     */
    private void verify(String what, int at, int ref, int len, boolean serverPattern) throws RdmaException {
        ByteBuffer b = mr.buffer();
        for (int i = 0; i < len; i++) {
            byte want = serverPattern ? WorkSettings.targetByte(i) : b.get(ref + i);
            byte got = b.get(at + i);
            if (got != want) {
                throw new RdmaException("--verify: " + what + " payload mismatch at byte " + i + " of " + len
                        + ": expected 0x" + Integer.toHexString(want & 0xFF) + ", got 0x"
                        + Integer.toHexString(got & 0xFF));
            }
        }
    }

    private int reap() throws RdmaException, InterruptedException {
        int n = CompletionWait.await(cq, channel, wcs, wcs.length, AWAIT_MS);
        if (n == 0) {
            throw new RdmaException("no completion within " + AWAIT_MS + " ms on " + conn.queuePair());
        }
        for (int k = 0; k < n; k++) {
            if (!wcs[k].isSuccess()) {
                throw failed(wcs[k]);
            }
        }
        return n;
    }

    /**
     * The error for a failed completion: a flush after the stream ended says the server closed or
     * reset the connection (RFC 5040 §5.3: outstanding WRs flush), with the provider's cause.
     */
    private RdmaException failed(WorkCompletion wc) {
        if (wc.status == WcStatus.WR_FLUSH_ERR || !conn.isOpen()) {
            RdmaException cause = conn.failure();
            String why = cause != null ? cause.getMessage() : "the connection is closed";
            return new RdmaException("the server closed or reset the connection (" + why + "); "
                    + (wc.status == WcStatus.WR_FLUSH_ERR ? "outstanding operations were flushed"
                    : "operation failed with " + wc.status), cause);
        }
        return new RdmaException("work request failed: " + wc);
    }

    /** A receive buffer to the shared receive queue (--srq) or to the QP. */
    private void postRecv(QueuePair qp, long id, MemoryRegion m, long off, int len) throws RdmaException {
        if (srq != null) {
            srq.postRecv(id, m, off, len);
        } else {
            qp.postRecv(id, m, off, len);
        }
    }

    @Override
    public void close() {
        Closing.all(conn, mr, srq, cq, channel, pd);
    }
}
