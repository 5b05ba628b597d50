package org.jwarp.cli;

import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

import org.jwarp.verbs.Access;
import org.jwarp.verbs.CompletionQueue;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.ProtectionDomain;
import org.jwarp.verbs.QueuePair;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One rping connection, either role, over the verbs API. Per iteration the client Sends its
 * source advertisement (RFC 5040 §5.3), the server RDMA-Reads the ping data from it (§5.2) and
 * Sends a "go ahead"; the client Sends its sink advertisement, the server RDMA-Writes the data
 * back (§5.1) and Sends a second "go ahead"; the client compares (-V) and prints (-v). Every
 * message is a 16-byte {@link RpingAdvert}; any other length is refused.
 *
 * <p>Each step waits for the peer's message and for this side's own send queue to drain, at most
 * the step timeout; the control buffers are therefore never rewritten while a Send is in flight.
 * Receives are posted before the connection is set up (a Send without a posted buffer is fatal,
 * RFC 5041 §7.2) and re-posted as each message is taken. The loop allocates nothing per
 * iteration except the text of -v and -d lines.
 */
final class RpingSession implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RpingSession.class);

    /** rping's send queue depth; its CQ has room for twice that. */
    static final int SQ_DEPTH = 16;
    /** rping's receive queue depth. */
    static final int RQ_DEPTH = 2;
    /** A receive slot larger than a message, so a wrong length completes and can be named. */
    static final int RECV_SLOT = 64;
    /**
     * rping's smallest ping (rdma-core 44's check): "rdma-ping-" and up to ten digits, ": " and
     * the NUL just fit.
     */
    static final int MIN_SIZE = 23;
    /** rping's largest ping (its 64 KiB buffer less one). */
    static final int MAX_SIZE = 65535;

    private static final int SEND_OFFSET = RQ_DEPTH * RECV_SLOT;
    private static final long WR_RECV = 1L << 32;
    private static final long WR_SEND = 2L << 32;
    private static final long WR_READ = 3L << 32;
    private static final long WR_WRITE = 4L << 32;
    private static final long POLL_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(200);
    private static final byte FIRST_CHAR = 'A';
    private static final byte LAST_CHAR = 'z';
    private static final byte[] PREFIX = "rdma-ping-".getBytes(StandardCharsets.US_ASCII);

    private final boolean server;
    private final int size;
    private final long timeoutNanos;
    private final boolean verbose;
    private final boolean validate;
    private final boolean debug;
    /** -d or slf4j debug: only then are trace lines formatted (their arguments allocate). */
    private final boolean tracing;
    private final PrintWriter out;
    private final ProtectionDomain pd;
    private final CompletionQueue cq;
    /** [receive slot 0 | receive slot 1 | send message]. */
    private final MemoryRegion ctl;
    /** Client: the ping source the server reads. Server: where the read lands and the write leaves. */
    private final MemoryRegion data;
    /** Client only: the sink the server writes back into. */
    private final MemoryRegion sink;
    private final ByteBuffer ctlBuf;
    private final ByteBuffer dataBuf;
    private final ByteBuffer sinkBuf;
    private final WorkCompletion[] wcs = new WorkCompletion[8];
    private final SendRequest wr = new SendRequest();
    private Connection conn;
    private QueuePair qp;
    private int pendingSq;
    private boolean messageReady;
    private int messageSlot;
    private int messageLength;
    private int pings;

    private RpingSession(boolean server, int size, long timeoutNanos, boolean verbose, boolean validate,
                         boolean debug, PrintWriter out, ProtectionDomain pd, CompletionQueue cq, MemoryRegion ctl,
                         MemoryRegion data, MemoryRegion sink) {
        this.server = server;
        this.size = size;
        this.timeoutNanos = timeoutNanos;
        this.verbose = verbose;
        this.validate = validate;
        this.debug = debug;
        this.tracing = debug || LOG.isDebugEnabled();
        this.out = out;
        this.pd = pd;
        this.cq = cq;
        this.ctl = ctl;
        this.data = data;
        this.sink = sink;
        this.ctlBuf = ctl.buffer().order(ByteOrder.BIG_ENDIAN);
        this.dataBuf = data.buffer();
        this.sinkBuf = sink == null ? null : sink.buffer();
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new WorkCompletion();
        }
    }

    /**
     * Allocates the PD, CQ and registrations of one connection (rping's buffers: a receive and a
     * send buffer, the ping buffer, and on the client the source as well).
     */
    static RpingSession open(Device dev, boolean server, int size, long timeoutNanos, boolean verbose,
                             boolean validate, boolean debug, PrintWriter out) throws RdmaException {
        ProtectionDomain pd = dev.allocateProtectionDomain();
        CompletionQueue cq = null;
        MemoryRegion ctl = null;
        MemoryRegion data = null;
        try {
            cq = dev.createCompletionQueue(2 * SQ_DEPTH);
            ctl = pd.register(ByteBuffer.allocateDirect(SEND_OFFSET + RpingAdvert.LENGTH), EnumSet.of(Access.LOCAL_WRITE));
            MemoryRegion sink = null;
            if (server) {
                data = pd.register(ByteBuffer.allocateDirect(size), EnumSet.of(Access.LOCAL_WRITE));
            } else {
                data = pd.register(ByteBuffer.allocateDirect(size), EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ));
                sink = pd.register(ByteBuffer.allocateDirect(size), EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
            }
            RpingSession s = new RpingSession(server, size, timeoutNanos, verbose, validate, debug, out, pd, cq, ctl,
                    data, sink);
            s.debug("created pd, cq (%d entries) and buffers: data rkey 0x%x%s", 2 * SQ_DEPTH, data.rkey(),
                    sink == null ? "" : String.format(Locale.ROOT, ", sink rkey 0x%x", sink.rkey()));
            return s;
        } catch (RdmaException | RuntimeException e) {
            try {
                Closing.all(data, ctl, cq, pd);
            } catch (RuntimeException | Error again) {
                e.addSuppressed(again);
            }
            throw e;
        }
    }

    /** The QP of this session: rping's depths, receives posted before this side's MPA frame. */
    QueuePairConfig queuePairConfig() {
        return new QueuePairConfig(pd, cq, cq, SQ_DEPTH, RQ_DEPTH).withBeforeConnect(q -> {
            for (int i = 0; i < RQ_DEPTH; i++) {
                q.postRecv(WR_RECV | i, ctl, i * RECV_SLOT, RECV_SLOT);
            }
        });
    }

    void attach(Connection c) {
        this.conn = c;
        this.qp = c.queuePair();
        if (tracing) {
            debug("connected: %s", ClientCommand.describe(c));
        }
    }

    Connection connection() {
        return conn;
    }

    /** Pings completed so far (server: iterations answered). */
    int pings() {
        return pings;
    }

    /** The client's loop: {@code count} pings, or until stopped when {@code count} is 0. */
    void runClient(int count) throws RpingException, InterruptedException {
        ByteBuffer src = dataBuf;
        ByteBuffer dst = sinkBuf;
        int start = FIRST_CHAR;
        for (int ping = 0; count == 0 || ping < count; ping++) {
            fillPing(src, size, ping, start);
            start = start == LAST_CHAR ? FIRST_CHAR : start + 1;
            for (int i = 0; i < size; i++) {
                dst.put(i, (byte) 0);
            }
            sendAdvert(data.address(), data.rkey(), true);
            takeMessage("the server's go-ahead after its RDMA Read", false);
            repost();
            sendAdvert(sink.address(), sink.rkey(), false);
            takeMessage("the server's go-ahead after its RDMA Write", false);
            repost();
            if (validate) {
                src.clear();
                dst.clear();
                int at = src.limit(size).mismatch(dst.limit(size));
                if (at >= 0) {
                    throw new RpingException(RpingException.Kind.DATA_MISMATCH, String.format(Locale.ROOT,
                            "data mismatch in ping %d at byte %d of %d: sent 0x%02x, got back 0x%02x", ping, at, size,
                            src.get(at) & 0xFF, dst.get(at) & 0xFF));
                }
            }
            if (verbose) {
                out.println("ping data: " + cString(dst, size));
                out.flush();
            }
            pings++;
        }
    }

    /**
     * The server's loop: answers until the client disconnects between iterations (the normal end,
     * as rping's client does after -C pings). Returns the number of pings answered.
     */
    int runServer() throws RpingException, InterruptedException {
        while (true) {
            try {
                takeMessage("the client's source advertisement", true);
            } catch (RpingException e) {
                if (e.kind() == RpingException.Kind.DISCONNECTED) {
                    debug("client disconnected after %d pings", pings);
                    return pings;
                }
                throw e;
            }
            int slot = messageSlot * RECV_SLOT;
            long addr = RpingAdvert.address(ctlBuf, slot);
            int rkey = RpingAdvert.rkey(ctlBuf, slot);
            long len = RpingAdvert.size(ctlBuf, slot);
            repost();
            if (tracing) {
                debug("received source rkey 0x%x addr 0x%x len %d", rkey, addr, len);
            }
            if (len < 1 || len > size) {
                throw new RpingException(RpingException.Kind.ADVERT_TOO_LARGE, "the client advertised " + len
                        + " bytes of ping data; this server's buffer holds 1.." + size + " (-S " + size + ")");
            }
            wr.read(WR_READ, data, 0, (int) len, addr, rkey);
            post("RDMA Read of the ping data");
            drain("the RDMA Read of the ping data");
            if (tracing) {
                debug("rdma read of %d bytes complete", len);
            }
            if (verbose) {
                out.println("server ping data: " + cString(dataBuf, (int) len));
                out.flush();
            }
            sendGoAhead();
            takeMessage("the client's sink advertisement", false);
            slot = messageSlot * RECV_SLOT;
            addr = RpingAdvert.address(ctlBuf, slot);
            rkey = RpingAdvert.rkey(ctlBuf, slot);
            long sinkLen = RpingAdvert.size(ctlBuf, slot);
            repost();
            if (tracing) {
                debug("received sink rkey 0x%x addr 0x%x len %d", rkey, addr, sinkLen);
            }
            int back = cLength(dataBuf, (int) len);
            if (sinkLen < back) {
                throw new RpingException(RpingException.Kind.SINK_TOO_SMALL, "the client's sink of " + sinkLen
                        + " bytes is smaller than the " + back + " bytes of ping data to write back");
            }
            wr.write(WR_WRITE, data, 0, back, addr, rkey);
            post("RDMA Write of the ping data");
            drain("the RDMA Write of the ping data");
            if (tracing) {
                debug("rdma write of %d bytes complete", back);
            }
            sendGoAhead();
            pings++;
        }
    }

    private void sendAdvert(long address, int rkey, boolean source) throws RpingException {
        RpingAdvert.put(ctlBuf, SEND_OFFSET, address, rkey, size);
        if (tracing) {
            debug("sending %s advertisement: addr 0x%x rkey 0x%x len %d", source ? "source" : "sink", address, rkey,
                    size);
        }
        wr.send(WR_SEND, ctl, SEND_OFFSET, RpingAdvert.LENGTH);
        post(source ? "Send of the source advertisement" : "Send of the sink advertisement");
    }

    private void sendGoAhead() throws RpingException {
        RpingAdvert.putGoAhead(ctlBuf, SEND_OFFSET);
        wr.send(WR_SEND, ctl, SEND_OFFSET, RpingAdvert.LENGTH);
        post("Send of the go-ahead");
        if (tracing) {
            debug("posted go-ahead");
        }
    }

    private void post(String what) throws RpingException {
        try {
            qp.postSend(wr);
        } catch (RdmaException e) {
            throw new RpingException(RpingException.Kind.COMPLETION_FAILED, "posting the " + what + " failed: "
                    + e.getMessage(), e);
        }
        pendingSq++;
    }

    private void repost() throws RpingException {
        try {
            qp.postRecv(WR_RECV | messageSlot, ctl, messageSlot * RECV_SLOT, RECV_SLOT);
        } catch (RdmaException e) {
            if (!conn.isOpen()) {
                throw disconnected("re-posting a receive", e);
            }
            throw new RpingException(RpingException.Kind.COMPLETION_FAILED, "re-posting a receive failed: "
                    + e.getMessage(), e);
        }
    }

    /** Waits for the peer's next message and this side's send queue to drain; checks the length. */
    private void takeMessage(String step, boolean atBoundary) throws RpingException, InterruptedException {
        long deadline = System.nanoTime() + timeoutNanos;
        while (!messageReady || pendingSq > 0) {
            reap(step, deadline);
        }
        messageReady = false;
        if (messageLength != RpingAdvert.LENGTH) {
            throw new RpingException(RpingException.Kind.BAD_LENGTH, "received bogus data waiting for " + step + ": a "
                    + messageLength + "-byte message; every rping message is " + RpingAdvert.LENGTH + " bytes");
        }
    }

    /** Waits until every posted send-queue request has completed. */
    private void drain(String step) throws RpingException, InterruptedException {
        long deadline = System.nanoTime() + timeoutNanos;
        while (pendingSq > 0) {
            reap(step, deadline);
        }
    }

    private void reap(String step, long deadline) throws RpingException, InterruptedException {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            throw new RpingException(RpingException.Kind.TIMEOUT, "no progress within "
                    + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms waiting for " + step + " (--timeout)");
        }
        int n = cq.await(wcs, wcs.length, Math.min(left, POLL_SLICE_NANOS), TimeUnit.NANOSECONDS);
        for (int k = 0; k < n; k++) {
            WorkCompletion wc = wcs[k];
            if (wc.status != WcStatus.SUCCESS) {
                if (wc.status == WcStatus.WR_FLUSH_ERR) {
                    throw disconnected(step, null);
                }
                throw new RpingException(RpingException.Kind.COMPLETION_FAILED, "completion failed waiting for "
                        + step + ": status " + wc.status + " (" + wc.status.code() + "), opcode " + wc.opcode
                        + ", vendor error " + wc.vendorError);
            }
            if (wc.opcode == WcOpcode.RECV) {
                if (messageReady) {
                    throw new RpingException(RpingException.Kind.UNEXPECTED_MESSAGE, "a second message arrived "
                            + "before the first was answered, waiting for " + step);
                }
                messageReady = true;
                messageSlot = (int) (wc.wrId & 0xFFFF_FFFFL);
                messageLength = wc.byteLength;
            } else {
                pendingSq--;
            }
        }
        if (n == 0 && !conn.isOpen()) {
            throw disconnected(step, conn.failure());
        }
    }

    private RpingException disconnected(String step, Throwable cause) {
        String why = cause == null ? "" : " (" + cause.getMessage() + ")";
        return new RpingException(RpingException.Kind.DISCONNECTED, (server ? "the client" : "the server")
                + " disconnected waiting for " + step + " after " + pings + " pings" + why, cause);
    }

    /**
     * rping's ping data: "rdma-ping-N: " followed by the letters 'A'..'z' in turn from
     * {@code start}, the last byte NUL.
     */
    static void fillPing(ByteBuffer b, int size, int ping, int start) {
        int i = 0;
        for (byte p : PREFIX) {
            b.put(i++, p);
        }
        i = putDecimal(b, i, ping);
        b.put(i++, (byte) ':');
        b.put(i++, (byte) ' ');
        int c = start;
        for (; i < size; i++) {
            b.put(i, (byte) c);
            c = c == LAST_CHAR ? FIRST_CHAR : c + 1;
        }
        b.put(size - 1, (byte) 0);
    }

    private static int putDecimal(ByteBuffer b, int at, int v) {
        long x = v;
        if (x < 0) {
            b.put(at++, (byte) '-');
            x = -x;
        }
        long div = 1;
        while (div * 10 <= x) {
            div *= 10;
        }
        for (; div > 0; div /= 10) {
            b.put(at++, (byte) ('0' + (x / div) % 10));
        }
        return at;
    }

    /** Bytes up to the first NUL within {@code limit}, plus the NUL (rping writes strlen + 1). */
    static int cLength(ByteBuffer b, int limit) {
        for (int i = 0; i < limit; i++) {
            if (b.get(i) == 0) {
                return i + 1;
            }
        }
        return limit;
    }

    static String cString(ByteBuffer b, int limit) {
        int n = cLength(b, limit);
        if (n > 0 && b.get(n - 1) == 0) {
            n--;
        }
        byte[] s = new byte[n];
        b.get(0, s);
        return new String(s, StandardCharsets.ISO_8859_1);
    }

    private void debug(String fmt, Object... args) {
        if (!tracing) {
            return;
        }
        String line = String.format(Locale.ROOT, fmt, args);
        if (debug) {
            out.println(line);
            out.flush();
        }
        LOG.debug("{}", line);
    }

    /** Disconnects, then frees the regions, the CQ and the PD, each even when an earlier close throws. */
    @Override
    public void close() {
        Closing.all(conn, sink, data, ctl, cq, pd);
    }
}
