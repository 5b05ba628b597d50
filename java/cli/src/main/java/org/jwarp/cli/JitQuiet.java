package org.jwarp.cli;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The end of a warm-up: settled once the JIT has finished no compilation for a quiet stretch
 * ({@link #QUIET_NANOS} by default; the JIT's activity unchanged), at least a minimum time after
 * the start, or after a maximum time ({@link #MAX_NANOS} by default) at most. A compilation in
 * progress counts only when it finishes, so the quiet stretch must be long enough for one (C2 on
 * a large method takes hundreds of milliseconds here), not one short pass. {@code jwarp client}
 * watches its own JVM; the benchmarks' BenchMain adds its peer JVM's compilation log.
 */
public final class JitQuiet {
    /** No compilation finished for this long: quiet. */
    public static final long QUIET_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    /** Settled after this long even if the JIT still works. */
    public static final long MAX_NANOS = TimeUnit.SECONDS.toNanos(20);

    /** A count that grows when a compilation finishes (total compilation time, compilations), or null. */
    private final LongSupplier activity;
    private final LongSupplier clock;
    private final long quietNanos;
    private final long minNanos;
    private final long maxNanos;
    private final long start;
    private long lastChange;
    private long last;
    private boolean quiet;

    /** For this JVM's JIT and {@link System#nanoTime}: 0.5 s quiet, at most 20 s. */
    JitQuiet() {
        this(ownJit(), System::nanoTime);
    }

    JitQuiet(LongSupplier totalCompilationMillis, LongSupplier nanoClock) {
        this(totalCompilationMillis, nanoClock, QUIET_NANOS, 0, MAX_NANOS);
    }

    /**
     * @param activity   grows whenever a watched JIT finishes a compilation; null: settled at once
     * @param nanoClock  the clock, in nanoseconds
     * @param quietNanos how long the activity must stay unchanged
     * @param minNanos   settled no earlier than this after the start
     * @param maxNanos   settled this long after the start at the latest, quiet or not
     */
    public JitQuiet(LongSupplier activity, LongSupplier nanoClock, long quietNanos, long minNanos, long maxNanos) {
        this.activity = activity;
        this.clock = nanoClock;
        this.quietNanos = quietNanos;
        this.minNanos = minNanos;
        this.maxNanos = maxNanos;
        this.start = nanoClock.getAsLong();
        this.lastChange = start;
        this.last = activity == null ? 0 : activity.getAsLong();
    }

    /** This JVM's total JIT compilation time in ms so far, or -1 when the JVM does not report it. */
    public static long compilationMillis() {
        LongSupplier t = ownJit();
        return t == null ? -1 : t.getAsLong();
    }

    private static LongSupplier ownJit() {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit::getTotalCompilationTime : null;
    }

    /**
     * Called after each unrecorded batch: whether the warm-up may end. Without an activity to
     * watch, true at once (the count was all there is).
     */
    public boolean settled() {
        if (activity == null) {
            quiet = true;
            return true;
        }
        long now = clock.getAsLong();
        long a = activity.getAsLong();
        if (a != last) {
            last = a;
            lastChange = now;
        } else if (now - start >= minNanos && now - lastChange >= quietNanos) {
            quiet = true;
            return true;
        }
        return now - start >= maxNanos;
    }

    /** Whether {@link #settled} ended on a quiet JIT (false: the maximum time ran out, or not settled yet). */
    public boolean quiet() {
        return quiet;
    }
}
