package org.jwarp.provider;

/**
 * Releases a group of resources so that one failure does not leave the rest held: each step runs
 * even when an earlier one threw, and {@link #rethrow()} then reports the first failure with the
 * later ones attached as suppressed. Used by the providers' protection-domain close (RFC 5041
 * §8.2: a domain's STags all die with it). Setup-time code: it allocates.
 *
 * <p>Not thread-safe: one closing thread uses it.
 */
public final class Teardown {
    private Throwable first;

    /** Runs {@code step}, keeping what it throws for {@link #rethrow()}. */
    public void run(Runnable step) {
        try {
            step.run();
        } catch (RuntimeException | Error e) {
            if (first == null) {
                first = e;
            } else if (first != e) {
                first.addSuppressed(e);
            }
        }
    }

    /** Throws the first failure of the steps run so far (others suppressed), or returns when none failed. */
    public void rethrow() {
        if (first instanceof RuntimeException e) {
            throw e;
        }
        if (first instanceof Error e) {
            throw e;
        }
    }
}
