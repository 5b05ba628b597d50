package org.jwarp.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import org.jwarp.soft.tx.DirectBufferPool;
import org.jwarp.soft.tx.TxStaging;

/**
 * Transmit staging areas (RFC 5044 §4 FPDUs staged for the socket) are lent and given back on
 * every flush that drains a stream, under the device-wide pool lock: the give-back checks for a
 * double give-back in constant time (the area knows whether it is lent), and catches one also
 * when the pool did not keep the area (its free list full), where a scan of the free list finds
 * nothing and the lent count would drop below the areas really lent.
 */
class StagingGiveBackTest {
    @Test
    @DisplayName("RFC 5044 §4: a staging area given back twice is refused, also when the pool did not keep it")
    void doubleGiveBackOfAnAreaNotKept_isRefused_5044_4() {
        DirectBufferPool pool = new DirectBufferPool(4096, 4096, 4); // keeps one free area
        StreamTransmit a = new StreamTransmit(null);
        StreamTransmit b = new StreamTransmit(null);
        TxStaging first = pool.borrowStaging(a, false);
        TxStaging second = pool.borrowStaging(b, false);
        assertNotNull(first);
        assertNotNull(second);
        pool.giveBackStaging(first); // kept
        pool.giveBackStaging(second); // free list full: left to the GC
        assertEquals(0, pool.stagingInUse());
        assertThrows(IllegalStateException.class, () -> pool.giveBackStaging(second), "second give-back accepted");
        assertThrows(IllegalStateException.class, () -> pool.giveBackStaging(first), "second give-back accepted");
        assertEquals(0, pool.stagingInUse(), "the lent count went below the areas really lent");
    }

    @Test
    @DisplayName("RFC 5044 §4: an area lent again after its give-back can be given back again")
    void areaLentAgain_givesBackAgain_5044_4() {
        DirectBufferPool pool = new DirectBufferPool(1 << 20, 4096, 4);
        StreamTransmit a = new StreamTransmit(null);
        for (int i = 0; i < 3; i++) {
            TxStaging st = pool.borrowStaging(a, false);
            assertEquals(1, pool.stagingInUse());
            pool.giveBackStaging(st);
            assertEquals(0, pool.stagingInUse());
        }
        assertEquals(1, pool.stagingFree());
    }
}
