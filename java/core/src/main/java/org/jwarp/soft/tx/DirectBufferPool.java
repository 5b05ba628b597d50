package org.jwarp.soft.tx;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * The soft provider's direct buffers: a completion queue's poll buffer, recycled when its owner
 * closes instead of left to the garbage collector, and the streams' transmit staging areas
 * ({@link TxStaging}, RFC 5044 §4 FPDUs staged for the socket), lent for as long as a stream has
 * bytes the socket has not taken.
 * A direct buffer's native memory is freed only after a GC finds the buffer unreachable; a server
 * that takes many short connections while its heap stays quiet would otherwise hold the direct
 * memory of every closed connection (up to {@code -XX:MaxDirectMemorySize}) until the next GC,
 * and the C allocator keeps those pages afterwards. With the pool, the direct memory of the soft
 * provider is bounded by what is open at once plus {@link #maxPooledBytes} kept free.
 *
 * <p>Cold path only: {@link #acquire} and {@link #release} run at connection setup and close, never
 * per work request. A buffer must not be used after its release.
 *
 * <p>Staging is shared, not per stream: a stream borrows a staging area ({@link #borrowStaging})
 * when a flush has bytes to stage and gives it back ({@link #giveBackStaging}) once the socket took
 * them all, so memory follows the bytes in flight, not the number of connections. Only a stream
 * whose socket did not take everything (a partial write, a peer that reads slowly or not at all)
 * keeps its area until it drains. Bounds: a stream holds at most one area, and at most
 * {@link #maxStagingInUse} are lent at once; a stream that finds none (the peers of that many
 * streams stopped reading) waits as it would on a full socket: it is queued, and the next area
 * given back goes to the first waiter, which is then scheduled on its reactor, so no wake-up is
 * lost and no waiter is overtaken. Borrow and give-back are a lock and an array slot, no
 * allocation once as many areas exist as were ever in use at once.
 */
public final class DirectBufferPool {
    private final long maxPooledBytes;
    private final Map<Integer, ArrayDeque<ByteBuffer>> free = new HashMap<>();
    private long pooledBytes;

    /** Bytes of one staging area. */
    private final int stagingCapacity;
    /** Most staging areas lent at once (the waiters' bound). */
    private final int maxStagingInUse;
    /** Free staging areas kept (a stack: the last given back is the next lent, still in cache). */
    private final TxStaging[] freeStaging;
    private int freeStagingCount;
    private int stagingInUse;
    /** Streams waiting for a staging area, first come first served. */
    private final ArrayDeque<StagingWaiter> waiters = new ArrayDeque<>();
    /** Makes a new staging area of the given capacity (tests replace it to simulate exhausted direct memory). */
    private java.util.function.IntFunction<TxStaging> allocator = TxStaging::new;
    /**
     * @param maxPooledBytes   free bytes kept (poll buffers, and free staging areas)
     * @param stagingCapacity  bytes of one staging area (the config's txBufferSize)
     * @param maxStagingInUse  most staging areas lent at once (the config's txStagingAreas)
     */
    public DirectBufferPool(long maxPooledBytes, int stagingCapacity, int maxStagingInUse) {
        if (maxPooledBytes < 0) {
            throw new IllegalArgumentException("maxPooledBytes: " + maxPooledBytes);
        }
        if (stagingCapacity < 1 || maxStagingInUse < 1) {
            throw new IllegalArgumentException("staging: " + stagingCapacity + " bytes x " + maxStagingInUse);
        }
        this.maxPooledBytes = maxPooledBytes;
        this.stagingCapacity = stagingCapacity;
        this.maxStagingInUse = maxStagingInUse;
        int keep = (int) Math.min(maxStagingInUse, Math.max(1, Math.min(maxPooledBytes / stagingCapacity, 1024)));
        this.freeStaging = new TxStaging[keep];
    }

    /** Tests: replaces how a new staging area is made (to simulate exhausted direct memory). */
    void allocator(java.util.function.IntFunction<TxStaging> a) {
        allocator = a;
    }

    /**
     * A staging area for {@code t}'s stream, or null when {@link #maxStagingInUse} are lent: then the
     * stream is queued and, once an area is given back, it is handed that area (the next call
     * returns it) and scheduled. {@code setup} (MPA frames and TERMs of connection setup, a
     * TERM of the data path: short and bounded by the handshake) never waits. Call under the
     * stream's I/O lock; the stream holds at most one area, so it calls only while it holds none.
     */
    public TxStaging borrowStaging(StagingWaiter t, boolean setup) {
        boolean allocate;
        synchronized (this) {
            TxStaging st = t.granted;
            if (st != null) {
                t.granted = null;
                return st;
            }
            boolean may = setup || (stagingInUse < maxStagingInUse && waiters.isEmpty());
            if (may && freeStagingCount > 0) {
                st = freeStaging[--freeStagingCount];
                freeStaging[freeStagingCount] = null;
                stagingInUse++;
                st.lent = true;
                return st;
            }
            allocate = may;
            if (allocate) {
                stagingInUse++;
            } else if (!t.waiting) {
                t.waiting = true;
                waiters.addLast(t);
            }
        }
        if (!allocate) {
            return null;
        }
        try {
            TxStaging st = allocator.apply(stagingCapacity);
            synchronized (this) {
                st.lent = true;
            }
            return st;
        } catch (OutOfMemoryError e) {
            // direct memory exhausted: wait for an area like any other waiter while one is lent (its
            // give-back hands it over); with none lent no give-back will come, so the stream retries
            // on a later turn instead of queueing (and holding every later borrower behind it)
            synchronized (this) {
                stagingInUse--;
                if (!setup && !t.waiting) {
                    if (stagingInUse > 0) {
                        t.waiting = true;
                        waiters.addLast(t);
                    } else {
                        t.retryStaging = true;
                    }
                }
            }
            if (setup) {
                throw e;
            }
            return null;
        }
    }

    /**
     * Gives back a drained staging area (its slice table empty); the caller holds no other
     * reference to it. The first waiter, if any, is handed it and scheduled. A second give-back
     * is refused in constant time (the area's lent flag), kept by the pool or not.
     */
    public void giveBackStaging(TxStaging st) {
        if (st == null) {
            return;
        }
        StagingWaiter w;
        synchronized (this) {
            if (!st.lent) {
                throw new IllegalStateException("staging area given back twice");
            }
            st.buf.clear();
            w = waiters.pollFirst();
            if (w != null) {
                w.waiting = false;
                w.granted = st; // stays lent, now to w
            } else {
                stagingInUse--;
                st.lent = false;
                if (freeStagingCount < freeStaging.length) {
                    freeStaging[freeStagingCount++] = st;
                }
            }
        }
        if (w != null) {
            w.stagingGranted();
        }
    }

    /** {@code t}'s stream closes: it leaves the waiters, and an area handed to it meanwhile goes back. */
    public void cancelStaging(StagingWaiter t) {
        TxStaging st;
        synchronized (this) {
            if (t.waiting) {
                t.waiting = false;
                waiters.remove(t);
            }
            st = t.granted;
            t.granted = null;
        }
        giveBackStaging(st);
    }

    /** Staging areas lent now (tests, leak checks). */
    public synchronized int stagingInUse() {
        return stagingInUse;
    }

    /** Staging areas kept free (tests). */
    public synchronized int stagingFree() {
        return freeStagingCount;
    }

    /** Streams waiting for a staging area (tests). */
    public synchronized int stagingWaiters() {
        return waiters.size();
    }

    /** A cleared direct buffer of exactly {@code capacity} bytes, from the pool when one is free. */
    public ByteBuffer acquire(int capacity) {
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
    public void release(ByteBuffer b) {
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
    public synchronized long pooledBytes() {
        return pooledBytes;
    }

    /** Buffers held free (tests, leak checks). */
    public synchronized int pooledCount() {
        int n = 0;
        for (ArrayDeque<ByteBuffer> q : free.values()) {
            n += q.size();
        }
        return n;
    }
}
