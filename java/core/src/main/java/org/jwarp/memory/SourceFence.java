package org.jwarp.memory;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * One remote invalidation's fence of the zero-copy transmit paths, RFC 5040 §5.3 with RFC 5041
 * §8.3.1 (6) for the source side: {@link StagTable#invalidate} returns (and the Send with
 * Invalidate's receive completion is delivered) only once every transmit path that may read the
 * region has stopped reading it. A path that cannot do so at once on the invalidating thread
 * (another stream's I/O lock is held elsewhere) {@linkplain #defer defers} and {@linkplain #arrive
 * arrives} when the lock's holder has done it. Cold path: one per Send with Invalidate.
 */
public final class SourceFence {
    private final StagRegion region;
    private final AtomicInteger deferred = new AtomicInteger();

    SourceFence(StagRegion region) {
        this.region = region;
    }

    /** The invalidated region. */
    public StagRegion region() {
        return region;
    }

    /** A transmit path will stop reading the region later and then {@link #arrive}. */
    public void defer() {
        deferred.incrementAndGet();
    }

    /** A deferred transmit path has stopped reading the region. */
    public void arrive() {
        if (deferred.decrementAndGet() < 0) {
            throw new IllegalStateException("source fence arrived more often than deferred");
        }
    }

    /** No deferred transmit path is still outstanding. */
    boolean done() {
        return deferred.get() == 0;
    }
}
