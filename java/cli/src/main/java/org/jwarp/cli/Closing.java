package org.jwarp.cli;

/**
 * Closes the verbs resources of one connection in order (connection, regions, CQ, PD), every one
 * even when an earlier close throws: a failed disconnect must not leave the registrations, the
 * CQ and the PD open. The first failure is rethrown with the later ones attached as suppressed.
 */
final class Closing {
    private Closing() {
    }

    /** Closes each non-null resource in turn; rethrows the first failure once all were tried. */
    static void all(AutoCloseable... resources) {
        Throwable first = null;
        for (AutoCloseable r : resources) {
            if (r == null) {
                continue;
            }
            try {
                r.close();
            } catch (Throwable t) {
                if (first == null) {
                    first = t;
                } else {
                    first.addSuppressed(t);
                }
            }
        }
        if (first instanceof RuntimeException e) {
            throw e;
        }
        if (first instanceof Error e) {
            throw e;
        }
        if (first != null) {
            throw new IllegalStateException("closing failed: " + first.getMessage(), first);
        }
    }
}
