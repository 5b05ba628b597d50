package org.jwarp.cli;

import static org.jwarp.cli.ServerCommand.refuse;

import java.io.PrintWriter;
import java.lang.invoke.VarHandle;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.jwarp.cli.ServerCommand.Limits;
import org.jwarp.cli.ServerCommand.MemoryBudget;
import org.jwarp.cli.ServerCommand.Sizing;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.CompletionQueue;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.ConnectionRequest;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.ProtectionDomain;
import org.jwarp.verbs.QueuePair;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.CompletionChannel;
import org.jwarp.verbs.SharedReceiveQueue;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RecvRequest;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;

/**
 * The server side of the workload on one connection (used by {@code server} and {@code demo}).
 * Receive slots are posted once and re-posted as soon as their message is taken; a Send whose
 * first byte is {@link ClientCommand#CREDIT_TAG} gets a zero-length Send back (a credit), any
 * other Send is copied to an echo buffer and sent back. Either answer follows the re-post, so
 * an answered peer always finds a buffer (RFC 5041 §7.2: a Send without one is fatal).
 */
final class Responder implements AutoCloseable {
    /** Where a refusal is said when the caller names no writer (the demo). */
    private static final PrintWriter STDERR = new PrintWriter(System.err, true);
    private static final long KIND_RECV = 1L << 40;
    private static final long KIND_ECHO = 2L << 40;
    private static final long KIND_ACK = 3L << 40;
    private static final long SLOT_MASK = (1L << 40) - 1;

    private final ProtectionDomain pd;
    private final CompletionQueue cq;
    /** --events: the channel the CQ signals, else null. */
    private final CompletionChannel channel;
    /** --srq: where the receive slots are posted, else null (the QP's own receive queue). */
    private final SharedReceiveQueue srq;
    private final MemoryRegion slotsMr;
    private final MemoryRegion echoMr;
    private final MemoryRegion targetMr;
    private final Connection conn;
    private final int slots;
    private final int slotSize;
    private final MemoryBudget budget;
    /** The peer's address, whose share of the budget {@link #reserved} is counted in. */
    private final InetAddress source;
    private final long reserved;
    /** Its memory went back to the budget ({@link #close}). */
    private volatile boolean released;
    /** Chosen for eviction (the server's eviction lock); not chosen twice. */
    boolean evicted;
    private final WorkSettings settings;
    private final RecvRequest recv = new RecvRequest();
    /** The client's receive area for write-latency Writes, or null (an old client). */
    private final ClientCommand.Hello hello;
    /**
     * Receive completions the write-latency phase reaped while it waited for its own Writes:
     * Sends the client sent meanwhile, answered by {@link #serve} once the phase ends. At most
     * {@link #slots} (no slot is re-posted during the phase).
     */
    private final WorkCompletion[] deferred;
    private int deferredCount;
    private volatile boolean stop;
    /** No activity for this long ends the connection with a TERM; 0 = never (the demo, a library use). */
    private long idleNanos;
    /** When the connection was last seen active (System.nanoTime, updated on quiet 200 ms checks). */
    private volatile long idleSince = System.nanoTime();
    /** A write-latency iteration whose Write does not come within this long ends with a TERM. */
    private long writeNanos = TimeUnit.SECONDS.toNanos(10);
    /** Busy-polls of the write-latency byte before the poll parks (a Write normally lands within them). */
    private static final int SPIN_LIMIT = 20_000;
    /** Longest park between polls once the spin is over. */
    private static final long MAX_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private Responder(ProtectionDomain pd, CompletionQueue cq, CompletionChannel channel, SharedReceiveQueue srq,
                      MemoryRegion slotsMr, MemoryRegion echoMr,
                      MemoryRegion targetMr, Connection conn, int slots, int slotSize, WorkSettings settings,
                      MemoryBudget budget, InetAddress source, long reserved, ClientCommand.Hello hello) {
        this.source = source;
        this.channel = channel;
        this.srq = srq;
        this.hello = hello;
        this.settings = settings;
        this.budget = budget;
        this.reserved = reserved;
        this.pd = pd;
        this.cq = cq;
        this.slotsMr = slotsMr;
        this.echoMr = echoMr;
        this.targetMr = targetMr;
        this.conn = conn;
        this.slots = slots;
        this.slotSize = slotSize;
        this.deferred = new WorkCompletion[slots];
        for (int i = 0; i < slots; i++) {
            deferred[i] = new WorkCompletion();
        }
    }

    /** Accepts {@code req}, sized by the client's request header (or {@code defaultSize}). */
    static Responder accept(Device dev, ConnectionRequest req, ConnectionParameters params, int defaultSize,
                            int sizeLimit) throws RdmaException {
        return accept(dev, req, params, defaultSize, Limits.ofSize(sizeLimit), WorkSettings.DEFAULT, STDERR);
    }

    static Responder accept(Device dev, ConnectionRequest req, ConnectionParameters params, int defaultSize,
                            int sizeLimit, WorkSettings settings) throws RdmaException {
        return accept(dev, req, params, defaultSize, Limits.ofSize(sizeLimit), settings, STDERR);
    }

    /**
     * Accepts {@code req}, sized by the client's hello (or {@code defaultSize}) within {@code limits}.
     * Whatever the hello asks, the request is decided at once: a size, window or memory beyond the
     * limits, a peer-to-peer request the server does not serve, or a failed allocation is an MPA
     * Reject (R=1, RFC 5044 §7.1.5) carrying the reason as private data, and said on {@code err}.
     */
    static Responder accept(Device dev, ConnectionRequest req, ConnectionParameters params, int defaultSize,
                            Limits limits, WorkSettings settings, PrintWriter err) throws RdmaException {
        ClientCommand.Hello hello = ClientCommand.Hello.decode(req.privateData());
        int bufSize = hello == null ? defaultSize : hello.bufferSize();
        int window = hello == null ? 16 : hello.window();
        if (req.peerToPeer() && !limits.peerToPeer()) {
            // RFC 6581 §9.2: the Reply must echo A=1, so a client-server server can only reject
            refuse(err, req, "peer-to-peer (RFC 6581 §9.2) is not served: start the server with --p2p");
            throw new RdmaException("rejected a peer-to-peer request from " + req.remote());
        }
        Sizing sz = Sizing.of(bufSize, window, limits, settings.inlineSize());
        if (sz.refusal() != null) {
            refuse(err, req, sz.refusal());
            throw new RdmaException("rejected " + req.remote() + ": " + sz.refusal());
        }
        MemoryBudget budget = limits.budget();
        InetAddress source = req.remote().getAddress();
        if (budget != null && !budget.reserveOrReclaim(source, sz.totalBytes())) {
            String why = budget.refusal(source, sz.totalBytes());
            refuse(err, req, why);
            throw new RdmaException("rejected " + req.remote() + ": " + why);
        }
        boolean decided = false;
        ProtectionDomain pd = null;
        CompletionQueue cq = null;
        CompletionChannel ch = null;
        SharedReceiveQueue srq = null;
        MemoryRegion slotsMr = null;
        MemoryRegion echo = null;
        MemoryRegion target = null;
        try {
            int slotSize = sz.slotSize();
            int slotBytes = slotSize * window; // Sizing bounded it by Integer.MAX_VALUE
            pd = dev.allocateProtectionDomain();
            ch = settings.events() ? dev.createCompletionChannel() : null;
            cq = dev.createCompletionQueue(4 * window + 16, ch);
            slotsMr = pd.register(ByteBuffer.allocateDirect(slotBytes), EnumSet.of(Access.LOCAL_WRITE));
            echo = pd.register(ByteBuffer.allocateDirect(slotBytes), EnumSet.of(Access.LOCAL_WRITE));
            target = pd.register(ByteBuffer.allocateDirect(sz.targetSize()),
                    EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ));
            ByteBuffer t = target.buffer();
            for (int i = 0; i < t.capacity(); i++) {
                t.put(i, WorkSettings.targetByte(i)); // what a client's --verify Read expects
            }
            byte[] pdata = ClientCommand.RemoteBuffer.encode(target.address(), target.rkey(), Math.toIntExact(target.length()));
            ConnectionParameters p = params.toBuilder().privateData(pdata)
                    .peerToPeer(params.peerToPeer() && req.peerToPeer()).build();
            if (!p.peerToPeer()) {
                p = p.toBuilder().rtrTypes(Set.of()).build();
            }
            // receive slots are posted before the Reply goes out: the client may send at once
            MemoryRegion slots = slotsMr;
            RecvRequest rr = new RecvRequest();
            QueuePairConfig qpc = new QueuePairConfig(pd, cq, cq, window + 4, window + 4)
                    .withSge(settings.sge(), settings.sge()).withInline(settings.inlineSize());
            if (settings.srq()) {
                // --srq: the slots wait in a shared receive queue, posted before the Reply too
                srq = pd.createSharedReceiveQueue(window + 4, settings.sge());
                for (int i = 0; i < window; i++) {
                    srq.postRecv(slotRequest(rr, settings, slots, i, slotSize));
                }
                qpc = qpc.withSrq(srq);
            } else {
                qpc = qpc.withBeforeConnect(qp -> {
                    for (int i = 0; i < window; i++) {
                        qp.postRecv(slotRequest(rr, settings, slots, i, slotSize));
                    }
                });
            }
            decided = true;
            Connection conn = req.accept(qpc, p);
            return new Responder(pd, cq, ch, srq, slotsMr, echo, target, conn, window, slotSize, settings, budget,
                    source, sz.totalBytes(), hello);
        } catch (OutOfMemoryError e) {
            // direct memory ran out despite the caps (other users of it, a small -XX:MaxDirectMemorySize)
            String why = "server out of memory for " + sz.totalBytes() + " bytes of buffers";
            release(pd, cq, slotsMr, echo, target, budget, source, sz.totalBytes(), srq, ch);
            if (!decided) {
                refuse(err, req, why);
            }
            throw new RdmaException("rejected " + req.remote() + ": " + why + " (" + e.getMessage() + ")");
        } catch (RdmaException | RuntimeException e) {
            release(pd, cq, slotsMr, echo, target, budget, source, sz.totalBytes(), srq, ch);
            if (!decided) {
                refuse(err, req, "server setup failed: " + e.getMessage());
            } else {
                rejectQuietly(req, "server setup failed: " + e.getMessage());
            }
            throw e;
        }
    }

    /** A request whose accept failed may still be pending: reject it, or find it already decided. */
    private static void rejectQuietly(ConnectionRequest req, String why) {
        try {
            req.reject(why.getBytes(StandardCharsets.US_ASCII));
        } catch (RdmaException | RuntimeException ignored) {
            // the accept got as far as deciding it (a TERM or a close went out)
        }
    }

    private static void release(ProtectionDomain pd, CompletionQueue cq, MemoryRegion a, MemoryRegion b,
                                MemoryRegion c, MemoryBudget budget, InetAddress source, long bytes,
                                SharedReceiveQueue srq, CompletionChannel ch) {
        try {
            Closing.all(a, b, c, srq, cq, ch, pd);
        } finally {
            if (budget != null) {
                budget.release(source, bytes);
            }
        }
    }

    Connection connection() {
        return conn;
    }

    private void postSlot(int i) throws RdmaException {
        if (srq != null) {
            srq.postRecv(slotRequest(recv, settings, slotsMr, i, slotSize));
        } else {
            conn.queuePair().postRecv(slotRequest(recv, settings, slotsMr, i, slotSize));
        }
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

    long idleSince() {
        return idleSince;
    }

    /** Whether {@link #close} gave this connection's memory back to the budget. */
    boolean released() {
        return released;
    }

    /** Sets the idle timeout (0 = never) and the write-latency timeout, both in nanoseconds. */
    void timeouts(long idle, long write) {
        this.idleNanos = idle;
        this.writeNanos = write;
    }

    /**
     * Answers until the peer disconnects (posted receives flush) or {@link #stop()}; returns
     * the number of Sends answered. {@code onMessage} may be null.
     */
    long serve(Runnable onMessage) throws RdmaException, InterruptedException {
        WorkCompletion[] wcs = new WorkCompletion[Math.max(16, slots)]; // room for all deferred ones
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new WorkCompletion();
        }
        SendRequest wr = new SendRequest();
        QueuePair qp = conn.queuePair();
        ByteBuffer view = slotsMr.buffer().order(ByteOrder.BIG_ENDIAN);
        ByteBuffer echoView = echoMr.buffer();
        long answered = 0;
        long lastActive = System.nanoTime();
        long lastInbound = conn.inboundActivity();
        boolean active = false;
        while (!stop) {
            int n = deferredCount > 0 ? takeDeferred(wcs) : CompletionWait.await(cq, channel, wcs, wcs.length, 200);
            if (n > 0) {
                active = true;
            } else {
                // checked on a quiet 200 ms only: no clock read per message
                long now = System.nanoTime();
                long inbound = conn.inboundActivity();
                if (active || inbound != lastInbound) {
                    active = false;
                    lastInbound = inbound;
                    lastActive = now;
                    idleSince = now;
                } else if (idleNanos > 0 && now - lastActive > idleNanos && conn.isOpen()) {
                    conn.terminate("idle for " + TimeUnit.NANOSECONDS.toSeconds(now - lastActive)
                            + " s: no message or segment from the client (--idle-timeout)");
                    lastActive = now; // the TERM and the flush end the loop
                }
            }
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

    /** Moves the deferred receive completions to {@code wcs} (large enough for all); returns how many. */
    private int takeDeferred(WorkCompletion[] wcs) {
        int n = deferredCount;
        for (int i = 0; i < n; i++) {
            wcs[i].copyFrom(deferred[i]);
        }
        deferredCount = 0;
        return n;
    }

    /**
     * The server half of ib_write_lat: clears the last byte of the target buffer, says ready
     * with a zero-length Send, then {@code iters} times waits (spinning) until the client's
     * Write puts the iteration number there and writes {@code size} bytes ending in the same
     * number into the client's receive area. Every Write is signaled and its completion reaped (perftest's
     * loop, and the benchmarks' peer), and the spin drives the provider's progress. A
     * receive completion reaped meanwhile (the client's next Send may overtake the last Write's
     * completion) is kept for {@link #serve}, not counted as one of the Writes.
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
        long unreaped = 1;
        for (int i = 1; i <= iters && !stop; i++) {
            byte v = (byte) i;
            // bounded spin, then park with a growing pause: a silent client costs no core, and an
            // iteration without its Write ends the connection with a TERM (issue 31)
            int spins = 0;
            long deadline = 0;
            long park = 1_000;
            while (true) {
                VarHandle.acquireFence();
                if (target.get(last) == v) {
                    break;
                }
                if (spins < SPIN_LIMIT) {
                    spins++;
                    cq.progress(); // the soft provider's manual progress, as the benchmarks' peer spins
                    Thread.onSpinWait();
                    continue;
                }
                long now = System.nanoTime();
                if (deadline == 0) {
                    deadline = now + writeNanos;
                } else if (now - deadline > 0 || !conn.isOpen()) {
                    if (conn.isOpen()) {
                        conn.terminate("write latency: no Write from the client for iteration " + i + " within "
                                + TimeUnit.NANOSECONDS.toMillis(writeNanos) + " ms (--write-timeout)");
                    }
                    return; // serve() sees the flush
                }
                LockSupport.parkNanos(park);
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                park = Math.min(2 * park, MAX_PARK_NANOS);
            }
            src.put(last, v);
            wr.write(KIND_ECHO, echoMr, 0, size, hello.address(), hello.rkey());
            wr.inline = size <= settings.inlineSize(); // --inline-size, as perftest inlines small Writes
            wr.signaled = true; // every Write signaled and reaped before the next poll: perftest's loop
            qp.postSend(wr);
            unreaped++;
            while (unreaped > 0) {
                int n = CompletionWait.await(cq, channel, wcs, wcs.length, 200);
                for (int k = 0; k < n; k++) {
                    if (wcs[k].opcode == WcOpcode.RECV) {
                        if (deferredCount == deferred.length) {
                            throw new RdmaException("write latency: more receive completions than posted"
                                    + " slots (" + deferred.length + ")");
                        }
                        deferred[deferredCount++].copyFrom(wcs[k]);
                        continue;
                    }
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

    @Override
    public void close() {
        try {
            Closing.all(conn, slotsMr, echoMr, targetMr, srq, cq, channel, pd);
        } finally {
            if (budget != null) {
                budget.release(source, reserved);
            }
            released = true;
        }
    }
}
