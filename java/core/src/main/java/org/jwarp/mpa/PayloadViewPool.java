package org.jwarp.mpa;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Idle payload views of one source buffer (a registered region's buffer) for the zero-copy
 * transmit of RFC 5044 §4 FPDUs ({@link FpduSink}), a stack, and how many are lent out to pending
 * slices. The stack grows (doubling, up to {@link FpduSink#SLICES}) only when more views of this
 * source are lent at once than ever before, as the views themselves do, so a QP that sends a few
 * FPDUs at a time from a region keeps a few slots, not a table sized for the largest batch.
 * Evicted or revoked, a pool is {@linkplain #reset reset} and reused for another source
 * ({@link PayloadViewPools}). Used by one {@link FpduSink}'s owner at a time.
 */
final class PayloadViewPool {
    ByteBuffer src;
    ByteBuffer[] idle = new ByteBuffer[4];
    int idleCount;
    int lent;

    PayloadViewPool(ByteBuffer src) {
        this.src = src;
    }

    ByteBuffer borrow() {
        lent++;
        if (idleCount == 0) {
            if (lent > idle.length) {
                idle = Arrays.copyOf(idle, Math.min(FpduSink.SLICES, 2 * idle.length)); // room for its return
            }
            return src.duplicate(); // only when more slices of this source are pending than ever before
        }
        ByteBuffer v = idle[--idleCount];
        idle[idleCount] = null;
        return v;
    }

    void giveBack(ByteBuffer v) {
        lent--;
        idle[idleCount++] = v;
    }

    /** No view lent: forgets the source and its idle views (keeps the stack) to serve {@code next}. */
    void reset(ByteBuffer next) {
        for (int i = 0; i < idleCount; i++) {
            idle[i] = null;
        }
        idleCount = 0;
        src = next;
    }
}
