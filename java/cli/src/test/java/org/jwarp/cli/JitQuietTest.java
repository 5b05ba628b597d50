package org.jwarp.cli;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Warm-ups (jwarp client's latency and bandwidth, the benchmarks' BenchMain) end on a quiet JIT. */
class JitQuietTest {
    private final AtomicLong jitMillis = new AtomicLong();
    private final AtomicLong now = new AtomicLong(1_000_000_000L);

    private void advanceMs(long ms) {
        now.addAndGet(TimeUnit.MILLISECONDS.toNanos(ms));
    }

    /** {@code unsettled} passes of 100 ms, each finishing a compilation and not settling, then one more pass. */
    private void compileInEveryPass(JitQuiet q, int unsettled) {
        for (int i = 0; i < unsettled; i++) {
            advanceMs(100);
            jitMillis.incrementAndGet();
            assertFalse(q.settled(), "pass " + i);
        }
        advanceMs(100);
        jitMillis.incrementAndGet();
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
        compileInEveryPass(q, 199);
        assertTrue(q.settled(), "20 s with the JIT busy: the warm-up ends anyway");
    }

    @Test
    void quietNoEarlierThanTheMinimumAndSaysWhetherItWasQuiet() {
        JitQuiet q = new JitQuiet(jitMillis::get, now::get, TimeUnit.MILLISECONDS.toNanos(500),
                TimeUnit.SECONDS.toNanos(2), TimeUnit.SECONDS.toNanos(5));
        advanceMs(1_000);
        assertFalse(q.settled(), "quiet for 1 s, but the minimum is 2 s");
        assertFalse(q.quiet());
        advanceMs(1_000);
        assertTrue(q.settled());
        assertTrue(q.quiet());
        JitQuiet busy = new JitQuiet(jitMillis::get, now::get, TimeUnit.MILLISECONDS.toNanos(500), 0,
                TimeUnit.SECONDS.toNanos(5));
        compileInEveryPass(busy, 49);
        assertTrue(busy.settled(), "the maximum ran out");
        assertFalse(busy.quiet(), "ended by the maximum, not quiet");
    }

    @Test
    void withoutCompilationTimesTheCountIsAll() {
        assertTrue(new JitQuiet(null, now::get).settled());
    }
}
