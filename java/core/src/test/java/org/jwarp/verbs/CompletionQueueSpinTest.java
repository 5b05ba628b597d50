package org.jwarp.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The default {@link CompletionQueue#spin}: polls until a completion or a bound, nothing else. */
class CompletionQueueSpinTest {
    /** Empty for the first {@code emptyPolls} polls, then one completion per poll. */
    static final class Scripted implements CompletionQueue {
        long polls;
        long emptyPolls;

        @Override
        public int capacity() {
            return 1;
        }

        @Override
        public int poll(WorkCompletion[] out, int max) {
            return ++polls > emptyPolls ? 1 : 0;
        }

        @Override
        public int await(WorkCompletion[] out, int max, long timeout, TimeUnit unit) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void requestNotify(boolean solicitedOnly) {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletionChannel channel() {
            return null;
        }

        @Override
        public void close() {
        }
    }

    private final WorkCompletion[] out = {new WorkCompletion()};

    @Test
    @DisplayName("spin returns the first non-empty poll's count, after exactly that many polls")
    void returnsOnTheFirstCompletion() {
        Scripted cq = new Scripted();
        cq.emptyPolls = 999;
        assertEquals(1, cq.spin(out, 1, 10_000, 0));
        assertEquals(1000, cq.polls);
    }

    @Test
    @DisplayName("spin gives up after maxPolls empty polls")
    void stopsAtMaxPolls() {
        Scripted cq = new Scripted();
        cq.emptyPolls = Long.MAX_VALUE;
        assertEquals(0, cq.spin(out, 1, 500, 0));
        assertEquals(500, cq.polls);
        cq.polls = 0;
        assertEquals(0, cq.spin(out, 1, 1, 0));
        assertEquals(1, cq.polls, "maxPolls 1: one poll");
    }

    @Test
    @DisplayName("spin gives up after about maxNanos")
    void stopsAtMaxNanos() {
        Scripted cq = new Scripted();
        cq.emptyPolls = Long.MAX_VALUE;
        long t0 = System.nanoTime();
        assertEquals(0, cq.spin(out, 1, Long.MAX_VALUE, TimeUnit.MILLISECONDS.toNanos(20)));
        long took = System.nanoTime() - t0;
        assertTrue(took >= TimeUnit.MILLISECONDS.toNanos(20), "returned after " + took + " ns");
        assertTrue(took < TimeUnit.SECONDS.toNanos(10), "returned after " + took + " ns");
    }

    @Test
    @DisplayName("spin refuses maxPolls < 1 and maxNanos < 0")
    void refusesBadBounds() {
        Scripted cq = new Scripted();
        assertThrows(IllegalArgumentException.class, () -> cq.spin(out, 1, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> cq.spin(out, 1, 1, -1));
        assertEquals(0, cq.polls);
    }
}
