package org.jwarp.soft.tx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The soft provider's per-connection direct buffers, recycled on close (RFC 5044 §7.1.2 aborted setups). */
class DirectBufferPoolTest {

    @Test
    @DisplayName("RFC 5044 §7.1.2: a released buffer is the next acquire of its size, cleared")
    void releasedBufferIsReusedCleared_5044_7_1_2() {
        DirectBufferPool pool = new DirectBufferPool(1 << 20, 65536, 1024);
        ByteBuffer a = pool.acquire(4096);
        assertTrue(a.isDirect());
        a.putInt(7).limit(100);
        pool.release(a);
        assertEquals(4096, pool.pooledBytes());
        assertNotSame(a, pool.acquire(2048), "another size class");
        ByteBuffer b = pool.acquire(4096);
        assertSame(a, b);
        assertEquals(0, b.position());
        assertEquals(4096, b.limit());
        assertEquals(0, pool.pooledBytes());
    }

    @Test
    @DisplayName("RFC 5044 §7.1.2: the pool keeps at most its cap free; a double release is refused")
    void capAndDoubleRelease_5044_7_1_2() {
        DirectBufferPool pool = new DirectBufferPool(8192, 65536, 1024);
        ByteBuffer a = pool.acquire(4096);
        ByteBuffer b = pool.acquire(4096);
        ByteBuffer c = pool.acquire(4096);
        pool.release(a);
        assertThrows(IllegalStateException.class, () -> pool.release(a));
        pool.release(b);
        pool.release(c); // over the cap: left to the GC
        assertEquals(8192, pool.pooledBytes());
        assertEquals(2, pool.pooledCount());
        pool.release(ByteBuffer.allocate(16)); // a heap buffer is never pooled
        assertEquals(2, pool.pooledCount());
    }
}
