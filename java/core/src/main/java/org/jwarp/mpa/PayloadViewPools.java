package org.jwarp.mpa;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.IdentityHashMap;

/**
 * One stream's {@link PayloadViewPool}s by source buffer, for the payload slices of its zero-copy
 * transmit (RFC 5044 §4 FPDUs, {@link FpduSink}). At most {@link FpduSink#POOLS} are kept beyond
 * those with a view lent: past that, the idle ones are evicted and their pool objects reused for
 * the next sources, so a stream that sends from ever new regions allocates only each new
 * source's first view, no pool and no iterator. A deregistered source's pool goes at once
 * ({@link #revoked}, RFC 5041 §8.3.1 (6)): its idle views would keep the region's memory
 * reachable for the QP's life. Used by one {@link FpduSink}'s owner at a time.
 */
final class PayloadViewPools {
    /** Pools by source; sized for the few regions a QP usually sends from (grows if needed). */
    private final IdentityHashMap<ByteBuffer, PayloadViewPool> bySource = new IdentityHashMap<>(4);
    /** The same pools, for eviction without an iterator: [0, count). */
    private PayloadViewPool[] kept = new PayloadViewPool[4];
    private int count;
    /** Reset pools for the next sources: [0, spareCount). */
    private final PayloadViewPool[] spare = new PayloadViewPool[FpduSink.POOLS];
    private int spareCount;
    /** The pool of the last source referenced (most FPDUs in a row come from one region). */
    private PayloadViewPool last;

    /** The pool of {@code src}, made (or reused) on its first reference. */
    PayloadViewPool of(ByteBuffer src) {
        PayloadViewPool p = last;
        if (p != null && p.src == src) {
            return p;
        }
        p = bySource.get(src);
        if (p == null) {
            if (count >= FpduSink.POOLS) {
                evictIdle();
            }
            if (spareCount > 0) {
                p = spare[--spareCount];
                spare[spareCount] = null;
                p.reset(src);
            } else {
                p = new PayloadViewPool(src);
            }
            bySource.put(src, p);
            if (count == kept.length) {
                kept = Arrays.copyOf(kept, 2 * kept.length); // grows to POOLS, beyond only with >POOLS sources lent
            }
            kept[count++] = p;
        }
        last = p;
        return p;
    }

    /** Evicts the pools with no view lent (their regions may have been deregistered since). */
    private void evictIdle() {
        int n = 0;
        for (int i = 0; i < count; i++) {
            PayloadViewPool p = kept[i];
            if (p.lent == 0) {
                bySource.remove(p.src);
                recycle(p);
            } else {
                kept[n++] = p;
            }
        }
        for (int i = n; i < count; i++) {
            kept[i] = null;
        }
        count = n;
        last = null;
    }

    private void recycle(PayloadViewPool p) {
        p.reset(null);
        if (spareCount < spare.length) {
            spare[spareCount++] = p;
        }
    }

    /**
     * {@code src} is being deregistered: its pool leaves the table now and is returned (null when
     * there is none). With views still lent (slices the caller is about to snapshot, or of another
     * region in the same buffer) they return to the detached pool, which then goes with the last
     * of them; the caller {@linkplain #retire retires} it once none is lent.
     */
    PayloadViewPool revoked(ByteBuffer src) {
        PayloadViewPool p = bySource.remove(src);
        if (p == null) {
            return null;
        }
        for (int i = 0; i < count; i++) {
            if (kept[i] == p) {
                kept[i] = kept[--count];
                kept[count] = null;
                break;
            }
        }
        if (last == p) {
            last = null;
        }
        return p;
    }

    /** A pool {@link #revoked} returned: reused when no view of it is lent, else left to the GC with them. */
    void retire(PayloadViewPool p) {
        if (p != null && p.lent == 0) {
            recycle(p);
        }
    }

    /** Sources with a pool kept (tests: bounded by {@link FpduSink#POOLS} plus those in use). */
    int size() {
        return count;
    }

    /** The stream closed: no pool, no view, no source. */
    void clear() {
        bySource.clear();
        for (int i = 0; i < count; i++) {
            kept[i] = null;
        }
        count = 0;
        for (int i = 0; i < spareCount; i++) {
            spare[i] = null;
        }
        spareCount = 0;
        last = null;
    }
}
