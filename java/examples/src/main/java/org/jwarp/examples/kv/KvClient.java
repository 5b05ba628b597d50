package org.jwarp.examples.kv;

import static org.jwarp.examples.kv.KvProtocol.ADDRESS_OFFSET;
import static org.jwarp.examples.kv.KvProtocol.HEADER_BYTES;
import static org.jwarp.examples.kv.KvProtocol.INLINE_BYTES;
import static org.jwarp.examples.kv.KvProtocol.KEY_OFFSET;
import static org.jwarp.examples.kv.KvProtocol.LENGTH_OFFSET;
import static org.jwarp.examples.kv.KvProtocol.MESSAGE_BYTES;
import static org.jwarp.examples.kv.KvProtocol.OP_OFFSET;
import static org.jwarp.examples.kv.KvProtocol.RKEY_OFFSET;
import static org.jwarp.examples.kv.KvProtocol.SEQ_OFFSET;
import static org.jwarp.examples.kv.KvProtocol.STATUS_OFFSET;
import static org.jwarp.examples.kv.KvProtocol.VERSION_OFFSET;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.CompletionQueue;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.ProtectionDomain;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WorkCompletion;

/**
 * One client connection of the key-value store, used by one thread. GET: a solicited inline Send,
 * the server's reply names the value's slot, an RDMA Read fetches it and every byte is checked.
 * PUT: one post of a chain, an unsignalled two-SGE RDMA Write (header + body) into this
 * connection's staging slot and an inline solicited commit Send.
 */
public final class KvClient implements AutoCloseable {
    private static final long ID_SEND = 1;
    private static final long ID_RECV = 2;
    private static final long ID_READ = 4;
    private static final long ID_WRITE = 8;
    private static final int DEPTH = 8;

    private final Connection conn;
    private final CompletionQueue cq;
    private final MemoryRegion out;
    private final MemoryRegion in;
    private final MemoryRegion header;
    private final MemoryRegion body;
    private final MemoryRegion sink;
    private final ByteBuffer outBuf;
    private final ByteBuffer inBuf;
    private final ByteBuffer headerBuf;
    private final ByteBuffer bodyBuf;
    private final ByteBuffer sinkBuf;
    private final KvProtocol.Hello hello;
    private final long[] ownVersion;
    private final long[] seenVersion;
    private final SendRequest request = new SendRequest();
    private final SendRequest write = new SendRequest();
    private final SendRequest read = new SendRequest();
    private final WorkCompletion[] wcs = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion()};
    private final Duration opTimeout;
    private long staging;
    private int seq;
    private volatile long done;
    // What the client is doing, for diagnostics (describe(), exceptions), kept as numbers so that an
    // operation allocates nothing: the fields are written first, then the volatile phase publishes them.
    private static final int IDLE = 0, GET_REQUEST = 1, GET_READ = 2, PUT = 3;
    private volatile int phase = IDLE;
    private long opKey, opSeq, opVersion, opAddress;
    private int opLength, opRkey;
    private long readBytes;

    /**
     * Connects to the server at {@code server} without blocking; the client's regions are
     * registered on {@code pd}. The future fails with the connect's exception.
     */
    public static CompletableFuture<KvClient> connect(Device dev, ProtectionDomain pd, InetSocketAddress server,
                                                      int maxBody, Duration timeout) {
        CompletionQueue cq;
        MemoryRegion out;
        MemoryRegion in;
        try {
            cq = dev.createCompletionQueue(4 * DEPTH);
            out = pd.register(ByteBuffer.allocateDirect(MESSAGE_BYTES), EnumSet.of(Access.LOCAL_WRITE));
            in = pd.register(ByteBuffer.allocateDirect(MESSAGE_BYTES), EnumSet.of(Access.LOCAL_WRITE));
        } catch (RdmaException e) {
            return CompletableFuture.failedFuture(e);
        }
        // the buffer for the first reply is posted before this side's MPA frame goes out
        QueuePairConfig qp = QueuePairConfig.of(pd, cq, DEPTH).withSge(2, 1).withInline(INLINE_BYTES)
                .withBeforeConnect(q -> q.postRecv(ID_RECV, in, 0, MESSAGE_BYTES));
        return dev.connectionManager().connectAsync(server, qp, ConnectionParameters.builder().build(), timeout)
                .thenApply(c -> {
                    try {
                        return new KvClient(c, cq, out, in, pd, maxBody, timeout);
                    } catch (RdmaException | RuntimeException e) {
                        c.close();
                        throw new IllegalStateException("client setup after connecting to " + server + ": " + e, e);
                    }
                }).whenComplete((c, err) -> {
                    if (err != null) {
                        out.close();
                        in.close();
                        cq.close();
                    }
                });
    }

    private KvClient(Connection conn, CompletionQueue cq, MemoryRegion out, MemoryRegion in, ProtectionDomain pd,
                     int maxBody, Duration opTimeout) throws RdmaException {
        this.conn = conn;
        this.cq = cq;
        this.out = out;
        this.in = in;
        this.opTimeout = opTimeout;
        hello = KvProtocol.Hello.decode(conn.info().peerPrivateData());
        if (hello.maxBody() > maxBody) {
            throw new IllegalArgumentException("the server's values reach " + hello.maxBody() + " bytes, this client's "
                    + maxBody);
        }
        staging = hello.stagingAddress();
        outBuf = out.buffer();
        inBuf = in.buffer();
        header = pd.register(ByteBuffer.allocateDirect(HEADER_BYTES), EnumSet.of(Access.LOCAL_WRITE));
        body = pd.register(ByteBuffer.allocateDirect(maxBody), EnumSet.of(Access.LOCAL_WRITE));
        sink = pd.register(ByteBuffer.allocateDirect(HEADER_BYTES + maxBody), EnumSet.of(Access.LOCAL_WRITE));
        headerBuf = header.buffer();
        bodyBuf = body.buffer();
        sinkBuf = sink.buffer();
        ownVersion = new long[hello.keysPerConnection()];
        seenVersion = new long[hello.totalKeys()];
    }

    /** This connection's number at the server; it owns keys {@link #firstKey()} .. + {@link #ownKeys()} - 1. */
    public int index() {
        return hello.index();
    }

    public long firstKey() {
        return (long) hello.index() * hello.keysPerConnection();
    }

    public int ownKeys() {
        return hello.keysPerConnection();
    }

    /** Keys of the whole store. */
    public int totalKeys() {
        return hello.totalKeys();
    }

    /** Operations completed so far. */
    public long done() {
        return done;
    }

    /** Bytes RDMA-Read and verified so far. */
    public long readBytes() {
        return readBytes;
    }

    /** Where this client is: its connection, the operation under way and the connection's state. */
    public String describe() {
        return "client connection " + hello.index() + ": " + done + " ops done, now " + doing() + "; connection "
                + (conn.isOpen() ? "open" : "closed") + ", failure " + conn.failure();
    }

    /**
     * GET: reads {@code key}'s value from the server's shared region and checks every byte against
     * the version the server named (never older than one this client saw). Returns that version.
     */
    public long get(long key) throws KvException, InterruptedException {
        int s = ++seq;
        doing(GET_REQUEST, key, s, 0, 0, 0, 0);
        message(KvProtocol.OP_GET, key, 0, 0, s);
        request.send(ID_SEND, out, 0, MESSAGE_BYTES);
        request.inline = true;
        request.solicited = true;
        post(request, "GET request");
        await(ID_SEND | ID_RECV, "the GET reply");
        long version = reply(KvProtocol.OP_GET_OK, key, s);
        long address = inBuf.getLong(ADDRESS_OFFSET);
        int rkey = inBuf.getInt(RKEY_OFFSET);
        int length = inBuf.getInt(LENGTH_OFFSET);
        repostReceive();
        long own = key - firstKey();
        if (version < seenVersion[(int) key] || own >= 0 && own < ownVersion.length && version != ownVersion[(int) own]) {
            throw new KvException(doing() + " on " + conn.info() + ": the server returned version " + version
                    + ", this client saw " + seenVersion[(int) key] + " before");
        }
        int bodyLength = KvProtocol.bodyLength(key, version, hello.maxBody());
        if (length != HEADER_BYTES + bodyLength) {
            throw new KvException(doing() + ": the server says " + length + " bytes, version " + version + " has "
                    + (HEADER_BYTES + bodyLength));
        }
        sinkBuf.putLong(0, -1L); // so a Read that placed nothing cannot pass
        doing(GET_READ, key, s, version, address, length, rkey);
        read.read(ID_READ, sink, 0, length, address, rkey);
        post(read, "RDMA Read");
        await(ID_READ, "the RDMA Read");
        String bad = KvProtocol.checkValue(sinkBuf, 0, key, version, bodyLength);
        if (bad != null) {
            throw new KvException(doing() + ": wrong bytes: " + bad + wrongBytesEvidence(key, version, bodyLength,
                    address, length, rkey));
        }
        seenVersion[(int) key] = version;
        readBytes += length;
        finish();
        return version;
    }

    /**
     * PUT: the next version of {@code key}, one of this connection's own keys, written into the
     * staging slot with a two-SGE RDMA Write and committed with an inline solicited Send, both in
     * one post. Returns the version written.
     */
    public long put(long key) throws KvException, InterruptedException {
        long own = key - firstKey();
        if (own < 0 || own >= ownVersion.length) {
            throw new IllegalArgumentException("key " + key + " is not one of connection " + hello.index() + "'s");
        }
        int s = ++seq;
        long version = ownVersion[(int) own] + 1;
        int bodyLength = KvProtocol.bodyLength(key, version, hello.maxBody());
        doing(PUT, key, s, version, staging, bodyLength, 0);
        KvProtocol.writeValue(headerBuf, 0, bodyBuf, 0, key, version, bodyLength);
        write.write(ID_WRITE, header, 0, HEADER_BYTES, staging, hello.rkey());
        write.sgl.add(body, 0, bodyLength);
        write.signaled = false;
        message(KvProtocol.OP_PUT, key, version, HEADER_BYTES + bodyLength, s);
        request.send(ID_SEND, out, 0, MESSAGE_BYTES);
        request.inline = true;
        request.solicited = true;
        write.next = request;
        post(write, "Write + commit chain");
        await(ID_SEND | ID_RECV, "the PUT reply");
        long v = reply(KvProtocol.OP_PUT_OK, key, s);
        if (v != version) {
            throw new KvException(doing() + ": the server committed version " + v);
        }
        staging = inBuf.getLong(ADDRESS_OFFSET);
        repostReceive();
        ownVersion[(int) own] = version;
        seenVersion[(int) key] = version;
        finish();
        return version;
    }

    /** Where the server's values can be seen at rest (diagnostics of a wrong Read; set by the stress runner). */
    interface Inspector {
        String describe(long address, int length);
    }

    volatile Inspector inspector;

    /**
     * Failure path only: what a wrong Read tells, so that a report separates a value wrong at rest
     * (the server's own view) from one wrong in flight (a second Read of the same bytes), with the
     * page offsets of both ends.
     */
    private String wrongBytesEvidence(long key, long version, int bodyLength, long address, int length, int rkey)
            throws InterruptedException {
        StringBuilder b = new StringBuilder();
        b.append(" [source page offset ").append(address & 4095).append(", sink 0x")
                .append(Long.toHexString(sink.address())).append(" page offset ").append(sink.address() & 4095);
        b.append("; first 24 bytes read:");
        for (int i = 0; i < Math.min(24, length); i += 8) {
            b.append(" 0x").append(Long.toHexString(sinkBuf.getLong(i)));
        }
        Inspector in = inspector;
        if (in != null) {
            b.append("; at rest on the server: ").append(in.describe(address, length));
        }
        for (int i = 0; i < length; i++) {
            sinkBuf.put(i, (byte) 0x5A);
        }
        try {
            read.read(ID_READ, sink, 0, length, address, rkey);
            post(read, "second RDMA Read");
            await(ID_READ, "the second RDMA Read");
            String again = KvProtocol.checkValue(sinkBuf, 0, key, version, bodyLength);
            b.append("; a second Read of the same bytes: ").append(again == null ? "right" : again);
        } catch (KvException e) {
            b.append("; a second Read failed: ").append(e.getMessage());
        }
        if (in != null) {
            b.append("; at rest after it: ").append(in.describe(address, length));
        }
        return b.append(']').toString();
    }

    private void finish() {
        done++;
        phase = IDLE;
    }

    private void doing(int what, long key, int s, long version, long address, int length, int rkey) {
        opKey = key;
        opSeq = s;
        opVersion = version;
        opAddress = address;
        opLength = length;
        opRkey = rkey;
        phase = what;
    }

    /** The operation under way, in words (built only when asked: diagnostics and exceptions). */
    private String doing() {
        switch (phase) {
            case GET_REQUEST:
                return "GET key " + opKey + " (seq " + opSeq + ")";
            case GET_READ:
                return "GET key " + opKey + " (seq " + opSeq + "): RDMA Read of " + opLength + " bytes at 0x"
                        + Long.toHexString(opAddress) + " STag 0x" + Integer.toHexString(opRkey);
            case PUT:
                return "PUT key " + opKey + " version " + opVersion + " (seq " + opSeq + ", " + opLength
                        + " bytes to 0x" + Long.toHexString(opAddress) + ")";
            default:
                return "idle";
        }
    }

    private void message(byte op, long key, long version, int length, int s) {
        outBuf.put(OP_OFFSET, op);
        outBuf.put(STATUS_OFFSET, KvProtocol.STATUS_OK);
        outBuf.putInt(RKEY_OFFSET, 0);
        outBuf.putLong(KEY_OFFSET, key);
        outBuf.putLong(VERSION_OFFSET, version);
        outBuf.putLong(ADDRESS_OFFSET, 0);
        outBuf.putInt(LENGTH_OFFSET, length);
        outBuf.putInt(SEQ_OFFSET, s);
    }

    /** Checks the reply in the receive buffer; returns its version. */
    private long reply(byte op, long key, int s) throws KvException {
        byte got = inBuf.get(OP_OFFSET);
        if (got == KvProtocol.OP_ERROR) {
            throw new KvException(doing() + ": the server answered error status " + inBuf.get(STATUS_OFFSET));
        }
        if (got != op || inBuf.getLong(KEY_OFFSET) != key || inBuf.getInt(SEQ_OFFSET) != s) {
            throw new KvException(doing() + ": unexpected reply op " + got + " key " + inBuf.getLong(KEY_OFFSET)
                    + " seq " + inBuf.getInt(SEQ_OFFSET));
        }
        return inBuf.getLong(VERSION_OFFSET);
    }

    private void repostReceive() throws KvException {
        try {
            conn.queuePair().postRecv(ID_RECV, in, 0, MESSAGE_BYTES);
        } catch (RdmaException e) {
            throw new KvException(doing() + ": reposting the reply buffer: " + e.getMessage() + "; " + describe(), e);
        }
    }

    private void post(SendRequest wr, String what) throws KvException {
        try {
            conn.queuePair().postSend(wr);
        } catch (RdmaException e) {
            throw new KvException(doing() + ": posting the " + what + ": " + e.getMessage() + "; " + describe(), e);
        }
    }

    /** Waits until the completions named by the {@code want} bits arrived, each successful. */
    private void await(long want, String what) throws KvException, InterruptedException {
        long got = 0;
        long deadline = System.nanoTime() + opTimeout.toNanos();
        while ((got & want) != want) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new KvException(doing() + ": no completion of " + what + " within " + opTimeout.toMillis()
                        + " ms (completions seen: " + Long.toBinaryString(got) + " of " + Long.toBinaryString(want)
                        + "); " + describe());
            }
            int n = cq.await(wcs, wcs.length, Math.min(left, TimeUnit.SECONDS.toNanos(1)), TimeUnit.NANOSECONDS);
            for (int i = 0; i < n; i++) {
                WorkCompletion wc = wcs[i];
                if (!wc.isSuccess()) {
                    throw new KvException(doing() + ": waiting for " + what + ": " + wc + "; " + describe());
                }
                got |= wc.wrId;
            }
        }
    }

    /** Disconnects and deregisters this client's regions. */
    @Override
    public void close() {
        conn.close();
        header.close();
        body.close();
        sink.close();
        out.close();
        in.close();
        cq.close();
    }
}
