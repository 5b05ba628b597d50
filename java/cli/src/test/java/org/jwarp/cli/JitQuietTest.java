package org.jwarp.cli;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The CLI's bandwidth warm-up ends on a quiet JIT, as the benchmarks' BenchMain ends its own. */
class JitQuietTest {
    private final AtomicLong jitMillis = new AtomicLong();
    private final AtomicLong now = new AtomicLong(1_000_000_000L);

    private void advanceMs(long ms) {
        now.addAndGet(TimeUnit.MILLISECONDS.toNanos(ms));
    }

    @Test
    void quietPassShorterThanHalfASecondDoesNotSettle() {
        JitQuiet q = new JitQuiet(jitMillis::get, now::get);
        advanceMs(100); // a short pass in which nothing finished compiling: a compilation may be in progress
        assertFalse(q.settled());
        advanceMs(450);
        assertTrue(q.settled(), "no compilation finished for 550 ms");
    }

    @Test
    void aFinishedCompilationRestartsTheQuietStretch() {
        JitQuiet q = new JitQuiet(jitMillis::get, now::get);
        advanceMs(400);
        jitMillis.addAndGet(120); // a C2 compilation finished during this pass
        assertFalse(q.settled());
        advanceMs(400);
        assertFalse(q.settled(), "only 400 ms since the last compilation");
        advanceMs(150);
        assertTrue(q.settled());
    }

    @Test
    void settlesAfterTwentySecondsOfCompilingAtMost() {
        JitQuiet q = new JitQuiet(jitMillis::get, now::get);
        for (int i = 0; i < 199; i++) {
            advanceMs(100);
            jitMillis.incrementAndGet();
            assertFalse(q.settled(), "pass " + i);
        }
        advanceMs(100);
        jitMillis.incrementAndGet();
        assertTrue(q.settled(), "20 s with the JIT busy: the warm-up ends anyway");
    }

    @Test
    void withoutCompilationTimesTheCountIsAll() {
        assertTrue(new JitQuiet(null, now::get).settled());
    }
}
