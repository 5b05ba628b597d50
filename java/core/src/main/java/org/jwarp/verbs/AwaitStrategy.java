package org.jwarp.verbs;

import java.time.Duration;
import java.util.Objects;

/**
 * How a thread in {@link CompletionQueue#await} waits on an empty CQ: it spins for up to
 * {@code spin} (no system call but the provider's non-blocking reads), then yields its core up to
 * {@code yields} times, checking the CQ after each, then blocks until a completion wakes it or the
 * timeout ends. Every phase is bounded, so a waiter never burns a core for longer than
 * {@code spin} plus {@code yields} scheduler round trips per call.
 *
 * <p>Chosen per CQ at creation ({@link Device#createCompletionQueue(int, CompletionChannel, boolean,
 * AwaitStrategy)}); a provider without such a choice ignores it. Spinning buys latency with CPU:
 * on a machine with fewer free cores than spinning threads it costs the peer (or the provider's
 * own threads) their core, so long spins suit dedicated cores, yields suit shared ones.
 *
 * @param spin   longest spin before the first yield; {@link Duration#ZERO} for none, at most 1 s
 * @param yields most yields before blocking (0..1,000,000)
 */
public record AwaitStrategy(Duration spin, int yields) {
    /** Longest spin accepted. */
    public static final Duration MAX_SPIN = Duration.ofSeconds(1);
    /** Most yields accepted. */
    public static final int MAX_YIELDS = 1_000_000;

    /**
     * Checks the bounds.
     *
     * @param spin   longest spin before the first yield; {@link Duration#ZERO} for none, at most 1 s
     * @param yields most yields before blocking (0..1,000,000)
     * @throws IllegalArgumentException when {@code spin} is negative or above {@link #MAX_SPIN}, or
     *                                  {@code yields} is outside 0..{@link #MAX_YIELDS}
     * @throws NullPointerException     when {@code spin} is null
     */
    public AwaitStrategy {
        Objects.requireNonNull(spin, "spin");
        if (spin.isNegative() || spin.compareTo(MAX_SPIN) > 0) {
            throw new IllegalArgumentException("spin: " + spin + " must be 0..1 s");
        }
        if (yields < 0 || yields > MAX_YIELDS) {
            throw new IllegalArgumentException("yields: " + yields + " must be 0.." + MAX_YIELDS);
        }
    }

    /**
     * Spin, then yield, then block.
     *
     * @param spinMicros longest spin in microseconds (0..1,000,000)
     * @param yields     most yields before blocking
     * @return the strategy
     */
    public static AwaitStrategy of(long spinMicros, int yields) {
        if (spinMicros < 0 || spinMicros > MAX_SPIN.toNanos() / 1000) {
            throw new IllegalArgumentException("spinMicros: " + spinMicros + " must be 0..1000000");
        }
        return new AwaitStrategy(Duration.ofNanos(spinMicros * 1000), yields);
    }

    /** {@return a strategy that blocks at once: no spin, no yield} */
    public static AwaitStrategy block() {
        return new AwaitStrategy(Duration.ZERO, 0);
    }

    /** {@return the spin in nanoseconds} */
    public long spinNanos() {
        return spin.toNanos();
    }
}
