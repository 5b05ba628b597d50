package org.jwarp.soft.tx;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;


/**
 * RFC 5044 §4 FPDUs wait for transmit staging only while another stream holds an area that will
 * come back: a borrow that fails because direct memory ran out must not leave the stream queued
 * when nothing is lent (no give-back would ever hand it one), nor make every later borrower of the
 * device queue behind it once memory is free again.
 */
class StagingOutOfMemoryTest {
    @Test
    @DisplayName("RFC 5044 §4: a staging borrow that met exhausted direct memory leaves no waiter nobody will wake")
    void outOfMemoryLeavesNoOrphanWaiter_5044_4() {
        DirectBufferPool pool = new DirectBufferPool(0, 64 * 1024, 8);
        boolean[] exhausted = {true};
        pool.allocator(capacity -> {
            if (exhausted[0]) {
                throw new OutOfMemoryError("Cannot reserve " + capacity + " bytes of direct buffer memory (simulated)");
            }
            return new TxStaging(capacity);
        });
        StagingWaiter first = new Waiter();
        StagingWaiter second = new Waiter();
        assertNull(pool.borrowStaging(first, false));
        assertFalse(pool.stagingInUse() == 0 && pool.stagingWaiters() > 0,
                "after an allocation failure the stream waits for a give-back although no area is lent: lost wake-up");
        exhausted[0] = false; // memory is free again
        assertNotNull(pool.borrowStaging(second, false),
                "memory is free, yet the device lends no staging area: the next borrower queues behind the failed one");
    }

    /** A stream's transmit side as the pool sees it. */
    private static final class Waiter extends StagingWaiter {
        @Override
        protected void stagingGranted() {
        }
    }
}
