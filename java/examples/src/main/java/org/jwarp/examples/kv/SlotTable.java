package org.jwarp.examples.kv;

import java.util.Arrays;

/**
 * Which slot of the shared value region holds which key, and when a slot may be reused.
 *
 * <p>A PUT never writes a live slot: the client writes into its staging slot, and the commit makes
 * that slot the key's and retires the old one. A GET pins the slot it hands out until the same
 * connection's next request (the client has finished its RDMA Read by then); a retired slot goes
 * back to the free list only once unpinned. So no slot is overwritten while a client reads it.
 * Every slot is live (one per key), staging (one per connection), pinned-and-retired (at most one
 * per connection) or free: {@code keys + 2 * connections} slots always suffice.
 *
 * <p>Thread-safe: the server's threads share one table.
 */
final class SlotTable {
    private final int[] keySlot;
    private final long[] keyVersion;
    private final int[] pins;
    private final boolean[] retired;
    private final int[] free;
    private int freeCount;

    SlotTable(int keys, int slots) {
        if (slots < keys + 1) {
            throw new IllegalArgumentException(slots + " slots for " + keys + " keys");
        }
        keySlot = new int[keys];
        keyVersion = new long[keys];
        pins = new int[slots];
        retired = new boolean[slots];
        free = new int[slots];
        for (int s = slots - 1; s >= 0; s--) {
            free[freeCount++] = s;
        }
        Arrays.fill(keySlot, -1);
    }

    /** Per-connection slots: the one it writes its next PUT into, the one its last GET pinned. */
    static final class Lease {
        int staging = -1;
        int pinned = -1;
        /** The version of the key in {@link #pinned} when it was pinned. */
        long pinnedVersion;
        boolean closed;
    }

    synchronized int allocate() {
        if (freeCount == 0) {
            throw new IllegalStateException("no free value slot: more connections than the region was sized for");
        }
        return free[--freeCount];
    }

    /** Loads key {@code key} at version 0 into a fresh slot (server start). */
    synchronized int load(int key) {
        int s = allocate();
        keySlot[key] = s;
        keyVersion[key] = 0;
        return s;
    }

    /**
     * A GET: pins the key's slot for {@code lease} until its next request and returns it; the
     * version is left in {@link Lease#pinnedVersion}. -1 when the lease was closed.
     */
    synchronized int get(Lease lease, int key) {
        unpin(lease);
        if (lease.closed) {
            return -1;
        }
        int s = keySlot[key];
        pins[s]++;
        lease.pinned = s;
        lease.pinnedVersion = keyVersion[key];
        return s;
    }

    /** Drops {@code lease}'s pin (its client has finished reading). */
    synchronized void release(Lease lease) {
        unpin(lease);
    }

    /** The slot {@code lease} writes its next PUT into, -1 once closed. */
    synchronized int staging(Lease lease) {
        return lease.staging;
    }

    /** The key's current version. */
    synchronized long version(int key) {
        return keyVersion[key];
    }

    /**
     * A PUT's commit: the lease's staging slot becomes {@code key}'s at {@code version}, the old slot
     * is retired, and the lease gets a new staging slot (returned). -1 when the lease was closed.
     */
    synchronized int commit(Lease lease, int key, long version) {
        unpin(lease);
        if (lease.closed) {
            return -1;
        }
        int old = keySlot[key];
        keySlot[key] = lease.staging;
        keyVersion[key] = version;
        retire(old);
        lease.staging = allocate();
        return lease.staging;
    }

    /** A connection went away: its staging slot and pin are given back. */
    synchronized void close(Lease lease) {
        lease.closed = true;
        unpin(lease);
        if (lease.staging >= 0) {
            free[freeCount++] = lease.staging;
            lease.staging = -1;
        }
    }

    /** Diagnostics: what slot {@code s} is now. */
    synchronized String describe(int s) {
        StringBuilder b = new StringBuilder();
        for (int k = 0; k < keySlot.length; k++) {
            if (keySlot[k] == s) {
                b.append("live for key ").append(k).append(" version ").append(keyVersion[k]).append(' ');
            }
        }
        for (int i = 0; i < freeCount; i++) {
            if (free[i] == s) {
                b.append("free ");
            }
        }
        return b.append("pins ").append(pins[s]).append(retired[s] ? " retired" : "").toString();
    }

    synchronized int freeSlots() {
        return freeCount;
    }

    private void unpin(Lease lease) {
        int s = lease.pinned;
        if (s >= 0) {
            lease.pinned = -1;
            if (--pins[s] == 0 && retired[s]) {
                retired[s] = false;
                free[freeCount++] = s;
            }
        }
    }

    private void retire(int s) {
        if (pins[s] == 0) {
            free[freeCount++] = s;
        } else {
            retired[s] = true;
        }
    }
}
