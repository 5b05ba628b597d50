package org.jwarp.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class StagTableTest {
    final StagDomain pd = new StagDomain();
    final StagTable table = new StagTable(8);
    final ByteBuffer mem = ByteBuffer.allocateDirect(1024);

    @Test
    @DisplayName("RFC 5041 §7.1: check order STag, PD, access, base, wrap, bound")
    void checkOrder_5041_7_1() {
        StagRegion mr = table.register(pd, mem, 100, 200, 5000, StagAccess.REMOTE_WRITE);
        assertEquals(StagTable.OK, table.check(mr.stag(), pd, 5000, 200, StagAccess.REMOTE_WRITE));
        assertEquals(StagTable.INVALID_STAG, table.check(mr.stag() ^ 1, pd, 5000, 1, StagAccess.REMOTE_WRITE));
        assertEquals(StagTable.NOT_ASSOCIATED, table.check(mr.stag(), new StagDomain(), 5000, 1, 0));
        assertEquals(StagTable.ACCESS_VIOLATION, table.check(mr.stag(), pd, 5000, 1, StagAccess.REMOTE_READ));
        assertEquals(StagTable.BASE_BOUNDS, table.check(mr.stag(), pd, 4999, 1, StagAccess.REMOTE_WRITE));
        assertEquals(StagTable.BASE_BOUNDS, table.check(mr.stag(), pd, 5001, 200, StagAccess.REMOTE_WRITE));
        assertEquals(StagTable.TO_WRAP, table.check(mr.stag(), pd, -1L, 2, StagAccess.REMOTE_WRITE));
        assertEquals(100 + 7, mr.indexOf(5007));
    }

    @Test
    @DisplayName("RFC 5041 §8.3: invalidation takes effect immediately and needs the owning PD")
    void invalidateImmediate_5041_8_3() {
        StagRegion mr = table.register(pd, mem, 0, 10, 0, StagAccess.ALL);
        assertFalse(table.invalidate(mr.stag(), new StagDomain()), "another PD cannot invalidate");
        assertTrue(mr.isValid());
        assertTrue(table.invalidate(mr.stag(), pd));
        assertFalse(mr.isValid());
        assertNull(table.lookup(mr.stag()));
        assertEquals(StagTable.INVALID_STAG, table.check(mr.stag(), pd, 0, 1, 0));
        assertFalse(table.invalidate(mr.stag(), pd), "already invalid");
    }

    @Test
    @DisplayName("STags are index|key; a reused slot gets a fresh key; STags below 0x100 never validate")
    void stagFormatAndReuse() {
        // keys are random per registration (issue 31): a slot never gets its previous key back, and a
        // deregistered STag never validates; an older key may come back after two or more reuses
        java.util.Map<Integer, Integer> lastKey = new java.util.HashMap<>();
        for (int i = 0; i < 50; i++) {
            StagRegion mr = table.register(pd, mem, 0, 10, 0, StagAccess.ALL);
            assertTrue(mr.stag() >>> 8 != 0);
            Integer before = lastKey.put(mr.stag() >>> 8, mr.stag() & 0xFF);
            assertTrue(before == null || before != (mr.stag() & 0xFF), "a reused slot got its previous key back");
            assertTrue(table.deregister(mr.stag()));
            assertNull(table.lookup(mr.stag()));
        }
        for (int s = 0; s < 256; s++) {
            assertNull(table.lookup(s));
        }
    }

    @Test
    void registrationRejectsBadInput() {
        assertThrows(IllegalArgumentException.class, () -> table.register(pd, ByteBuffer.allocate(10), 0, 10, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> table.register(pd, mem, 1000, 100, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> table.register(null, mem, 0, 1, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> table.register(pd, mem, 0, 10, -5, 0));
        assertThrows(IllegalArgumentException.class, () -> table.register(pd, mem, 0, 10, 0, 64));
        for (int i = 0; i < 7; i++) {
            table.register(pd, mem, 0, 1, 0, 0);
        }
        assertThrows(IllegalStateException.class, () -> table.register(pd, mem, 0, 1, 0, 0));
    }

    @Test
    @DisplayName("RFC 5041 §7.1: base and bounds in unsigned 64-bit arithmetic across 2^63")
    void taggedOffsetsAcross2To63_5041_7_1() {
        long base = Long.MAX_VALUE - 99; // the region spans TO 2^63 - 100 .. 2^63 + 99
        StagRegion mr = table.register(pd, mem, 0, 200, base, StagAccess.REMOTE_WRITE);
        int w = StagAccess.REMOTE_WRITE;
        assertEquals(StagTable.OK, table.check(mr.stag(), pd, Long.MAX_VALUE - 10, 50, w), "across 2^63");
        assertEquals(StagTable.OK, table.check(mr.stag(), pd, Long.MIN_VALUE, 100, w), "from 2^63 to the end");
        assertEquals(StagTable.OK, table.check(mr.stag(), pd, base + 150, 50, w));
        assertEquals(StagTable.BASE_BOUNDS, table.check(mr.stag(), pd, base + 151, 50, w), "one past the end");
        assertEquals(StagTable.BASE_BOUNDS, table.check(mr.stag(), pd, Long.MIN_VALUE + 100, 1, w));
        assertEquals(StagTable.BASE_BOUNDS, table.check(mr.stag(), pd, base - 1, 1, w), "below the base");
        assertEquals(StagTable.BASE_BOUNDS, table.check(mr.stag(), pd, 0, 1, w), "TO 0 is below a base near 2^63");
        assertEquals(Long.MIN_VALUE + 7 - base, mr.indexOf(Long.MIN_VALUE + 7));
    }

    @Test
    @DisplayName("RFC 5041 §7.1 check 5: TO + length that wraps 2^64 is refused; base + length may not wrap")
    void taggedOffsetWrapAtTop_5041_7_1() {
        long base = -200L; // 2^64 - 200: the region's last byte is TO 2^64 - 1
        StagRegion mr = table.register(pd, mem, 0, 200, base, StagAccess.REMOTE_READ);
        int r = StagAccess.REMOTE_READ;
        assertEquals(StagTable.OK, table.check(mr.stag(), pd, -100L, 99, r));
        assertEquals(StagTable.OK, table.check(mr.stag(), pd, base, 199, r));
        assertEquals(StagTable.TO_WRAP, table.check(mr.stag(), pd, -100L, 100, r), "TO + length = 2^64 wraps");
        assertEquals(StagTable.TO_WRAP, table.check(mr.stag(), pd, -50L, 100, r));
        assertEquals(StagTable.TO_WRAP, table.check(mr.stag(), pd, -1L, Integer.MAX_VALUE, r));
        assertThrows(IllegalArgumentException.class, () -> table.register(pd, mem, 0, 201, base, 0),
                "a region whose base + length wraps 2^64 cannot be registered");
    }
}
