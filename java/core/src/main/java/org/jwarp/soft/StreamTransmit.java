package org.jwarp.soft;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;

import org.jwarp.soft.tx.DirectBufferPool;
import org.jwarp.soft.tx.StagingWaiter;
import org.jwarp.soft.tx.TxGather;
import org.jwarp.soft.tx.TxStaging;

/**
 * Transmit path of one {@link SoftStream} in FPDU mode (siw_qp_tx): moves the engine's FPDUs
 * (RFC 5044 §4) into the stream's tx buffer and onto the socket, from a posting thread that wins
 * the I/O lock or from the reactor.
 *
 * <p>No lost wake-up, by construction: output is left either staged in tx with OP_WRITE set (the
 * reactor resumes when the socket drains), or with the reactor scheduled. {@link #flush} is the
 * only place OP_WRITE is dropped, and it re-requests a pump when it empties tx while the engine
 * still holds output, so "output pending, nothing staged, nobody pumping" cannot arise however the
 * posting thread, a CQ poller and the reactor interleave.
 *
 * <p>Staging is borrowed, not owned: the stream takes a {@link TxStaging} from its device's
 * {@link DirectBufferPool} when it has something to stage ({@link #staging}) and gives it back as
 * soon as a flush leaves nothing staged or referenced ({@link #releaseIfDrained}); a drained or
 * idle stream holds no staging memory. Only a partial write keeps the area until OP_WRITE drains
 * it. When the pool has none to lend, the stream is <em>starved</em>: like a full socket, it
 * stops pumping and neither loops nor asks the reactor again; the pool hands it the next area
 * given back and schedules it ({@link #stagingGranted}), so the wake-up cannot be lost.
 */
final class StreamTransmit extends StagingWaiter {
    /** Pump rounds (each up to 16 FPDUs) a posting or polling thread runs before leaving the rest to the reactor. */
    private static final int INLINE_PUMPS = 64;
    /** True while a posting or polling thread drives the engine under the I/O lock; guarded by it. */
    private boolean inline;
    /** Set during inline work when something needs the reactor (an I/O error, a TERM); guarded by the I/O lock. */
    private boolean deferred;
    /** Set by {@link #outputLeft} during inline work; guarded by the I/O lock. */
    private boolean moreOutput;

    /** FPDU mode's zero-copy transmit (null during connection setup, which writes tx as is). */
    private TxGather gather;
    /** The borrowed staging area ({@link #tx} is its buffer), or null; guarded by the I/O lock. */
    private TxStaging staging;
    /** The staging area's buffer, null while nothing is staged; guarded by the I/O lock. */
    private ByteBuffer tx;
    /** The last borrow found no staging area: the pool will hand one over; guarded by the I/O lock. */
    private boolean starved;
    private final SoftStream s;

    StreamTransmit(SoftStream s) {
        this.s = s;
    }

    /** A posting or polling thread starts driving the engine inline (I/O lock held). */
    void beginInline() {
        inline = true;
        deferred = false;
    }

    void endInline() {
        inline = false;
    }

    boolean deferred() {
        return deferred;
    }

    /** Inline work stopped at its round cap with output left (I/O lock held). */
    boolean moreOutput() {
        return moreOutput;
    }

    /** FPDU mode's zero-copy transmit, null during setup. */
    TxGather gather() {
        return gather;
    }

    /** The staged buffer, or null (racy outside the I/O lock: diagnostics). */
    ByteBuffer txBuffer() {
        return tx;
    }

    boolean starved() {
        return starved;
    }

    /** Drops whatever is staged (a Rev 1 retry: nothing of the first attempt goes out); I/O lock held. */
    void clearStaged() {
        if (tx != null) {
            tx.clear();
        }
    }

    /**
     * Hot path from application threads: new WRs are queued. When the stream is established and
     * nobody else drives it right now, the posting thread transmits them itself; otherwise (lock
     * busy, socket full, anything left for the reactor) the reactor is asked to look.
     */
    void kick() {
        if (s.phase() == SoftStream.Phase.ESTABLISHED && !s.io.isHeldByCurrentThread() && !s.reactor.inReactorThread()
                && s.io.tryLock()) {
            boolean done;
            try {
                done = transmitInline();
            } finally {
                s.io.unlock();
            }
            if (done) {
                return;
            }
        }
        s.reactor.schedule(s);
    }

    /**
     * Posting thread, {@link SoftStream#io} held: pump and flush, up to {@link #INLINE_PUMPS} rounds while
     * the socket takes the bytes (a large Write leaves from the posting thread until the socket is
     * full, not from the reactor); true when nothing is left for the reactor.
     */
boolean transmitInline() {
        if (s.phase() != SoftStream.Phase.ESTABLISHED || s.closer.fault() != null) {
            return false;
        }
        inline = true;
        deferred = false;
        try {
            pumpInline();
            if (!deferred) {
                flush();
            }
        } catch (IOException e) {
            deferred = true; // the reactor's next write or read meets the error again and tears down
        } catch (RuntimeException | Error e) {
            deferred = true;
            s.closer.fault(e); // this stream ends on the reactor; the posting thread returns normally
        } finally {
            inline = false;
        }
        return !deferred && s.phase() == SoftStream.Phase.ESTABLISHED && !staged() && !s.data().hasPendingOutput();
    }

    /** {@link SoftStream#io} held, {@link #inline} set: engine output until it is done, the socket is full or the round cap. */
void pumpInline() {
        for (int i = 0; i < INLINE_PUMPS; i++) {
            moreOutput = false;
            s.data().pump();
            if (deferred || !moreOutput) {
                return;
            }
        }
    }

    /**
     * The data path has output left and room in the tx buffer (its round budget ran out): an
     * inline driver loops ({@link #pumpInline}); on the reactor the stream yields to the others
     * and continues in the next loop turn.
     */
    void outputLeft() {
        if (inline) {
            moreOutput = true;
        } else {
            kick();
        }
    }

    /** True while a posting thread transmits (the data path then defers teardown to the reactor). */
    boolean inlineTransmit() {
        return inline;
    }

    /** Inline transmit met something only the reactor may handle; it runs once the posting thread is done. */
    void deferToReactor() {
        deferred = true;
    }

    /**
     * The stream's staging buffer, borrowing an area when it holds none; null when the stream is
     * closing or the pool has none to lend (then the stream is starved until the pool hands it one).
     * {@code setup}: an MPA frame or TERM that never waits. I/O lock held.
     */
    ByteBuffer staging(boolean setup) {
        if (tx != null) {
            return tx;
        }
        if (s.phase() == SoftStream.Phase.CLOSING || s.phase() == SoftStream.Phase.CLOSED) {
            return null;
        }
        TxStaging st = s.device.buffers().borrowStaging(this, setup);
        if (st == null) {
            starved = true;
            if (takeStagingRetry()) { // not queued: nobody would hand it an area, so it asks again itself
                s.reactor.schedule(s);
            }
            return null;
        }
        starved = false;
        staging = st;
        tx = st.buffer();
        if (gather != null) {
            gather.bind(st);
        }
        return tx;
    }

    /** FPDU mode begins: the zero-copy transmit takes over the staging area held since setup, if any. */
    void attachGather(TxGather g) {
        gather = g;
        if (staging != null) {
            g.bind(staging);
        }
    }

    /** FPDU mode, nothing staged or referenced: the staging area goes back to the pool. I/O lock held. */
    void releaseIfDrained() {
        TxStaging st = staging;
        if (st == null || s.phase() != SoftStream.Phase.ESTABLISHED || staged()) {
            return;
        }
        if (gather != null) {
            gather.unbind();
        }
        staging = null;
        tx = null;
        s.device.buffers().giveBackStaging(st);
    }

    /** The stream closed (I/O lock held): its area, one handed over meanwhile, its place in the queue all go back. */
    void releaseStaging() {
        TxStaging st = gather != null ? gather.release() : null;
        if (st == null) {
            st = staging;
        }
        staging = null;
        tx = null;
        DirectBufferPool pool = s.device.buffers();
        pool.giveBackStaging(st);
        pool.cancelStaging(this);
    }

    /** The pool handed this starved stream a staging area (any thread, no lock): the reactor resumes it. */
    @Override
    protected void stagingGranted() {
        s.reactor.schedule(s);
    }

    /** Whether a pump could stage another FPDU now (false while starved: the pool's hand-over resumes it). */
    boolean roomFor(int maxFpduWire) {
        return tx != null ? gather.room(maxFpduWire) : !starved;
    }

    /** Writes queued bytes; keeps OP_WRITE while some remain; gives the staging area back once drained. */
    void flush() throws IOException {
        if (s.channel() == null || !s.channel().isOpen() || s.phase() == SoftStream.Phase.CONNECTING) {
            return;
        }
        if (tx != null) {
            TxGather g = gather;
            if (g != null) {
                g.bind(staging);
                if (g.pending()) {
                    g.write(s.channel());
                    g.compact();
                    s.data().completeAccepted(g);
                }
            } else if (tx.position() > 0) {
                tx.flip();
                try {
                    s.channel().write(tx);
                } finally {
                    tx.compact();
                }
            }
        }
        boolean pending = staged();
        if (s.key() != null && s.key().isValid()) {
            int ops = s.key().interestOps();
            int want = pending ? ops | SelectionKey.OP_WRITE : ops & ~SelectionKey.OP_WRITE;
            if (want != ops) {
                s.key().interestOps(want);
                if (pending && !s.reactor.inReactorThread()) {
                    s.reactor.wake(); // the selector applies the new interest when it (re)enters select
                }
            }
        }
        if (!pending) {
            releaseIfDrained();
        }
        if (!pending && s.phase() == SoftStream.Phase.ESTABLISHED && !starved && s.data().hasPendingOutput()) {
            // The one place OP_WRITE is dropped is also the one place that sees the engine still
            // holding output (a pump stopped at a full socket that drained since): it asks for
            // another pump, so "output pending, nothing staged, nobody pumping" cannot arise. A
            // starved stream is resumed by the pool's hand-over instead.
            outputLeft();
        }
        if (!pending && s.phase() == SoftStream.Phase.CLOSING) {
            s.closer.finishClose();
        }
    }

    /** Bytes staged or referenced that the socket has not taken yet. */
    boolean staged() {
        return tx != null && (gather != null ? gather.pending() : tx.position() > 0);
    }

    /** {@link #flush()} from a context that cannot throw: an I/O error tears the stream down. */
    void flushQuietly() {
        try {
            flush();
        } catch (IOException e) {
            if (inline) {
                deferred = true;
            } else {
                s.onIoError(e);
            }
        }
    }

void interest(int ops) {
        if (s.key() != null && s.key().isValid()) {
            s.key().interestOps(ops);
        }
    }
}
