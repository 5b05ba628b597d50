package org.jwarp.ground;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.Test;

class SnapshotArraysTest {
    private static final String[] EMPTY = new String[0];

    @Test
    void appendsAndRemovesByIdentityWithoutTouchingTheSnapshot() {
        String a = new String("x");
        String b = new String("x");
        String[] one = SnapshotArrays.with(EMPTY, a);
        String[] two = SnapshotArrays.with(one, b);
        assertArrayEquals(new String[] {a}, one);
        String[] left = SnapshotArrays.without(two, b, EMPTY);
        assertSame(a, left[0]);
        assertArrayEquals(new String[] {a, b}, two);
        assertSame(left, SnapshotArrays.without(left, b, EMPTY));
        assertSame(EMPTY, SnapshotArrays.without(left, a, EMPTY));
    }
}
