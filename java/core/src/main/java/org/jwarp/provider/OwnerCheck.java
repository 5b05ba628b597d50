package org.jwarp.provider;

import java.util.ConcurrentModificationException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The check of a single-consumer CQ's or QP's contract (one thread at a time; see
 * {@code CompletionQueue}, "Single-consumer mode"), shared by the providers that drop their locks
 * in that mode, made only when Java assertions are enabled for this package: {@link #enter}
 * records the calling thread for the length of a call, and the second of two overlapping calls
 * from different threads throws {@link ConcurrentModificationException}. Without assertions {@link #CHECKED} is a false constant,
 * the JIT drops every call, and the object holds nothing.
 */
public final class OwnerCheck {
    /** Whether Java assertions are enabled for this package (then the check runs). */
    public static final boolean CHECKED = OwnerCheck.class.desiredAssertionStatus();

    private final AtomicReference<Thread> user = CHECKED ? new AtomicReference<>() : null;
    private final String what;

    /** @param what the object checked, named in the exception ("completion queue") */
    public OwnerCheck(String what) {
        this.what = what;
    }

    /**
     * Marks the calling thread inside; returns whether this call entered (then it must
     * {@link #leave}), false when unchecked or when the thread is inside already.
     *
     * @throws ConcurrentModificationException when another thread is inside
     */
    public boolean enter() {
        if (!CHECKED) {
            return false;
        }
        Thread me = Thread.currentThread();
        Thread was = user.compareAndExchange(null, me);
        if (was == null) {
            return true;
        }
        if (was == me) {
            return false;
        }
        throw new ConcurrentModificationException(what + " is single-consumer, but " + me.getName()
                + " called it while " + was.getName() + " was inside a call");
    }

    /** Ends a call that {@link #enter} entered. */
    public void leave(boolean entered) {
        if (entered) {
            user.set(null);
        }
    }

    /**
     * Throws when a thread other than the caller is inside a call (a close during another thread's
     * poll); never when unchecked.
     *
     * @throws ConcurrentModificationException when another thread is inside
     */
    public void idleOrMine() {
        if (CHECKED) {
            Thread u = user.get();
            if (u != null && u != Thread.currentThread()) {
                throw new ConcurrentModificationException(what + " is single-consumer, but "
                        + Thread.currentThread().getName() + " closed it while " + u.getName() + " was polling it");
            }
        }
    }
}
