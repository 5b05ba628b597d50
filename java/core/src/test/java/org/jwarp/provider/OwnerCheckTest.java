package org.jwarp.provider;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ConcurrentModificationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The check of a single-consumer CQ's or QP's contract under {@code -ea} (the test JVM runs with
 * assertions, so it is on): overlapping calls from two threads are refused with a typed exception,
 * calls handed from one thread to another in order are not.
 */
class OwnerCheckTest {
    @Test
    @DisplayName("a second thread inside a single-consumer object's call is refused; an ordered handover is not")
    void overlappingCallsRefusedHandoverAllowed() throws Exception {
        assertTrue(OwnerCheck.CHECKED, "the test JVM runs with assertions enabled");
        OwnerCheck check = new OwnerCheck("completion queue");
        boolean entered = check.enter();
        assertTrue(entered);
        assertFalse(check.enter(), "the owner's nested call (a poll mapping its QP's completions) enters nothing");
        assertDoesNotThrow(check::idleOrMine, "the owner closes during its own call");
        ConcurrentModificationException e = CompletableFuture.supplyAsync(() -> {
            try {
                check.enter();
                return null;
            } catch (ConcurrentModificationException x) {
                return x;
            }
        }).get(10, TimeUnit.SECONDS);
        assertTrue(e != null && e.getMessage().contains("single-consumer"), "the second thread's call: " + e);
        Throwable closing = CompletableFuture.supplyAsync(() -> {
            try {
                check.idleOrMine();
                return null;
            } catch (ConcurrentModificationException x) {
                return x;
            }
        }).get(10, TimeUnit.SECONDS);
        assertTrue(closing instanceof ConcurrentModificationException, "a close from another thread during a call");
        check.leave(entered);

        CountDownLatch done = new CountDownLatch(1);
        Thread next = new Thread(() -> {
            boolean in = check.enter();
            check.leave(in);
            done.countDown();
        });
        next.start(); // the thread start orders it after this thread's calls
        assertTrue(done.await(10, TimeUnit.SECONDS));
        next.join();
        assertDoesNotThrow(() -> check.leave(check.enter()), "the first thread again, after the join");
        assertThrows(ConcurrentModificationException.class, () -> {
            boolean in = check.enter();
            try {
                CompletableFuture.runAsync(() -> check.leave(check.enter())).join();
            } catch (java.util.concurrent.CompletionException x) {
                throw (RuntimeException) x.getCause();
            } finally {
                check.leave(in);
            }
        });
    }

    @Test
    @DisplayName("a close from another thread while the owner enters, waits in or leaves an await is allowed; "
            + "during its poll it is not")
    void closeDuringTheOwnersAwaitAllowedFromItsEntryToItsExit() throws Exception {
        assertTrue(OwnerCheck.CHECKED, "the test JVM runs with assertions enabled");
        OwnerCheck check = new OwnerCheck("completion queue");
        Semaphore reached = new Semaphore(0);
        Semaphore go = new Semaphore(0);
        Thread[] owner = new Thread[1];
        // holds the owner each time it is recorded inside: right after entering, right before leaving
        check.onInside = () -> {
            if (Thread.currentThread() == owner[0]) {
                reached.release();
                go.acquireUninterruptibly();
            }
        };
        CompletableFuture<Void> awaiting = new CompletableFuture<>();
        owner[0] = new Thread(() -> {
            try {
                boolean entered = check.enterAwait();
                assertTrue(entered);
                check.leave(check.enter()); // a poll inside its own await (a shared channel's) keeps it an await
                check.leave(entered);
                check.leave(check.enter()); // then a poll of its own
                awaiting.complete(null);
            } catch (Throwable t) {
                awaiting.completeExceptionally(t);
            }
        }, "owner");
        owner[0].setDaemon(true);
        owner[0].start(); // after owner[0] is set: the hook holds only that thread
        assertTrue(reached.tryAcquire(10, TimeUnit.SECONDS), "the owner entering its await");
        assertDoesNotThrow(check::idleOrMine, "a close while the owner has just entered its await");
        assertThrows(ConcurrentModificationException.class, check::enter, "a poll from another thread during the await");
        go.release();
        assertTrue(reached.tryAcquire(10, TimeUnit.SECONDS), "the owner leaving its await");
        assertDoesNotThrow(check::idleOrMine, "a close while the owner leaves its await");
        go.release();
        assertTrue(reached.tryAcquire(10, TimeUnit.SECONDS), "the owner entering its poll");
        ConcurrentModificationException e = assertThrows(ConcurrentModificationException.class, check::idleOrMine,
                "a close during the owner's poll, after its await");
        assertTrue(e.getMessage().contains("closed it while owner"), e.getMessage());
        go.release();
        assertTrue(reached.tryAcquire(10, TimeUnit.SECONDS), "the owner leaving its poll");
        go.release();
        awaiting.get(10, TimeUnit.SECONDS);
        assertEquals(0, reached.availablePermits());
    }
}
