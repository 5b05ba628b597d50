package org.jwarp.soft.tx;

/**
 * A transmitter that borrows staging areas from a {@link DirectBufferPool}. The pool keeps its place
 * in the queue and an area handed over while it waited here, under the pool's lock; the transmitter
 * only hears {@link #stagingGranted} and asks whether to retry.
 */
public abstract class StagingWaiter {
    /** Queued in the pool for a staging area; guarded by the pool's lock. */
    boolean waiting;
    /** An area the pool handed over while this transmitter waited; guarded by the pool's lock. */
    TxStaging granted;
    /** The last borrow failed with nothing lent (direct memory exhausted): retry on a later turn. */
    boolean retryStaging;

    /** The pool handed this starved transmitter a staging area (any thread, no lock held). */
    protected abstract void stagingGranted();

    /** True once after a borrow failed with nothing lent: nobody will hand an area over, ask again. */
    protected final boolean takeStagingRetry() {
        boolean r = retryStaging;
        retryStaging = false;
        return r;
    }

    /** Diagnostics: ", waiting for staging" and/or ", granted", or "". */
    public final String stagingState() {
        return (waiting ? ", waiting for staging" : "") + (granted != null ? ", granted" : "");
    }
}
