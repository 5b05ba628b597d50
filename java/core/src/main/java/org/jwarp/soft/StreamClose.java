package org.jwarp.soft;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

import org.jwarp.ground.TermCode;
import org.jwarp.soft.cq.SoftCompletionQueue;
import org.jwarp.verbs.ConnectionTerminatedException;
import org.jwarp.verbs.RdmaException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The end of one {@link SoftStream}: setup failures, abnormal termination (every outstanding WR
 * flushes, RFC 5040 §6.2.2; RFC 5041 §7.1 the TERM as the last message, given a short linger),
 * the ULP's graceful close and the release of the socket and tx buffer.
 */
final class StreamClose {
    private static final Logger LOG = LoggerFactory.getLogger(StreamClose.class);
    /** Longest time a closing stream keeps trying to flush queued bytes (a TERM, the last FPDUs). */
    private static final long CLOSE_LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

    private final SoftStream s;
    /** Why the stream ended or will end, set once; read from any thread. */
    private volatile RdmaException failure;
    /** An unexpected exception met on the data path ({@link #fault(Throwable)}); guarded by the I/O lock. */
    private RdmaException fault;

    StreamClose(SoftStream s) {
        this.s = s;
    }

    RdmaException failure() {
        return failure;
    }

    /** The data path's unexpected exception, or null; I/O lock held. */
    RdmaException fault() {
        return fault;
    }

    /**
     * Established stream, local error without a code of its own: TERM layer 2 / type 0 / code 5
     * through the engine (CRC as negotiated), then close (RFC 6581 §9.3). {@code e} is what the
     * ULP sees.
     */
void localError(RdmaException e) {
        localError(TermCode.MPA_LOCAL_CATASTROPHIC, e);
    }

    /** As {@link #localError(RdmaException)}, with the TERM {@code code}. */
    void localError(TermCode code, RdmaException e) {
        if (failure == null) {
            failure = e;
        }
        s.data().localError(code, e.getMessage());
        if (s.phase() == SoftStream.Phase.ESTABLISHED) {
            teardown(e, true); // the TERM could not be queued (tx full): close anyway
        }
    }

    /**
     * An unexpected exception on this stream's data path (a bug, not a protocol error), I/O lock
     * held, on the reactor or on an application thread driving the stream inline: this stream alone
     * ends as after a local catastrophic error (RFC 5040 §4.8 TERM 0/0/0, §7) through
     * {@link #localError}: TERM best effort, QP to ERR, every WR flushed, {@code failure()} set
     * (the exception its cause), QP_FATAL. An application thread only stops the engine (nothing
     * more leaves but the TERM) and leaves the rest to the reactor; nothing is thrown at it. A
     * {@link VirtualMachineError} ends the stream the same way and is then rethrown, not swallowed:
     * out of the application's call, or out of the reactor loop, which then closes its streams.
     */
    void fault(Throwable t) {
        boolean first = fault == null;
        if (first) {
            ConnectionTerminatedException e = new ConnectionTerminatedException("stream to " + s.remoteAddress()
                    + " ended by an unexpected exception on its data path: " + t, TermCode.RDMAP_LOCAL_CATASTROPHIC,
                    false);
            e.initCause(t);
            fault = e;
            if (failure == null) {
                failure = e;
            }
            LOG.error("{}: unexpected exception on the data path; this stream ends (TERM 0/0/0)", s, t);
        } else {
            LOG.debug("{}: another exception while it ends", s, t);
        }
        if (s.reactor.inReactorThread()) {
            endFaulted(first);
        } else {
            if (first && s.data() != null) {
                try {
                    s.data().localError(TermCode.RDMAP_LOCAL_CATASTROPHIC, fault.getMessage()); // engine stops
                } catch (RuntimeException x) {
                    LOG.debug("{}: the engine did not take the TERM", s, x);
                }
            }
            s.reactor.schedule(s); // runScheduled ends the stream
        }
        if (t instanceof VirtualMachineError v) {
            throw v;
        }
    }

    /**
     * Reactor thread, I/O lock held: ends a stream that met {@link #fault}; with {@code withTerm}
     * through {@link #localError} (the TERM first), else at once (the TERM path itself failed).
     */
    void endFaulted(boolean withTerm) {
        RdmaException e = fault;
        try {
            switch (s.phase()) {
                case ESTABLISHED -> {
                    if (withTerm && s.data() != null) {
                        localError(TermCode.RDMAP_LOCAL_CATASTROPHIC, e);
                    } else {
                        teardown(e, false);
                    }
                }
                case CLOSING -> finishClose();
                case CLOSED -> {
                }
                default -> fail(e);
            }
        } catch (RuntimeException | Error x) {
            LOG.debug("{}: ending it failed too; closing now", s, x);
            finishClose();
            if (x instanceof VirtualMachineError v) {
                throw v;
            }
        }
    }

    /** Stops the data path; an engine broken by a fault must not keep the WRs from flushing. */
    private void stopData() {
        if (s.data() != null) {
            try {
                s.data().stop();
            } catch (RuntimeException x) {
                LOG.warn("{}: stopping the data path failed", s, x);
            }
        }
    }

    /** Setup failed: flush what is queued (a reject, a TERM), close, report. */
void fail(RdmaException e) {
        if (failure == null) {
            failure = e;
        }
        s.setup.invalidateRequest();
        if (s.listener != null && !s.initiator) {
            s.listener.pendingDone(s);
        }
        s.established.completeExceptionally(e);
        startClosing();
    }

    /**
     * Ends an established stream: WRs flush (RFC 5040 §6.2.2 abnormal termination), queued bytes (a TERM) get a short
     * linger, the socket closes. {@code graceful} is false when the stream is already dead.
     */
    void teardown(RdmaException cause, boolean lingerForTx) {
        if (s.phase() == SoftStream.Phase.CLOSED || s.phase() == SoftStream.Phase.CLOSING) {
            return;
        }
        if (failure == null) {
            failure = cause;
        }
        s.enter(SoftStream.Phase.CLOSING); // before the flush, so isOpen() is false once its completions appear
        stopData();
        flushUnlessReferenced();
        s.established.completeExceptionally(cause != null ? cause : new RdmaException("closed"));
        if (lingerForTx) {
            startClosing();
        } else {
            finishClose();
        }
    }

    /**
     * Flushes the WRs now (RFC 5040 §6.2.2) unless the zero-copy transmit still references
     * registered memory of some: a WR_FLUSH_ERR hands the buffer back to the application, which
     * may rewrite it while the close linger still writes those bytes to the peer. Then the flush
     * waits for {@link #finishClose}, after the socket is closed (the linger ended or the queued
     * bytes, the TERM last, are all written).
     */
    private void flushUnlessReferenced() {
        if (s.queuePair() != null && (s.sender.gather() == null || !s.sender.gather().referencing())) {
            s.queuePair().flush();
        }
    }

void startClosing() {
        if (s.phase() == SoftStream.Phase.CLOSED) {
            return;
        }
        s.enter(SoftStream.Phase.CLOSING);
        s.setDeadline(CLOSE_LINGER_NANOS);
        try {
            if (s.channel() != null && s.channel().isConnected()) {
                s.sender.flush();
            } else {
                finishClose();
            }
        } catch (IOException e) {
            finishClose();
        }
    }

void finishClose() {
        if (s.phase() == SoftStream.Phase.CLOSED) {
            return;
        }
        s.enter(SoftStream.Phase.CLOSED);
        s.clearDeadline();
        s.receiver.unpoll();
        stopData();
        closeChannel(); // before the flush: no byte of a flushed WR's buffer is written after it
        if (s.queuePair() != null) {
            s.queuePair().flush();
            SoftCompletionQueue.removeStream(s.queuePair(), s);
        }
        if (!s.initiator && s.listener != null) {
            s.listener.pendingDone(s);
        }
        if (s.connection() != null) {
            s.device.forget(s.connection()); // before closed completes: a closer sees it untracked
        }
        s.established.completeExceptionally(failure != null ? failure : new RdmaException("closed"));
        s.closed.complete(null);
        releaseTxLater();
    }

    /**
     * The staging area goes back to the device's pool on a later reactor turn, under {@link SoftStream#io}: no
     * frame up this call stack (a data-path pump holding it) and no posting thread still uses it.
     * Also when the stream holds none: it may be queued for one, or have been handed one meanwhile.
     * With the reactor gone the release is {@linkplain IoLock#runLocked handed to the I/O lock}: its
     * holder (this thread, as the outermost frame lets go) runs it.
     */
void releaseTxLater() {
        try {
            s.reactor.execute(() -> {
                s.lockIo();
                try {
                    releaseTx();
                } finally {
                    s.io.unlock();
                }
            });
        } catch (IllegalStateException e) {
            s.io.runLocked(this::releaseTx); // the reactor is closed
        }
    }

    /**
     * I/O lock held, stream CLOSED (no later borrow: StreamTransmit#staging refuses, so nothing is
     * lent after this): the staging area, an area handed over meanwhile and the stream's place in
     * the pool's queue go back; no view of the pooled buffer or of registered memory stays, and the
     * stream's revocation listener leaves the STag table. Idempotent.
     */
    private void releaseTx() {
        s.sender.releaseStaging();
    }

    void closeChannel() {
        if (s.key() != null) {
            s.key().cancel();
        }
        if (s.channel() != null) {
            try {
                s.channel().close();
            } catch (IOException e) {
                LOG.debug("close of {} failed", s.remoteAddress(), e);
            }
        }
    }

    /** Local close by the ULP (reactor thread): graceful, a short linger for queued FPDUs. */
    void closeByUser() {
        s.lockIo();
        try {
            if (s.phase() == SoftStream.Phase.CLOSED || s.phase() == SoftStream.Phase.CLOSING) {
                return;
            }
            RdmaException e = new RdmaException("closed locally");
            if (failure == null) {
                failure = e;
            }
            if (s.data() != null) {
                try {
                    s.data().pump();
                } catch (RuntimeException | Error x) {
                    fault(x);
                    return;
                }
            }
            s.enter(SoftStream.Phase.CLOSING);
            stopData();
            flushUnlessReferenced();
            s.established.completeExceptionally(e);
            startClosing();
        } finally {
            s.io.unlock();
        }
    }

    /**
     * Fallback when the reactor is gone or did not close the stream within the close wait: the
     * socket closes now (thread-safe; the reactor's next call on it fails), and the rest of
     * {@link #finishClose} (WRs flush, RFC 5040 §6.2.2, the QP forgets the stream, the staging
     * area and the revocation listener go back) runs under the I/O lock: now when it is free, else
     * by its holder as it lets go ({@link IoLock#runLocked}), never beside a reactor or posting
     * thread inside the stream.
     */
    void closeFromOutside() {
        closeChannel();
        s.io.runLocked(this::finishFromOutside);
        s.closed.complete(null);
    }

    /** {@link #closeFromOutside}'s part under the I/O lock, from any thread (no reactor deadline touched). */
    private void finishFromOutside() {
        if (s.phase() != SoftStream.Phase.CLOSED) {
            s.enter(SoftStream.Phase.CLOSED); // a closeByUser or teardown the reactor runs later finds it closed
            s.receiver.unpoll();
            stopData();
            if (s.queuePair() != null) {
                SoftCompletionQueue.removeStream(s.queuePair(), s);
                s.queuePair().flush();
            }
            if (s.connection() != null) {
                s.device.forget(s.connection());
            }
            s.established.completeExceptionally(failure != null ? failure : new RdmaException("closed"));
        }
        releaseTx();
    }

    /** The data path reports a fatal error it already answered with a TERM (queued in tx). */
    void dataPathFailed(RdmaException e) {
        teardown(e, true);
    }
}
