package org.jwarp.soft;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectionKey;

import org.jwarp.verbs.RdmaTimeoutException;

/**
 * Receive path of one {@link SoftStream} (siw_qp_rx): reactor reads with a per-turn budget, the
 * FPDU stall timer (RFC 6581 §9.3), and receive polling by a thread waiting on a CQ of the QP
 * (see {@link SoftCompletionQueue}): while a poller holds the stream (<em>polled</em>) its key has
 * no OP_READ interest; the poller hands it back before it parks, the reactor takes it back after
 * the lease, and anything only the reactor may do (EOF, an I/O error, a TERM) hands it back at
 * once. Reads happen only under the I/O lock, so bytes reach the engine in order.
 */
final class StreamReceive {
    /** {@link #pollReceive} results. */
    static final int POLL_NO = 0;
    static final int POLL_BUSY = 1;
    static final int POLL_HELD = 2;
    /** Bytes an established stream reads per reactor turn (bounded work per connection per turn). */
    static final int READ_BUDGET = 64 * 1024;
    /** A poller reads the socket and OP_READ is off; written under the I/O lock, read racily. */
    private volatile boolean polled;
    /** When a poller last read the socket ({@link System#nanoTime()}). */
    private volatile long polledAt;
    /** A poller met EOF / an I/O error; the reactor acts on it. Guarded by the I/O lock. */
    boolean pendingEof;
    IOException pendingError;
    /** Inbound FPDUs decoded when the FPDU stall timer was armed (reactor, under the I/O lock). */
    private long stallMark;
    /** Most FPDUs decoded in one reactor read turn (reactor only; read racily by tests). */
    private volatile long maxFpdusPerTurn;

    private final SoftStream s;

    StreamReceive(SoftStream s) {
        this.s = s;
    }

    /**
     * Poller thread (a thread waiting on a CQ of this stream's QP): if nobody else drives the
     * stream right now, reads what the socket has (non-blocking), runs the engine on it and
     * transmits what that produced (Read Responses, answers posted meanwhile); completions go to
     * the CQs as they would from the reactor. With {@code claim} it takes the stream over from the
     * reactor (OP_READ off) if needed; without, it reads only a stream some poller already holds.
     * Anything only the reactor may do hands the stream back.
     *
     * @param rx   the poller's receive buffer (the engine copies what it keeps)
     * @param hold the leader blocks on the socket next: the lease does not run meanwhile
     * @return {@link #POLL_HELD} when the caller holds the stream now, {@link #POLL_BUSY} when
     *         someone else drove it just now, {@link #POLL_NO} when it stays with the reactor
     */
    int pollReceive(ByteBuffer rx, boolean claim, boolean hold) {
        if (s.phase != SoftStream.Phase.ESTABLISHED || (!claim && !polled) || s.io.isHeldByCurrentThread()
                || s.reactor.inReactorThread()) {
            return POLL_NO;
        }
        if (!s.io.tryLock()) {
            return POLL_BUSY;
        }
        try {
            if (s.phase != SoftStream.Phase.ESTABLISHED || s.rtrTimer || pendingEof || pendingError != null || s.key == null
                    || !s.key.isValid()) {
                return POLL_NO; // a deadline (the RTR timer) or a pending event: the reactor's business
            }
            if (!polled) {
                if (!claim) {
                    return POLL_NO;
                }
                polled = true;
                readInterest(false);
                s.reactor.addPolled(s);
            }
            polledAt = System.nanoTime();
            s.sender.inline = true;
            s.sender.deferred = false;
            boolean got = false;
            try {
                for (int round = 0; round < 8; round++) {
                    rx.clear();
                    int n = s.ch.read(rx);
                    if (n < 0) {
                        pendingEof = true;
                        s.sender.deferred = true;
                        break;
                    }
                    if (n == 0) {
                        break;
                    }
                    got = true;
                    rx.flip();
                    s.data.onBytes(rx);
                    if (s.sender.deferred || s.phase != SoftStream.Phase.ESTABLISHED || n < rx.capacity()) {
                        break;
                    }
                }
                // Transmit what the input produced (Read Responses, a TERM); with nothing read the
                // output side is the posters' and the reactor's (a pump here would only contend).
                if (got && !s.sender.deferred) {
                    s.sender.pumpInline();
                    if (!s.sender.deferred) {
                        s.sender.flush();
                    }
                }
            } catch (IOException e) {
                pendingError = e;
                s.sender.deferred = true;
            } finally {
                s.sender.inline = false;
            }
            if (s.sender.deferred) {
                unpoll();
                s.reactor.schedule(s); // wakes the loop: it applies OP_READ and acts on what was met
                return POLL_NO;
            }
            if (s.sender.moreOutput) {
                s.reactor.schedule(s); // round cap: the reactor goes on
            }
            if (hold) {
                // Set under the lock: a lease check (also under it) cannot revoke what the
                // leader is about to block on.
                polledAt = System.nanoTime() + (1L << 62);
            }
            return POLL_HELD;
        } catch (CancelledKeyException e) {
            return POLL_NO; // closed meanwhile
        } finally {
            s.io.unlock();
        }
    }

    /** Poller thread, about to park (holding no CQ lock): the reactor reads this stream again. */
    void releasePoll() {
        if (!polled) {
            return;
        }
        s.lockIo();
        try {
            if (polled) {
                unpoll();
                s.reactor.wake(); // the selector applies the restored OP_READ only when it (re)enters select
            }
        } finally {
            s.io.unlock();
        }
    }

    /** Reactor thread: takes the stream back when its poller has not read it for {@code leaseNanos}. */
    void revokeStalePoll(long now, long leaseNanos) {
        if (!polled || now - polledAt < leaseNanos || !s.io.tryLock()) {
            return; // a poller holding the lock is reading: not stale
        }
        try {
            if (polled && now - polledAt >= leaseNanos) {
                unpoll();
                armStallTimer();
            }
        } finally {
            s.io.unlock();
        }
    }

    /** The leader stopped blocking: the lease runs from now. */
    void touchPoll() {
        polledAt = System.nanoTime();
    }

    /** True while a poller holds the stream (tests, diagnostics). */
    boolean isPolled() {
        return polled;
    }

    /** {@link SoftStream#io} held. */
void unpoll() {
        if (polled) {
            polled = false;
            readInterest(true);
            s.reactor.removePolled(s);
            if (s.data != null && s.data.partialInput() && !s.timed) {
                s.reactor.schedule(s); // the reactor arms the FPDU stall timer (runScheduled)
            }
        }
    }

void readInterest(boolean on) {
        if (s.key != null && s.key.isValid()) {
            try {
                int ops = s.key.interestOps();
                int want = on ? ops | SelectionKey.OP_READ : ops & ~SelectionKey.OP_READ;
                if (want != ops) {
                    s.key.interestOps(want);
                }
            } catch (CancelledKeyException e) {
                // closed meanwhile
            }
        }
    }

    /**
     * Reactor thread, {@link SoftStream#io} held, after input: part of an FPDU is buffered and no timer
     * runs, so arm the FPDU stall timer. It is checked lazily ({@link #onStallDeadline}): no
     * per-read timer churn.
     */
void armStallTimer() {
        if (s.phase == SoftStream.Phase.ESTABLISHED && !s.timed && s.data.partialInput()) {
            stallMark = s.data.fpdusReceived();
            s.setDeadline(s.config.fpduStallTimeout().toNanos());
        }
    }

    /** The stall timer fired: no partial FPDU (disarm), progress (re-arm), or a stall (TERM 2/0/5, close). */
void onStallDeadline() {
        if (!s.data.partialInput()) {
            return;
        }
        long n = s.data.fpdusReceived();
        if (n != stallMark) {
            stallMark = n;
            s.setDeadline(s.config.fpduStallTimeout().toNanos());
            return;
        }
        s.closer.localError(new RdmaTimeoutException("an FPDU from " + s.remote + " stayed incomplete for "
                + s.config.fpduStallTimeout().toMillis() + " ms; sent TERM 2/0/5 (RFC 6581 §9.3)"));
    }

void readAll() throws IOException {
        ByteBuffer rx = s.reactor.rxBuffer();
        // In FPDU mode one read of at most READ_BUDGET bytes per loop turn: a peer flooding tiny
        // FPDUs gets the same share of the reactor as every other ready stream (the key stays
        // readable, so the next turn goes on; nothing is lost).
        int rounds = s.phase == SoftStream.Phase.ESTABLISHED ? 1 : 8;
        long fpdusBefore = s.data != null ? s.data.fpdusReceived() : 0;
        for (int round = 0; round < rounds && s.phase != SoftStream.Phase.CLOSED; round++) {
            rx.clear();
            if (s.phase == SoftStream.Phase.ESTABLISHED) {
                rx.limit(READ_BUDGET);
            }
            int n = s.ch.read(rx);
            if (n < 0) {
                s.onEof();
                return;
            }
            if (n == 0) {
                return;
            }
            rx.flip();
            s.consume(rx);
            if (n < rx.capacity()) {
                break;
            }
        }
        if (s.phase == SoftStream.Phase.ESTABLISHED) {
            long turn = s.data.fpdusReceived() - fpdusBefore;
            if (turn > maxFpdusPerTurn) {
                maxFpdusPerTurn = turn;
            }
            s.data.pump();
            armStallTimer();
        }
        s.sender.flush();
    }

    /** Most inbound FPDUs one reactor turn decoded for this stream (racy read: tests, diagnostics). */
    long maxFpdusPerTurn() {
        return maxFpdusPerTurn;
    }
}
