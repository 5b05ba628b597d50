package org.jwarp.verbs;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs a blocking connection setup ({@link ConnectionManager#connect},
 * {@link ConnectionRequest#accept}) on a setup thread of its own and reports it through a
 * {@link CompletableFuture}. The future completes on that thread, never on a provider's I/O thread
 * (a soft reactor, the DiSNI CM dispatcher), so dependent stages may block. {@code cancel(true or
 * false)} interrupts the setup: both providers answer an interrupt by releasing the QP and the
 * socket / rdma_cm id (the blocking calls' cleanup path); a connection that was established anyway
 * in the instant of the cancel is closed, never handed out.
 *
 * <p>Thread-safe. A thread per setup: setups are rare next to data transfer, and a setup may block
 * for its whole timeout.
 */
final class AsyncSetup {
    private static final AtomicInteger SEQ = new AtomicInteger();

    private AsyncSetup() {
    }

    /** The blocking call. */
    interface Call {
        Connection run() throws RdmaException, InterruptedException;
    }

    static CompletableFuture<Connection> start(String what, Call call) {
        SetupFuture f = new SetupFuture();
        Thread t = new Thread(() -> {
            Connection c = null;
            try {
                c = call.run();
            } catch (Throwable e) {
                f.completeExceptionally(e instanceof InterruptedException && f.isCancelled()
                        ? new RdmaException(what + ": cancelled") : e);
                return;
            } finally {
                Thread.interrupted(); // a cancel's interrupt must not leak into dependent stages
            }
            if (!f.complete(c)) {
                c.close(); // cancelled meanwhile: nobody will ever see it
            }
        }, "jwarp-setup-" + SEQ.incrementAndGet());
        t.setDaemon(true);
        f.worker = t;
        t.start();
        return f;
    }

    /** A future whose cancel interrupts the setup thread. */
    static final class SetupFuture extends CompletableFuture<Connection> {
        volatile Thread worker;

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            boolean done = super.cancel(mayInterruptIfRunning);
            Thread t = worker;
            if (done && t != null) {
                t.interrupt();
            }
            return done;
        }
    }
}
