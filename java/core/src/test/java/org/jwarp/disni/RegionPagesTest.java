package org.jwarp.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.function.Supplier;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Memory of an allocated DiSNI region (RFC 5041 §4.1 regions of any length) goes back to the
 * system when the region is closed, also while a window of it is still reachable: the native
 * library's madvise, measured by the mapping's resident size.
 */
@Tag("native")
class RegionPagesTest {
    @Test
    @DisplayName("A closed region's pages are given back at close although a window is still reachable (RFC 5040 §2.1)")
    @SuppressWarnings("unchecked")
    void closedRegionPagesLeaveAtOnce_5040_2_1() {
        Object[] r = ((Supplier<Object[]>) DisniRuntime.get().newInstance("org.jwarp.disni.impl.RegionPagesProbe",
                Supplier.class)).get();
        long before = (Long) r[0];
        long after = (Long) r[1];
        assertTrue(before >= 8 * 1024 - 64, "filled 8 MiB resident: " + before + " KiB");
        assertTrue(after < 256, "resident after close: " + after + " KiB (was " + before + ")");
        assertEquals((byte) 0, (Byte) r[2], "a kept window reads zeros, not the region's old bytes");
        assertEquals(Boolean.TRUE, r[3], "discarded");
        assertEquals(0, (Integer) r[4], "madvise errno");
        assertEquals(Boolean.FALSE, r[5], "the mapping stays while the window is reachable");
    }
}
