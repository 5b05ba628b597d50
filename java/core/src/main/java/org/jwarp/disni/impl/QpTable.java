package org.jwarp.disni.impl;

/**
 * The queue pairs attached to a completion queue, by qp_num: an immutable open-addressing table
 * (linear probing, at most half full), replaced as a whole on attach and detach, so a poller
 * finds the QP of a completion in O(1) without a lock and without allocation (no boxing of the
 * qp_num). Completions are routed to their RFC 5040 §5 stream by the qp_num the device reports.
 *
 * <p>Immutable, so thread-safe; {@link #with} and {@link #without} return new tables.
 */
final class QpTable<T> {
    private final java.util.function.ToIntFunction<T> key;
    private final Object[] slots;
    private final int size;

    /** An empty table whose entries are keyed by {@code key} (the qp_num). */
    QpTable(java.util.function.ToIntFunction<T> key) {
        this(key, new Object[8], 0);
    }

    private QpTable(java.util.function.ToIntFunction<T> key, Object[] slots, int size) {
        this.key = key;
        this.slots = slots;
        this.size = size;
    }

    int size() {
        return size;
    }

    /** The attached QP numbered {@code qpNum}, or null. */
    @SuppressWarnings("unchecked")
    T get(int qpNum) {
        int mask = slots.length - 1;
        for (int i = mix(qpNum) & mask; ; i = (i + 1) & mask) {
            T q = (T) slots[i];
            if (q == null) {
                return null;
            }
            if (key.applyAsInt(q) == qpNum) {
                return q;
            }
        }
    }

    /** This table plus {@code qp} (replacing an entry with the same qp_num). */
    @SuppressWarnings("unchecked")
    QpTable<T> with(T qp) {
        int cap = slots.length;
        while ((size + 1) * 2 > cap) {
            cap <<= 1;
        }
        Object[] n = new Object[cap];
        int count = 0;
        int k = key.applyAsInt(qp);
        for (Object q : slots) {
            if (q != null && key.applyAsInt((T) q) != k) {
                put(n, (T) q);
                count++;
            }
        }
        put(n, qp);
        return new QpTable<>(key, n, count + 1);
    }

    /** This table without {@code qp} (unchanged when it is not attached). */
    @SuppressWarnings("unchecked")
    QpTable<T> without(T qp) {
        if (get(key.applyAsInt(qp)) != qp) {
            return this;
        }
        Object[] n = new Object[slots.length];
        for (Object q : slots) {
            if (q != null && q != qp) {
                put(n, (T) q);
            }
        }
        return new QpTable<>(key, n, size - 1);
    }

    private void put(Object[] t, T q) {
        int mask = t.length - 1;
        int i = mix(key.applyAsInt(q)) & mask;
        while (t[i] != null) {
            i = (i + 1) & mask;
        }
        t[i] = q;
    }

    private static int mix(int k) {
        int h = k * 0x9E3779B9;
        return h ^ (h >>> 16);
    }
}
