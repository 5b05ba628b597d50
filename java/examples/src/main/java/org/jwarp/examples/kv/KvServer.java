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
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.AsyncEvent;
import org.jwarp.verbs.CompletionChannel;
import org.jwarp.verbs.CompletionQueue;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.ConnectionRequest;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.ProtectionDomain;
import org.jwarp.verbs.QueuePair;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaProvider;
import org.jwarp.verbs.RdmaTimeoutException;
import org.jwarp.verbs.RecvRequest;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.SharedReceiveQueue;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.jwarp.verbs.WorkRequestException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The key-value server: every connection's requests land in one shared receive queue, server
 * threads sleep on their completion channels, and all values live in one region registered once
 * with remote read and write access, which clients RDMA-Read (GET) and RDMA-Write into (PUT
 * staging slots).
 */
public final class KvServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(KvServer.class);
    private static final long REPLY_ID = -1;
    private static final int SEND_DEPTH = 8;

    /**
     * @param maxConnections    connections accepted at most (later ones are rejected)
     * @param keysPerConnection keys each connection owns
     * @param maxBody           largest value body in bytes
     * @param threads           server threads, each with its own completion channel and CQ
     */
    public record Config(int maxConnections, int keysPerConnection, int maxBody, int threads) {
        public Config {
            if (maxConnections < 1 || keysPerConnection < 1 || maxBody < 1 || threads < 1) {
                throw new IllegalArgumentException("every server setting must be >= 1: " + this);
            }
        }

        int keys() {
            return maxConnections * keysPerConnection;
        }

        int slotBytes() {
            return (HEADER_BYTES + maxBody + 63) & ~63;
        }

        int slots() {
            return keys() + 2 * maxConnections;
        }
    }

    private final Config config;
    private final Device dev;
    private final ProtectionDomain pd;
    private final MemoryRegion values;
    private final ByteBuffer valuesView;
    private final SharedReceiveQueue srq;
    private final MemoryRegion inbox;
    private final SlotTable table;
    private final Worker[] workers;
    private final Listener listener;
    private final Thread acceptor;
    private final ExecutorService events;
    private final Map<Integer, Peer> byQp = new ConcurrentHashMap<>();
    private final List<Peer> peers = new ArrayList<>();
    private final List<CompletableFuture<Connection>> pending = new ArrayList<>();
    private final ConcurrentLinkedQueue<KvException> failures = new ConcurrentLinkedQueue<>();
    private volatile boolean closing;
    private int nextIndex;

    /** One client connection as the server sees it. */
    private static final class Peer {
        final int index;
        final InetSocketAddress remote;
        final SlotTable.Lease lease = new SlotTable.Lease();
        volatile QueuePair qp;
        volatile Connection connection;
        volatile boolean gone;

        Peer(int index, InetSocketAddress remote) {
            this.index = index;
            this.remote = remote;
        }

        @Override
        public String toString() {
            return "connection " + index + " from " + remote;
        }
    }

    private KvServer(RdmaProvider provider, InetSocketAddress at, Config config) throws RdmaException {
        this.config = config;
        dev = provider.open(at.getAddress());
        try {
            pd = dev.allocateProtectionDomain();
            // Page-aligned, so that no slot's first 32 bytes cross a 4 KiB page boundary (slots are
            // 64-byte multiples): kernel siw returns a Read of at most 32 bytes whose source crosses
            // a page boundary with wrong bytes (siw_try_1seg; see the README's device notes), and a
            // GET of a short value is such a Read.
            // (alignedSlice rounds both ends to the page: ask for whole pages and one more)
            int pages = (config.slots() * config.slotBytes() + 4095) / 4096 + 1;
            values = pd.register(ByteBuffer.allocateDirect(pages * 4096).alignedSlice(4096),
                    EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ, Access.REMOTE_WRITE));
            valuesView = values.buffer();
            table = new SlotTable(config.keys(), config.slots());
            for (int key = 0; key < config.keys(); key++) {
                int s = table.load(key);
                int at0 = s * config.slotBytes();
                KvProtocol.writeValue(valuesView, at0, valuesView, at0 + HEADER_BYTES, key, 0,
                        KvProtocol.bodyLength(key, 0, config.maxBody()));
            }
            int buffers = 2 * config.maxConnections() + 16;
            srq = pd.createSharedReceiveQueue(buffers, 1);
            inbox = pd.register(ByteBuffer.allocateDirect(buffers * MESSAGE_BYTES), EnumSet.of(Access.LOCAL_WRITE));
            RecvRequest rr = new RecvRequest();
            for (int i = 0; i < buffers; i++) {
                srq.postRecv(rr.set(i, inbox, (long) i * MESSAGE_BYTES, MESSAGE_BYTES));
            }
            workers = new Worker[config.threads()];
            int perWorker = (config.maxConnections() + config.threads() - 1) / config.threads();
            for (int i = 0; i < workers.length; i++) {
                workers[i] = new Worker(i, 2 * perWorker + 16);
            }
            events = Executors.newSingleThreadExecutor(r -> daemon(r, "kv-server-events"));
            dev.setEventListener(this::onEvent, events);
            listener = dev.connectionManager().listen(at, config.maxConnections());
        } catch (RdmaException | RuntimeException e) {
            dev.close();
            throw e;
        }
        for (Worker w : workers) {
            w.thread.start();
        }
        acceptor = daemon(this::acceptLoop, "kv-server-accept");
        acceptor.start();
    }

    /** Opens the device serving {@code at}'s address, listens on {@code at} and starts the server threads. */
    public static KvServer start(RdmaProvider provider, InetSocketAddress at, Config config) throws RdmaException {
        return new KvServer(provider, at, config);
    }

    /** Where the server listens. */
    public InetSocketAddress address() {
        return listener.localAddress();
    }

    /** What went wrong on the server's side so far (empty when nothing did). */
    public List<KvException> failures() {
        return new ArrayList<>(failures);
    }

    /** Value slots not accounted for once every connection is gone (0 when nothing leaked). */
    public int leakedSlots() {
        return config.slots() - config.keys() - table.freeSlots();
    }

    /**
     * Diagnostics: the value header at {@code address} of the shared region as the server sees it,
     * and what the slot table says that slot holds.
     */
    public String describeAt(long address, int length) {
        long off = address - values.address();
        if (off < 0 || off + length > (long) config.slots() * config.slotBytes()) {
            return "0x" + Long.toHexString(address) + " is outside the value region";
        }
        int slot = (int) (off / config.slotBytes());
        int at = (int) off;
        StringBuilder b = new StringBuilder("slot ").append(slot).append(" (offset ").append(off % config.slotBytes())
                .append(") bytes:");
        for (int i = 0; i < Math.min(24, length); i += 8) {
            b.append(" 0x").append(Long.toHexString(valuesView.getLong(at + i)));
        }
        return b.append(", table: ").append(table.describe(slot)).toString();
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    private void fail(String context, Throwable cause) {
        KvException e = new KvException("server: " + context + (cause == null ? "" : ": " + cause), cause);
        LOG.error("{}", e.getMessage(), cause);
        failures.add(e);
    }

    private void acceptLoop() {
        while (!closing) {
            ConnectionRequest req;
            try {
                req = listener.next(Duration.ofMillis(200));
            } catch (RdmaTimeoutException e) {
                continue;
            } catch (RdmaException e) {
                if (!closing) {
                    fail("listener on " + listener.localAddress(), e);
                }
                return;
            } catch (InterruptedException e) {
                return;
            }
            try {
                accept(req);
            } catch (RdmaException | RuntimeException e) {
                fail("accepting " + req.remote(), e);
            }
        }
    }

    private void accept(ConnectionRequest req) throws RdmaException {
        int index = nextIndex++;
        if (index >= config.maxConnections()) {
            LOG.warn("rejecting {}: the server takes {} connections", req.remote(), config.maxConnections());
            req.reject("kv: server full".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            return;
        }
        Peer peer = new Peer(index, req.remote());
        peer.lease.staging = table.allocate();
        Worker w = workers[index % workers.length];
        QueuePairConfig qp = new QueuePairConfig(pd, w.cq, w.cq, SEND_DEPTH, 1).withSrq(srq).withInline(INLINE_BYTES)
                .withBeforeConnect(q -> {
                    peer.qp = q;
                    byQp.put(q.qpNum(), peer);
                });
        byte[] hello = new KvProtocol.Hello(index, config.keysPerConnection(), config.keys(), config.maxBody(),
                values.rkey(), slotAddress(peer.lease.staging)).encode();
        CompletableFuture<Connection> f = req.acceptAsync(qp, ConnectionParameters.builder().privateData(hello).build());
        synchronized (peers) {
            pending.add(f);
        }
        f.whenComplete((conn, err) -> {
            if (err != null) {
                if (!closing) {
                    fail("accept of " + peer, err);
                }
                peer.gone = true;
                table.close(peer.lease);
                return;
            }
            peer.connection = conn;
            synchronized (peers) {
                peers.add(peer);
            }
            LOG.debug("accepted {} on server thread {}, qp {}", peer, w.id, conn.queuePair().qpNum());
        });
    }

    private long slotAddress(int slot) {
        return values.address() + (long) slot * config.slotBytes();
    }

    private void onEvent(AsyncEvent e) {
        Peer peer = byQp.get(e.qpNum());
        switch (e.type()) {
            case PEER_DISCONNECTED, CLOSED -> {
                if (peer != null && !peer.gone) {
                    peer.gone = true;
                    LOG.debug("{}: {}", peer, e.type());
                    if (!closing) {
                        Connection c = peer.connection;
                        if (c != null) {
                            c.close();
                        }
                        table.close(peer.lease);
                    }
                }
            }
            case QP_FATAL, CQ_ERROR -> {
                if (!closing && (peer == null || !peer.gone)) {
                    fail(e.type() + " on " + (peer == null ? "qp " + e.qpNum() : peer) + ": " + e.detail(), null);
                }
            }
            default -> LOG.debug("event {}", e);
        }
    }

    /** A server thread: one completion channel, one CQ for its share of the connections. */
    private final class Worker implements Runnable {
        final int id;
        final CompletionChannel channel;
        final CompletionQueue cq;
        final MemoryRegion out;
        final ByteBuffer outBuf;
        final ByteBuffer in;
        final SendRequest reply = new SendRequest();
        final RecvRequest repost = new RecvRequest();
        final WorkCompletion[] wcs = new WorkCompletion[16];
        final Thread thread;

        Worker(int id, int cqEntries) throws RdmaException {
            this.id = id;
            channel = dev.createCompletionChannel();
            cq = dev.createCompletionQueue(cqEntries, channel);
            out = pd.register(ByteBuffer.allocateDirect(MESSAGE_BYTES), EnumSet.of(Access.LOCAL_WRITE));
            outBuf = out.buffer();
            in = inbox.buffer();
            for (int i = 0; i < wcs.length; i++) {
                wcs[i] = new WorkCompletion();
            }
            thread = daemon(this, "kv-server-" + id);
        }

        @Override
        public void run() {
            try {
                while (!closing) {
                    drain();
                    cq.requestNotify(true);
                    drain(); // completions that raced the arming
                    channel.next(100, TimeUnit.MILLISECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Throwable t) {
                fail("server thread " + id + " stopped", t);
            }
        }

        private void drain() {
            int n;
            while ((n = cq.poll(wcs, wcs.length)) > 0) {
                for (int i = 0; i < n; i++) {
                    handle(wcs[i]);
                }
            }
        }

        private void handle(WorkCompletion wc) {
            Peer peer = byQp.get(wc.qpNum);
            if (!wc.isSuccess()) {
                if (closing || wc.status == WcStatus.WR_FLUSH_ERR && (peer == null || peer.gone)) {
                    LOG.debug("server thread {}: {} on {}", id, wc, peer);
                } else {
                    fail("server thread " + id + ": " + wc + " on " + (peer == null ? "an unknown QP" : peer)
                            + (peer != null && peer.connection != null ? ", connection failure: "
                            + peer.connection.failure() : ""), null);
                }
                if (wc.wrId >= 0 && !closing) {
                    repost((int) wc.wrId);
                }
                return;
            }
            if (wc.wrId == REPLY_ID) {
                return;
            }
            int buf = (int) wc.wrId;
            int at = buf * MESSAGE_BYTES;
            byte op = in.get(at + OP_OFFSET);
            long key = in.getLong(at + KEY_OFFSET);
            long version = in.getLong(at + VERSION_OFFSET);
            int length = in.getInt(at + LENGTH_OFFSET);
            int seq = in.getInt(at + SEQ_OFFSET);
            int bytes = wc.byteLength;
            repost(buf);
            if (peer == null) {
                fail("server thread " + id + ": a request on QP " + wc.qpNum + ", which no connection has", null);
                return;
            }
            if (bytes != MESSAGE_BYTES) {
                answerError(peer, KvProtocol.STATUS_BAD_REQUEST, key, seq, "request of " + bytes + " bytes");
            } else if (op == KvProtocol.OP_GET) {
                get(peer, key, seq);
            } else if (op == KvProtocol.OP_PUT) {
                put(peer, key, version, length, seq);
            } else {
                answerError(peer, KvProtocol.STATUS_BAD_REQUEST, key, seq, "unknown op " + op);
            }
        }

        private void repost(int buf) {
            try {
                srq.postRecv(repost.set(buf, inbox, (long) buf * MESSAGE_BYTES, MESSAGE_BYTES));
            } catch (WorkRequestException e) {
                if (!closing) {
                    fail("server thread " + id + ": reposting receive buffer " + buf, e);
                }
            }
        }

        private void get(Peer peer, long key, int seq) {
            if (key < 0 || key >= config.keys()) {
                answerError(peer, KvProtocol.STATUS_BAD_REQUEST, key, seq, "GET of key " + key + " outside 0.."
                        + (config.keys() - 1));
                return;
            }
            int slot = table.get(peer.lease, (int) key);
            if (slot < 0) {
                return; // the connection is gone
            }
            long version = peer.lease.pinnedVersion;
            int length = HEADER_BYTES + KvProtocol.bodyLength(key, version, config.maxBody());
            answer(peer, KvProtocol.OP_GET_OK, KvProtocol.STATUS_OK, key, version, slotAddress(slot), length, seq);
        }

        private void put(Peer peer, long key, long version, int length, int seq) {
            table.release(peer.lease); // the client read its last GET's value before it sent this
            long first = (long) peer.index * config.keysPerConnection();
            if (key < first || key >= first + config.keysPerConnection()) {
                answerError(peer, KvProtocol.STATUS_NOT_OWNER, key, seq, "PUT of key " + key + ", which "
                        + peer + " does not own");
                return;
            }
            long current = table.version((int) key);
            if (version != current + 1) {
                answerError(peer, KvProtocol.STATUS_STALE_VERSION, key, seq, "PUT of key " + key + " version "
                        + version + " on version " + current);
                return;
            }
            int staging = table.staging(peer.lease);
            if (staging < 0) {
                return; // the connection is gone
            }
            int body = KvProtocol.bodyLength(key, version, config.maxBody());
            String bad = length != HEADER_BYTES + body ? "commit says " + length + " bytes, expected "
                    + (HEADER_BYTES + body)
                    : KvProtocol.checkValue(valuesView, staging * config.slotBytes(), key, version, body);
            if (bad != null) {
                answerError(peer, KvProtocol.STATUS_BAD_DATA, key, seq, "PUT of key " + key + " version " + version
                        + ": the Written staging slot " + staging + " is wrong: " + bad);
                return;
            }
            int next = table.commit(peer.lease, (int) key, version);
            if (next < 0) {
                return;
            }
            answer(peer, KvProtocol.OP_PUT_OK, KvProtocol.STATUS_OK, key, version, slotAddress(next), 0, seq);
        }

        private void answerError(Peer peer, byte status, long key, int seq, String why) {
            fail("server thread " + id + ", " + peer + ": " + why, null);
            answer(peer, KvProtocol.OP_ERROR, status, key, 0, 0, 0, seq);
        }

        private void answer(Peer peer, byte op, byte status, long key, long version, long address, int length,
                            int seq) {
            outBuf.put(OP_OFFSET, op);
            outBuf.put(STATUS_OFFSET, status);
            outBuf.putInt(RKEY_OFFSET, values.rkey());
            outBuf.putLong(KEY_OFFSET, key);
            outBuf.putLong(VERSION_OFFSET, version);
            outBuf.putLong(ADDRESS_OFFSET, address);
            outBuf.putInt(LENGTH_OFFSET, length);
            outBuf.putInt(SEQ_OFFSET, seq);
            reply.send(REPLY_ID, out, 0, MESSAGE_BYTES);
            reply.inline = true;
            try {
                peer.qp.postSend(reply);
            } catch (WorkRequestException e) {
                if (!closing && !peer.gone) {
                    fail("server thread " + id + ": reply to " + peer, e);
                }
            }
        }
    }

    /**
     * Stops accepting, stops the server threads, closes every connection and releases the
     * device. Failures while closing are logged; the first is thrown.
     */
    @Override
    public void close() {
        closing = true;
        RuntimeException first = null;
        listener.close();
        try {
            acceptor.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        List<CompletableFuture<Connection>> accepts;
        synchronized (peers) {
            accepts = new ArrayList<>(pending);
        }
        for (CompletableFuture<Connection> f : accepts) {
            f.cancel(true);
        }
        for (Worker w : workers) {
            try {
                w.thread.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (w.thread.isAlive()) {
                fail("server thread " + w.id + " did not stop within 10 s", null);
            }
        }
        List<Peer> all;
        synchronized (peers) {
            all = new ArrayList<>(peers);
        }
        for (Peer p : all) {
            try {
                p.connection.close();
            } catch (RuntimeException e) {
                first = first == null ? e : first;
                LOG.warn("closing {}", p, e);
            }
            p.gone = true;
            table.close(p.lease);
        }
        dev.setEventListener(null, null);
        events.shutdown();
        for (Worker w : workers) {
            w.cq.close();
            w.channel.close();
            w.out.close();
        }
        srq.close();
        inbox.close();
        values.close();
        pd.close();
        dev.close();
        if (first != null) {
            throw first;
        }
    }
}
