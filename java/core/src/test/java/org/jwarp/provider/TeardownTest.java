package org.jwarp.provider;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * Closing a protection domain's children (RFC 5041 §8.2): every child is released even when one
 * fails, and the failures are reported (first thrown, the others suppressed).
 */
class TeardownTest {

    @Test
    void everyStepRunsAndFirstFailureIsThrownWithOthersSuppressed_5041_8_2() {
        List<String> ran = new ArrayList<>();
        IllegalStateException first = new IllegalStateException("region 1");
        IllegalArgumentException second = new IllegalArgumentException("region 3");
        Teardown t = new Teardown();
        t.run(() -> ran.add("r0"));
        t.run(() -> {
            ran.add("r1");
            throw first;
        });
        t.run(() -> ran.add("r2"));
        t.run(() -> {
            ran.add("r3");
            throw second;
        });
        t.run(() -> ran.add("r4"));
        assertEquals(List.of("r0", "r1", "r2", "r3", "r4"), ran, "a failing close does not stop the later ones");
        IllegalStateException thrown = assertThrows(IllegalStateException.class, t::rethrow);
        assertSame(first, thrown);
        assertArrayEquals(new Throwable[] {second}, thrown.getSuppressed());
    }

    @Test
    void anErrorIsReportedToo_5041_8_2() {
        Teardown t = new Teardown();
        AssertionError boom = new AssertionError("boom");
        t.run(() -> {
            throw boom;
        });
        int[] after = new int[1];
        t.run(() -> after[0]++);
        assertEquals(1, after[0]);
        assertSame(boom, assertThrows(AssertionError.class, t::rethrow));
    }

    @Test
    void nothingFailedNothingThrown_5041_8_2() {
        Teardown t = new Teardown();
        t.run(() -> { });
        t.rethrow();
    }
}
