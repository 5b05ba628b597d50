package org.jwarp.soft;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectionKey;

import org.jwarp.mpa.FpduDecoder;
import org.jwarp.soft.cq.CqPoller;
import org.jwarp.soft.cq.PolledStream;
import org.jwarp.verbs.RdmaTimeoutException;

/**
 * Receive path of one {@link SoftStream} (siw_qp_rx): reactor reads with a per-turn budget, the
 * FPDU stall timer (RFC 6581 §9.3), and receive polling by a thread waiting on a CQ of the QP
 * (see {@link SoftCompletionQueue} and {@link CqPoller}): while a CQ's poller holds the stream
 * (<em>polled</em>, {@link #claim}) its reactor key has no OP_READ interest and the poller reads
 * it when the CQ's selector reports it readable; the poller hands it back before it parks, the
 * reactor takes it back when the poller has been away for the lease, and anything only the reactor may do (EOF, an I/O error, a TERM) hands it back at
 * once. Reads happen only under the I/O lock, so bytes reach the engine in order.
 */
final class StreamReceive {
    /** {@link #claim} / {@link #pollReceive} results. */
    static final int POLL_NO = PolledStream.POLL_NO;
    static final int POLL_BUSY = PolledStream.POLL_BUSY;
    static final int POLL_HELD = PolledStream.POLL_HELD;
    /** Bytes an established stream reads per reactor turn (bounded work per connection per turn). */
    static final int READ_BUDGET = 64 * 1024;
    /** The CQ poller that reads the socket while OP_READ is off; written under the I/O lock, read racily. */
    private volatile CqPoller owner;
    /** A poller met EOF / an I/O error; the reactor acts on it. Guarded by the I/O lock. */
    private boolean pendingEof;
    private IOException pendingError;
    /** Inbound FPDUs decoded when the FPDU stall timer was armed (reactor, under the I/O lock). */
    private long stallMark;
    /** Socket reads by pollers, and those that found nothing (I/O lock; read racily by tests). */
    long pollReads;
    long pollEmptyReads;
    /** Times a poller's lease ran out and the reactor took the stream back (I/O lock; read racily by tests). */
    long leaseRevocations;
    /** Socket reads that placed payload straight into registered memory (I/O lock; read racily by tests). */
    long directReads;
    long directBytes;
    /** The last {@link #readOnce} filled everything it offered (the socket may hold more). */
    private boolean lastFull;
    /** The scattering read's two targets: the registered memory, then the read buffer (reused, cleared after). */
    private final ByteBuffer[] scatter = new ByteBuffer[2];
    /**
     * Bytes a read into registered memory also takes into the read buffer beyond the segment's pad
     * and CRC: the head of what follows, so a next large segment is split after its header and
     * placed directly too, while a run of small messages after it costs a few more reads.
     */
    static final int DIRECT_LOOKAHEAD = FpduDecoder.SMALL_GATHER;
    /**
     * Least payload still due for a read straight into registered memory: a shorter rest (segments
     * of an Ethernet-sized MULPDU of 1448 bytes, the end of a segment mostly read already) is
     * cheaper copied out of one plain read that also takes the segments after it than read on its
     * own. Far below loopback's 64 KiB FPDU ({@link SoftConfig#DEFAULT_MAX_FPDU}), so its segments are placed directly.
     */
    static final int DIRECT_MIN = 4 * 1024;
    /** Large segments are streaming in: plain reads stop at the next header ({@link #readOnce}). */
    private boolean bulk;
    /** Most FPDUs decoded in one reactor read turn (reactor only; read racily by tests). */
    private volatile long maxFpdusPerTurn;

    private final SoftStream s;

    StreamReceive(SoftStream s) {
        this.s = s;
    }

    /** A poller met EOF; the reactor acts on it (I/O lock held). */
    boolean pendingEof() {
        return pendingEof;
    }

    /** A poller met an I/O error, or null; the reactor acts on it (I/O lock held). */
    IOException pendingError() {
        return pendingError;
    }

    /**
     * Poller thread: takes the stream over from the reactor for {@code p} (OP_READ off at the
     * reactor) unless nobody may: a deadline (the RTR timer) or a pending event keeps it there.
     *
     * @return {@link #POLL_HELD} when a poller holds the stream now, {@link #POLL_BUSY} when its
     *         lock was busy (try again later), {@link #POLL_NO} when it stays with the reactor
     */
    int claim(CqPoller p) {
        if (owner != null) {
            return POLL_HELD;
        }
        int locked = lockForPoll();
        if (locked != POLL_HELD) {
            return locked;
        }
        try {
            return claimLocked(p) ? POLL_HELD : POLL_NO;
        } finally {
            s.io.unlock();
        }
    }

    /**
     * A poller's try for the I/O lock: {@link #POLL_HELD} when it now holds it, {@link #POLL_BUSY}
     * when someone else does, {@link #POLL_NO} when the stream is not established or this thread
     * is the reactor or already inside the stream.
     */
    private int lockForPoll() {
        if (s.phase() != SoftStream.Phase.ESTABLISHED || s.io.isHeldByCurrentThread() || s.reactor.inReactorThread()) {
            return POLL_NO;
        }
        return s.io.tryLock() ? POLL_HELD : POLL_BUSY;
    }

    private boolean claimLocked(CqPoller p) {
        if (owner != null) {
            return true;
        }
        if (s.phase() != SoftStream.Phase.ESTABLISHED || s.rtrTimerRunning() || pendingEof || pendingError != null
                || s.closer.fault() != null || s.key() == null
                || !s.key().isValid()) {
            return false;
        }
        try {
            readInterest(false);
        } catch (CancelledKeyException e) {
            return false;
        }
        owner = p;
        p.holdOne();
        s.reactor.addPolled(p);
        return true;
    }

    /**
     * Poller thread, the CQ's selector reported the socket readable: if nobody else drives the
     * stream right now, reads what the socket has (one read for a small message), runs the engine
     * on it and transmits what that produced (Read Responses, answers posted meanwhile);
     * completions go to the CQs as they would from the reactor. Takes the stream over for
     * {@code p} if nobody holds it. Anything only the reactor may do hands the stream back.
     *
     * @param rx the poller's receive buffer (the engine copies what it keeps)
     * @return {@link #POLL_HELD}, {@link #POLL_BUSY} (someone else drives it just now) or
     *         {@link #POLL_NO} (it stays with, or went back to, the reactor)
     */
    int pollReceive(ByteBuffer rx, CqPoller p) {
        int locked = lockForPoll();
        if (locked != POLL_HELD) {
            return locked;
        }
        try {
            if (!claimLocked(p)) {
                return POLL_NO;
            }
            s.sender.beginInline();
            boolean got = false;
            try {
                for (int round = 0; round < 8; round++) {
                    int n = readOnce(rx, rx.capacity());
                    pollReads++;
                    if (n < 0) {
                        pendingEof = true;
                        s.sender.deferToReactor();
                        break;
                    }
                    if (n == 0) {
                        pollEmptyReads++;
                        break;
                    }
                    got = true;
                    if (s.sender.deferred() || s.phase() != SoftStream.Phase.ESTABLISHED || !lastFull) {
                        break; // a short read emptied the socket: no second read to find it empty
                    }
                }
                // Transmit what the input produced (Read Responses, a TERM); with nothing read the
                // output side is the posters' and the reactor's (a pump here would only contend).
                if (got && !s.sender.deferred()) {
                    s.sender.pumpInline();
                    if (!s.sender.deferred()) {
                        s.sender.flush();
                    }
                }
            } catch (IOException e) {
                pendingError = e;
                s.sender.deferToReactor();
            } catch (RuntimeException | Error e) {
                s.sender.deferToReactor();
                s.closer.fault(e); // this stream ends on the reactor; the CQ's waiting thread goes on
            } finally {
                s.sender.endInline();
            }
            if (s.sender.deferred()) {
                unpoll();
                s.reactor.schedule(s); // wakes the loop: it applies OP_READ and acts on what was met
                return POLL_NO;
            }
            if (s.sender.moreOutput()) {
                s.reactor.schedule(s); // round cap: the reactor goes on
            } else if (got && !s.deadlineSet() && s.data().partialInput()) {
                // RFC 6581 §9.3: the FPDU stall timer holds whoever reads the stream. Deadlines live
                // on the reactor (its thread arms them, runScheduled); they fire there while this
                // poller keeps the stream. At most one hand-off per stall period (timed stays set).
                s.reactor.schedule(s);
            }
            return POLL_HELD;
        } catch (CancelledKeyException e) {
            return POLL_NO; // closed meanwhile
        } finally {
            s.io.unlock();
        }
    }

    /** Poller thread, about to park (holding no CQ lock): the reactor reads this stream again if {@code p} held it. */
    void releasePoll(CqPoller p) {
        if (owner != p) {
            return;
        }
        s.lockIo();
        try {
            if (owner == p) {
                unpoll();
                s.reactor.wake(); // the selector applies the restored OP_READ only when it (re)enters select
            }
        } finally {
            s.io.unlock();
        }
    }

    /** Reactor thread, {@code p}'s lease ran out: takes the stream back. False when it could not (lock busy). */
    boolean revokePoll(CqPoller p) {
        if (owner != p) {
            return true;
        }
        if (!s.io.tryLock()) {
            return false; // a poster or poller drives it just now: next turn
        }
        try {
            if (owner == p) {
                unpoll();
                armStallTimer();
                leaseRevocations++;
            }
            return true;
        } finally {
            s.io.unlock();
        }
    }

    /** True while a poller holds the stream (tests, diagnostics). */
    boolean isPolled() {
        return owner != null;
    }

    /** {@link SoftStream#io} held. */
    void unpoll() {
        CqPoller p = owner;
        if (p != null) {
            owner = null;
            p.releaseOne();
            readInterest(true);
            s.reactor.removePolled(p);
            if (s.data() != null && s.data().partialInput() && !s.deadlineSet()) {
                s.reactor.schedule(s); // the reactor arms the FPDU stall timer (runScheduled)
            }
        }
    }

void readInterest(boolean on) {
        if (s.key() != null && s.key().isValid()) {
            try {
                int ops = s.key().interestOps();
                int want = on ? ops | SelectionKey.OP_READ : ops & ~SelectionKey.OP_READ;
                if (want != ops) {
                    s.key().interestOps(want);
                }
            } catch (CancelledKeyException e) {
                // closed meanwhile
            }
        }
    }

    /**
     * Reactor thread, {@link SoftStream#io} held, after input (its own, or a poller's: {@link #pollReceive}
     * schedules the stream for this): part of an FPDU is buffered and no timer runs, so arm the
     * FPDU stall timer (it fires on the reactor whether or not a poller holds the stream). It is checked lazily ({@link #onStallDeadline}): no
     * per-read timer churn.
     */
void armStallTimer() {
        if (s.phase() == SoftStream.Phase.ESTABLISHED && !s.deadlineSet() && s.data().partialInput()) {
            stallMark = s.data().fpdusReceived();
            s.setDeadline(s.config.fpduStallTimeout().toNanos());
        }
    }

    /** The stall timer fired: no partial FPDU (disarm), progress (re-arm), or a stall (TERM 2/0/5, close). */
void onStallDeadline() {
        if (!s.data().partialInput()) {
            return;
        }
        long n = s.data().fpdusReceived();
        if (n != stallMark) {
            stallMark = n;
            s.setDeadline(s.config.fpduStallTimeout().toNanos());
            return;
        }
        s.closer.localError(new RdmaTimeoutException("an FPDU from " + s.remoteAddress() + " stayed incomplete for "
                + s.config.fpduStallTimeout().toMillis() + " ms; sent TERM 2/0/5 (RFC 6581 §9.3)"));
    }

void readAll() throws IOException {
        ByteBuffer rx = s.reactor.rxBuffer();
        // In FPDU mode one read of at most READ_BUDGET bytes per loop turn: a peer flooding tiny
        // FPDUs gets the same share of the reactor as every other ready stream (the key stays
        // readable, so the next turn goes on; nothing is lost).
        int rounds = s.phase() == SoftStream.Phase.ESTABLISHED ? 1 : 8;
        long fpdusBefore = s.data() != null ? s.data().fpdusReceived() : 0;
        for (int round = 0; round < rounds && s.phase() != SoftStream.Phase.CLOSED; round++) {
            int n = readOnce(rx, s.phase() == SoftStream.Phase.ESTABLISHED ? READ_BUDGET : rx.capacity());
            if (n < 0) {
                s.onEof();
                return;
            }
            if (n == 0) {
                return;
            }
            if (!lastFull) {
                break;
            }
        }
        if (s.phase() == SoftStream.Phase.ESTABLISHED) {
            long turn = s.data().fpdusReceived() - fpdusBefore;
            if (turn > maxFpdusPerTurn) {
                maxFpdusPerTurn = turn;
            }
            s.data().pump();
            armStallTimer();
        }
        s.sender.flush();
    }

    /**
     * One socket read, I/O lock held, and the engine run on what went to {@code rx}. While the
     * engine places the payload of a large segment whose header it validated (RFC 5041 §7.1) the
     * read is a scattering one: the payload goes straight into the registered buffer (a view the
     * engine lends under a placement lease, RFC 5041 §8.3.1 (6): held only for this non-blocking
     * read, so revocation never waits for the peer) and the pad, CRC and the head of what follows
     * into {@code rx} (at most {@link #DIRECT_LOOKAHEAD} beyond the CRC); the CRC runs over the
     * placed bytes. Otherwise a plain read of up to {@code limit} bytes into {@code rx}.
     *
     * @return bytes read, 0 when the socket had none, -1 at EOF; {@link #lastFull} says whether
     *         it filled all it offered
     */
    int readOnce(ByteBuffer rx, int limit) throws IOException {
        boolean established = s.phase() == SoftStream.Phase.ESTABLISHED;
        ByteBuffer t = established ? s.data().directTarget(DIRECT_MIN) : null;
        if (t == null) {
            rx.clear();
            // In a run of large segments read only up to the next one's header (it is then placed
            // directly too) instead of copying a whole segment out of a full read buffer.
            int want = bulk && established ? Math.min(limit, s.data().placement().directDue() + DIRECT_LOOKAHEAD) : limit;
            rx.limit(want);
            int n = s.channel().read(rx);
            lastFull = n == want;
            if (n > 0) {
                rx.flip();
                if (s.faults() != null) {
                    s.faults().at(s.sender.inlineTransmit() ? FaultHook.Site.POLL_RECEIVE : FaultHook.Site.REACTOR_RECEIVE);
                }
                s.consume(rx);
            }
            // Bulk mode while a large segment is split at the end of what was read (its rest, then
            // the next header, then the next payload straight into memory); back to full reads
            // once a full read ends anywhere else (small messages follow).
            if (s.phase() == SoftStream.Phase.ESTABLISHED && s.data().placement().directLength() >= DIRECT_MIN) {
                bulk = true;
            } else if (lastFull) {
                bulk = false;
            }
            return n;
        }
        // The placement lease is held from here: everything up to the read is inside the try whose
        // finally drops it (an exception anywhere else would leave deregistration waiting forever).
        int start = t.position();
        int want = t.remaining();
        long n;
        int room;
        int placed;
        try {
            bulk = true;
            rx.clear();
            rx.limit(Math.min(limit, s.data().placement().directDue() - want + DIRECT_LOOKAHEAD));
            room = rx.limit();
            scatter[0] = t;
            scatter[1] = rx;
            n = s.channel().read(scatter);
        } finally {
            scatter[0] = null;
            scatter[1] = null;
            placed = t.position() - start;
            s.data().placement().directRead(placed); // drops the lease, also when the read (or its setup) failed
        }
        directReads++;
        directBytes += placed;
        lastFull = n == (long) want + room;
        if (rx.position() > 0) {
            rx.flip();
            s.consume(rx);
        }
        return (int) n;
    }

    /** Most inbound FPDUs one reactor turn decoded for this stream (racy read: tests, diagnostics). */
    long maxFpdusPerTurn() {
        return maxFpdusPerTurn;
    }
}
