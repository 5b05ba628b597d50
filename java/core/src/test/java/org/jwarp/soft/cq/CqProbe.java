package org.jwarp.soft.cq;

/**
 * Test access to a completion queue's package-private state, for the tests in {@code org.jwarp.soft}
 * that drive it through whole connections (they need the provider's fixture, so they cannot sit here).
 */
public final class CqProbe {
    private CqProbe() {
    }

    public static int streamCount(SoftCompletionQueue cq) {
        return cq.streamCount();
    }

    public static boolean hasWaiters(SoftCompletionQueue cq) {
        return cq.hasWaiters();
    }

    public static boolean pollerBlocked(SoftCompletionQueue cq) {
        return cq.pollerBlocked();
    }

    public static boolean pollerLed(SoftCompletionQueue cq) {
        return cq.pollerLed();
    }

    /** Ring, waiters and poller state (stall reports; racy reads). */
    public static String debugState(SoftCompletionQueue cq) {
        return cq.debugState();
    }

    /** Sets the hook run on an awaiting thread right after it led. */
    public static void afterLead(SoftCompletionQueue cq, Runnable hook) {
        cq.afterLead(hook);
    }
}
