package org.jwarp.cli;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The end of a warm-up by count: settled once this JVM's JIT has finished no compilation for
 * {@link #QUIET_NANOS} (its total compilation time unchanged), or after {@link #MAX_NANOS} at most.
 * A compilation in progress counts only when it finishes, so the quiet stretch must be long
 * enough for one (C2 on a large method takes hundreds of milliseconds here), not one short pass.
 * The benchmarks' BenchMain ends its warm-up the same way (its {@code quietCheck}, which also
 * watches the peer JVM's compilation log); a CLI client cannot see its server's JIT.
 */
final class JitQuiet {
    /** No compilation finished for this long: quiet. */
    static final long QUIET_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    /** Settled after this long even if the JIT still works. */
    static final long MAX_NANOS = TimeUnit.SECONDS.toNanos(20);

    /** This JVM's total compilation time in ms, or null when the JVM does not report it. */
    private final LongSupplier total;
    private final LongSupplier clock;
    private final long start;
    private long lastChange;
    private long lastTotal;

    /** For this JVM's JIT and {@link System#nanoTime}. */
    JitQuiet() {
        this(ownJit(), System::nanoTime);
    }

    JitQuiet(LongSupplier totalCompilationMillis, LongSupplier nanoClock) {
        this.total = totalCompilationMillis;
        this.clock = nanoClock;
        this.start = nanoClock.getAsLong();
        this.lastChange = start;
        this.lastTotal = total == null ? 0 : total.getAsLong();
    }

    /** This JVM's total JIT compilation time in ms so far, or -1 when the JVM does not report it. */
    static long compilationMillis() {
        LongSupplier t = ownJit();
        return t == null ? -1 : t.getAsLong();
    }

    private static LongSupplier ownJit() {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit::getTotalCompilationTime : null;
    }

    /**
     * Called after each unrecorded pass: whether the warm-up may end. Without compilation-time
     * monitoring in this JVM, true at once (the count was all there is).
     */
    boolean settled() {
        if (total == null) {
            return true;
        }
        long now = clock.getAsLong();
        long t = total.getAsLong();
        if (t != lastTotal) {
            lastTotal = t;
            lastChange = now;
            return now - start >= MAX_NANOS;
        }
        return now - lastChange >= QUIET_NANOS || now - start >= MAX_NANOS;
    }
}
