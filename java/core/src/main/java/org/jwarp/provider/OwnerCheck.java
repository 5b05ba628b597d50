package org.jwarp.provider;

import java.util.ConcurrentModificationException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The check of a single-consumer CQ's or QP's contract (one thread at a time; see
 * {@code CompletionQueue}, "Single-consumer mode"), shared by the providers that drop their locks
 * in that mode, made only when Java assertions are enabled for this package: {@link #enter}
 * records the calling thread for the length of a call, and the second of two overlapping calls
 * from different threads throws {@link ConcurrentModificationException}. Without assertions {@link #CHECKED} is a false constant,
 * the JIT drops every call, and the object holds nothing. A CQ's owner enters its await by
 * {@link #enterAwait}: a close from another thread is allowed while it waits.
 */
public final class OwnerCheck {
    /** Whether Java assertions are enabled for this package (then the check runs). */
    public static final boolean CHECKED = OwnerCheck.class.desiredAssertionStatus();

    private final AtomicReference<Thread> user = CHECKED ? new AtomicReference<>() : null;
    private final String what;
    /**
     * The thread whose call recorded in {@link #user} is an await: set by that thread before it is
     * recorded, left set when it leaves, cleared by its next plain call before it is recorded, so
     * {@link #idleOrMine} reads it right for whoever {@code user} holds while that thread enters,
     * waits and leaves.
     */
    private volatile Thread awaiter;
    /** Runs on the calling thread while it is recorded inside: after enter records it, before leave clears it (tests). */
    volatile Runnable onInside;

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
        return CHECKED && enter(false);
    }

    /**
     * {@link #enter} for a CQ's await, during which a close from another thread is allowed (it
     * ends the wait): marked so before the thread is recorded, so no such close sees the owner
     * inside and not awaiting.
     *
     * @throws ConcurrentModificationException when another thread is inside
     */
    public boolean enterAwait() {
        return CHECKED && enter(true);
    }

    private boolean enter(boolean await) {
        Thread me = Thread.currentThread();
        Thread was = user.get();
        if (was == me) {
            return false; // a nested call keeps the outer call's kind
        }
        if (was != null) {
            throw refused(me, was);
        }
        if (await) {
            awaiter = me;
        } else if (awaiter == me) {
            awaiter = null;
        }
        was = user.compareAndExchange(null, me);
        if (was == null) {
            insideHook();
            return true;
        }
        throw refused(me, was);
    }

    private ConcurrentModificationException refused(Thread me, Thread was) {
        return new ConcurrentModificationException(what + " is single-consumer, but " + me.getName()
                + " called it while " + was.getName() + " was inside a call");
    }

    private void insideHook() {
        Runnable h = onInside;
        if (h != null) {
            h.run();
        }
    }

    /** Ends a call that {@link #enter} or {@link #enterAwait} entered. */
    public void leave(boolean entered) {
        if (entered) {
            insideHook();
            user.set(null);
        }
    }

    /**
     * Throws when a thread other than the caller is inside a call other than an await (a close
     * during another thread's poll); never when unchecked.
     *
     * @throws ConcurrentModificationException when another thread is inside
     */
    public void idleOrMine() {
        if (CHECKED) {
            Thread u = user.get();
            if (u != null && u != Thread.currentThread() && u != awaiter) {
                throw new ConcurrentModificationException(what + " is single-consumer, but "
                        + Thread.currentThread().getName() + " closed it while " + u.getName() + " was polling it");
            }
        }
    }
}
