package org.jwarp.soft;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * The soft provider's per-connection direct buffers (a stream's transmit buffer, a completion
 * queue's poll buffer), recycled when their owner closes instead of left to the garbage collector.
 * A direct buffer's native memory is freed only after a GC finds the buffer unreachable; a server
 * that takes many short connections while its heap stays quiet would otherwise hold the direct
 * memory of every closed connection (up to {@code -XX:MaxDirectMemorySize}) until the next GC,
 * and the C allocator keeps those pages afterwards. With the pool, the direct memory of the soft
 * provider is bounded by what is open at once plus {@link #maxPooledBytes} kept free.
 *
 * <p>Cold path only: {@link #acquire} and {@link #release} run at connection setup and close, never
 * per work request. A buffer must not be used after its release.
 */
final class DirectBufferPool {
    private final long maxPooledBytes;
    private final Map<Integer, ArrayDeque<ByteBuffer>> free = new HashMap<>();
    private long pooledBytes;

    DirectBufferPool(long maxPooledBytes) {
        if (maxPooledBytes < 0) {
            throw new IllegalArgumentException("maxPooledBytes: " + maxPooledBytes);
        }
        this.maxPooledBytes = maxPooledBytes;
    }

    /** A cleared direct buffer of exactly {@code capacity} bytes, from the pool when one is free. */
    ByteBuffer acquire(int capacity) {
        synchronized (this) {
            ArrayDeque<ByteBuffer> q = free.get(capacity);
            ByteBuffer b = q == null ? null : q.pollFirst();
            if (b != null) {
                pooledBytes -= capacity;
                return b.clear();
            }
        }
        return ByteBuffer.allocateDirect(capacity);
    }

    /**
     * Gives {@code b} (from {@link #acquire}) back; the caller holds no other reference to it. Kept
     * for the next acquire while the pool holds less than its cap, else left to the GC.
     */
    void release(ByteBuffer b) {
        if (b == null || !b.isDirect()) {
            return;
        }
        int capacity = b.capacity();
        synchronized (this) {
            if (pooledBytes + capacity > maxPooledBytes) {
                return;
            }
            ArrayDeque<ByteBuffer> q = free.computeIfAbsent(capacity, c -> new ArrayDeque<>());
            for (ByteBuffer f : q) {
                if (f == b) {
                    throw new IllegalStateException("direct buffer released twice");
                }
            }
            q.addFirst(b);
            pooledBytes += capacity;
        }
    }

    /** Bytes held free (tests, leak checks). */
    synchronized long pooledBytes() {
        return pooledBytes;
    }

    /** Buffers held free (tests, leak checks). */
    synchronized int pooledCount() {
        int n = 0;
        for (ArrayDeque<ByteBuffer> q : free.values()) {
            n += q.size();
        }
        return n;
    }
}
