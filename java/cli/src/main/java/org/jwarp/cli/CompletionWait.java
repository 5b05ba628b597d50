package org.jwarp.cli;

import java.util.concurrent.TimeUnit;
import org.jwarp.verbs.CompletionChannel;
import org.jwarp.verbs.CompletionQueue;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.WorkCompletion;

/**
 * How the {@code client}/{@code server} workload waits for completions: the CQ's own
 * {@link CompletionQueue#await}, or with {@code --events} the completion channel's rule (RFC 5040
 * §5.5 completions): poll, arm ({@code ibv_req_notify_cq}), poll again, then sleep on the channel
 * until an event or the timeout, so no completion is lost between the arming and the sleep.
 * Allocates nothing.
 */
final class CompletionWait {
    private CompletionWait() {
    }

    /** Up to {@code max} completions into {@code wcs}, waiting at most {@code ms}; 0 on timeout. */
    static int await(CompletionQueue cq, CompletionChannel channel, WorkCompletion[] wcs, int max, long ms)
            throws RdmaException, InterruptedException {
        if (channel == null) {
            return cq.await(wcs, max, ms, TimeUnit.MILLISECONDS);
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
        while (true) {
            int n = cq.poll(wcs, max);
            if (n > 0) {
                return n;
            }
            cq.requestNotify(false);
            n = cq.poll(wcs, max); // a completion that raced the arming raises no event
            if (n > 0) {
                return n;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return 0;
            }
            channel.next(left, TimeUnit.NANOSECONDS); // this CQ's event, a stale one, or the timeout: poll again
        }
    }
}
