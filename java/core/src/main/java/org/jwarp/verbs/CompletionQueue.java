package org.jwarp.verbs;

import java.util.concurrent.TimeUnit;

/** A completion queue (ibv_cq): poll without blocking, or wait for completions with a timeout. */
public interface CompletionQueue extends AutoCloseable {
    /** Number of entries this CQ was created with. */
    int capacity();

    /** Fills up to {@code max} entries of {@code out} without blocking; returns how many. */
    int poll(WorkCompletion[] out, int max);

    /**
     * Like {@link #poll} but waits up to {@code timeout} for at least one completion; returns 0
     * on timeout.
     */
    int await(WorkCompletion[] out, int max, long timeout, TimeUnit unit) throws InterruptedException;

    @Override
    void close();
}
