package org.jwarp.ground;

import java.util.Arrays;

/**
 * Copy-on-write arrays for the small member lists (a CQ's streams, a channel's CQs) that a hot
 * path iterates without a lock: a writer, under its own lock, publishes a new array through a
 * volatile field; readers keep the snapshot they loaded.
 */
public final class SnapshotArrays {
    private SnapshotArrays() {
    }

    /**
     * A copy of {@code a} with {@code e} appended.
     *
     * @param <T> the element type
     * @param a   the current snapshot
     * @param e   the element to append
     * @return a new array, one longer
     */
    public static <T> T[] with(T[] a, T e) {
        T[] b = Arrays.copyOf(a, a.length + 1);
        b[a.length] = e;
        return b;
    }

    /**
     * A copy of {@code a} without its first element identical to {@code e}, or {@code a} itself
     * when {@code e} is not in it; {@code empty} when nothing is left.
     *
     * @param <T>   the element type
     * @param a     the current snapshot
     * @param e     the element to remove (compared by identity)
     * @param empty the shared empty array to return when nothing is left
     * @return the new snapshot
     */
    public static <T> T[] without(T[] a, T e, T[] empty) {
        for (int i = 0; i < a.length; i++) {
            if (a[i] == e) {
                if (a.length == 1) {
                    return empty;
                }
                T[] b = Arrays.copyOf(a, a.length - 1);
                System.arraycopy(a, i + 1, b, i, a.length - i - 1);
                return b;
            }
        }
        return a;
    }
}
