package org.jwarp.bench;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import org.jwarp.verbs.CompletionQueue;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.QueuePair;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WorkCompletion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server half of the perftest-style operations (RFC 5040 §5 data transfer) on one
 * {@link ProviderFixture.Side}, run on its own thread, in the client's JVM or in a
 * {@link BenchPeer} JVM: it echoes Sends ({@link ProviderPingPong.Peer#ECHO}), answers each
 * Write whose last byte carries the next iteration number with a Write of the same number into
 * the client's receive region ({@link ProviderPingPong.Peer#WRITE_POLL}, ib_write_lat), or
 * re-posts receives and returns a credit every window/4 Sends ({@link ProviderPingPong.Peer#SEND_SINK}),
 * or re-posts receives and RDMA-Writes the count received so far into the client's receive region
 * at about every third of its receive depth ({@link ProviderPingPong.Peer#CREDIT_WRITE}, how
 * perftest's ib_send_bw keeps an iWARP sender within the receives its server has posted).
 * It ends when closed or when its connections close. Nothing is allocated per message.
 */
final class PeerSide implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PeerSide.class);
    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());
    private static final boolean LITTLE = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

    private final ProviderFixture.Side side;
    private final ProviderPingPong.Peer mode;
    private final boolean spin;
    private final int size;
    private final int sinkWindow;
    private final long clientRxAddr;
    private final int clientRxKey;
    private final int last;
    private final int lastWord;
    private final int lastShift;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile Throwable failure;

    /**
     * Starts the loop for {@code mode} on {@code side}; {@code clientRxAddr}/{@code clientRxKey}
     * name the client's receive region (write ping-pong).
     */
    PeerSide(ProviderFixture.Side side, ProviderPingPong.Peer mode, boolean spin, int size, int sinkWindow,
             long clientRxAddr, int clientRxKey) {
        this.side = side;
        this.mode = mode;
        this.spin = spin;
        this.size = size;
        this.sinkWindow = sinkWindow;
        this.clientRxAddr = clientRxAddr;
        this.clientRxKey = clientRxKey;
        this.last = size - 1;
        this.lastWord = last & ~7;
        this.lastShift = 8 * (LITTLE ? last - lastWord : 7 - (last - lastWord));
        thread = switch (mode) {
            case ECHO -> new Thread(this::echoLoop, "bench-peer-echo");
            case WRITE_POLL -> new Thread(this::writePollLoop, "bench-peer-write");
            case SEND_SINK -> new Thread(this::sendSinkLoop, "bench-peer-sink");
            case CREDIT_WRITE -> new Thread(this::sendSinkLoop, "bench-peer-credit");
            case NONE -> null;
        };
        if (thread != null) {
            thread.setDaemon(true);
            thread.start();
        }
    }

    /** The receives the peer needs before the client's first message (post them before connecting). */
    static void prePost(ProviderPingPong.Peer mode, QueuePair qp, int index, ProviderFixture.Side side, int size,
                        int sinkWindow) throws RdmaException {
        if (mode == ProviderPingPong.Peer.ECHO) {
            qp.postRecv(index, side.rx, 0, size);
        } else if (mode == ProviderPingPong.Peer.SEND_SINK || mode == ProviderPingPong.Peer.CREDIT_WRITE) {
            for (int i = 0; i < sinkWindow; i++) {
                qp.postRecv(i, side.rx, 0, size);
            }
        }
    }

    /** The loop's failure, or null. */
    Throwable failure() {
        return failure;
    }

    boolean isAlive() {
        return thread != null && thread.isAlive();
    }

    private boolean anyOpen() {
        for (Connection c : side.conns) {
            if (c != null && c.isOpen()) {
                return true;
            }
        }
        return false;
    }

    private int waitFor(CompletionQueue cq, WorkCompletion[] out) throws InterruptedException {
        if (!spin) {
            return cq.await(out, out.length, 100, TimeUnit.MILLISECONDS);
        }
        return ProviderPingPong.spinFor(cq, out);
    }

    /** False when the loop should end quietly: closed, or its connections are gone. */
    private boolean failedQuietly(WorkCompletion wc) {
        return !running || !anyOpen() || wc.status == org.jwarp.verbs.WcStatus.WR_FLUSH_ERR;
    }

    private void echoLoop() {
        WorkCompletion[] out = ProviderPingPong.wcs(16);
        SendRequest reply = new SendRequest();
        long id = 0;
        try {
            while (running) {
                int n = waitFor(side.cq, out);
                if (n == 0 && !anyOpen()) {
                    return;
                }
                for (int k = 0; k < n; k++) {
                    WorkCompletion wc = out[k];
                    if (!wc.isSuccess()) {
                        if (failedQuietly(wc)) {
                            return;
                        }
                        throw new RdmaException("peer completion failed: " + wc);
                    }
                    if (wc.opcode != WcOpcode.RECV) {
                        continue;
                    }
                    int idx = (int) wc.wrId;
                    QueuePair qp = side.conns[idx].queuePair();
                    qp.postRecv(idx, side.rx, 0, size);
                    qp.postSend(reply.send(++id, side.tx, 0, wc.byteLength));
                }
            }
        } catch (Throwable t) {
            fail(t);
        }
    }

    private byte lastByte(ByteBuffer b) {
        return (byte) ((long) LONGS.getVolatile(b, lastWord) >>> lastShift);
    }

    private void writePollLoop() {
        ByteBuffer rx = side.rx.buffer().order(ByteOrder.nativeOrder());
        ByteBuffer tx = side.tx.buffer().order(ByteOrder.nativeOrder());
        for (int i = 0; i < size; i++) {
            tx.put(i, (byte) (i + 1));
        }
        SendRequest reply = new SendRequest();
        WorkCompletion[] out = ProviderPingPong.wcs(16);
        QueuePair qp = side.conns[0].queuePair();
        byte expect = 0;
        long id = 0;
        try {
            while (running) {
                byte want = (byte) (expect + 1);
                int spins = 0;
                while (lastByte(rx) != want) {
                    if (!running || ((++spins & 0xFFFF) == 0 && !anyOpen())) {
                        return;
                    }
                    if (ProviderPingPong.WRITE_PROGRESS) {
                        side.cq.progress();
                    }
                    if (ProviderPingPong.SPIN_PAUSE) {
                        Thread.onSpinWait();
                    }
                }
                expect = want;
                tx.put(last, want);
                reply.write(++id, side.tx, 0, size, clientRxAddr, clientRxKey);
                reply.signaled = true;
                qp.postSend(reply); // signaled, its completion polled: perftest's loop
                int n;
                while ((n = ProviderPingPong.spinFor(side.cq, out)) == 0 && running) {
                    // bounded spins; the loop re-checks running between them
                }
                if (n > 0 && !out[0].isSuccess()) {
                    if (failedQuietly(out[0])) {
                        return;
                    }
                    throw new RdmaException("peer completion failed: " + out[0]);
                }
            }
        } catch (Throwable t) {
            fail(t);
        }
    }

    /**
     * {@link ProviderPingPong.Peer#SEND_SINK}: re-posts each receive as it completes and returns a
     * zero-length Send as a credit every window/4 receives. {@link ProviderPingPong.Peer#CREDIT_WRITE}:
     * {@code sinkWindow} receives stay posted (each re-posted as it completes); whenever the count
     * received so far, taken modulo the receive depth, is a multiple of a third of it, the count
     * goes to the first 8 bytes of the client's receive region in a signaled RDMA Write from the
     * first 8 bytes of this side's transmit region (the client posts a Send only while it has sent
     * fewer than that count plus the receive depth); on a device that is not iWARP (rxe) no count
     * is written, as perftest sends no credits there. Completions other than receives are reaped
     * and need nothing else.
     */
    private void sendSinkLoop() {
        WorkCompletion[] out = ProviderPingPong.wcs(64);
        SendRequest credit = new SendRequest();
        QueuePair qp = side.conns[0].queuePair();
        boolean writeCount = mode == ProviderPingPong.Peer.CREDIT_WRITE;
        ByteBuffer count = side.tx.buffer().order(ByteOrder.nativeOrder());
        int mod = writeCount ? Math.max(1, sinkWindow / 3) : Math.max(1, sinkWindow / 4);
        int taken = 0;
        long received = 0;
        long id = 0;
        try {
            while (running) {
                int n = waitFor(side.cq, out);
                if (n == 0 && !anyOpen()) {
                    return;
                }
                for (int k = 0; k < n; k++) {
                    WorkCompletion wc = out[k];
                    if (!wc.isSuccess()) {
                        if (failedQuietly(wc)) {
                            return;
                        }
                        throw new RdmaException("peer completion failed: " + wc);
                    }
                    if (wc.opcode != WcOpcode.RECV) {
                        continue;
                    }
                    qp.postRecv(wc.wrId, side.rx, 0, size);
                    received++;
                    if (writeCount) {
                        if (side.iwarp && (int) (received % sinkWindow) % mod == 0) {
                            LONGS.setVolatile(count, 0, received);
                            credit.write(++id, side.tx, 0, Long.BYTES, clientRxAddr, clientRxKey);
                            credit.signaled = true;
                            qp.postSend(credit);
                        }
                    } else if (++taken == mod) {
                        taken = 0;
                        credit.send(++id, null, 0, 0);
                        credit.signaled = (id & 7) == 0;
                        qp.postSend(credit);
                    }
                }
            }
        } catch (Throwable t) {
            fail(t);
        }
    }

    private void fail(Throwable t) {
        if (!running || !anyOpen()) {
            return;
        }
        failure = t;
        LOG.error("benchmark peer ({}) failed", mode, t);
    }

    /** Stops the loop and waits for it (up to 2 s). */
    @Override
    public void close() {
        running = false;
        if (thread != null) {
            try {
                thread.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
