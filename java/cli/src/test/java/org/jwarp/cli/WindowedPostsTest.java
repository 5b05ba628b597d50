package org.jwarp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The bandwidth loop {@code jwarp client} and the benchmarks share: a window of operations
 * outstanding, every n-th signaled, a completion retiring its operation and all before it (RFC 5040
 * §5: a send queue completes in order), over a send queue simulated here.
 */
class WindowedPostsTest {

    /**
     * A send queue that completes the signaled operations it holds, one per reap, in order, and
     * records the WR ids posted signaled.
     */
    private static final class Queue {
        final long base;
        final int n;
        final int every;
        final int window;
        final ArrayDeque<Long> signaledIds = new ArrayDeque<>();
        final List<Long> signaledLog = new ArrayList<>();
        final List<Integer> postSizes = new ArrayList<>();
        int posted;
        int retired;
        int maxOutstanding;
        boolean recvFirst = true;

        Queue(long base, int n, int every, int window) {
            this.window = window;
            this.base = base;
            this.n = n;
            this.every = every;
        }

        void post(int from, int count) {
            assertEquals(posted, from, "operations are posted in order, none twice");
            assertTrue(count >= 1, "a post call carries at least one operation");
            assertTrue(posted + count - retired <= window, "never more than the window outstanding");
            for (int k = from; k < from + count; k++) {
                if (WindowedPosts.signaled(k, n, every)) {
                    signaledIds.add(base + k);
                    signaledLog.add(base + k);
                }
            }
            posted += count;
            postSizes.add(count);
            maxOutstanding = Math.max(maxOutstanding, posted - retired);
        }

        int reap(WorkCompletion[] wcs) {
            int i = 0;
            if (recvFirst) {
                // a receive completion on the shared CQ: not this loop's, must not retire anything
                wcs[i].wrId = base + n + 100;
                wcs[i].opcode = WcOpcode.RECV;
                wcs[i].status = WcStatus.SUCCESS;
                i++;
                recvFirst = false;
            }
            Long id = signaledIds.poll();
            if (id != null) {
                wcs[i].wrId = id;
                wcs[i].opcode = WcOpcode.RDMA_WRITE;
                wcs[i].status = WcStatus.SUCCESS;
                retired = (int) (id - base + 1);
                i++;
            } else if (i == 0) {
                // the loop reaps only with nothing more to post: no signaled operation outstanding
                // means no completion will ever come (a real queue would leave the loop waiting)
                throw new AssertionError("no signaled operation outstanding: " + (posted - retired)
                        + " posted, none will complete; signaled so far " + signaledLog);
            }
            return i;
        }
    }

    /** Perftest's CQ moderation stated on its own: WR ids of every {@code every}-th operation and of the last. */
    private static List<Long> expectedSignaled(long base, int n, int every) {
        List<Long> ids = new ArrayList<>();
        for (int k = 1; k <= n; k++) {
            if (k % every == 0 || k == n) {
                ids.add(base + k - 1);
            }
        }
        return ids;
    }

    private static WorkCompletion[] wcs() {
        WorkCompletion[] a = new WorkCompletion[4];
        for (int i = 0; i < a.length; i++) {
            a[i] = new WorkCompletion();
        }
        return a;
    }

    @Test
    @DisplayName("window 32, every 8th signaled: never more than 32 outstanding, all 1,000 retired, the last signaled")
    void windowBoundsOutstandingAndCompletionsRetireInOrder_5040_5() throws Exception {
        int n = 1000;
        int window = 32;
        int every = WindowedPosts.defaultSignalEvery(window);
        assertEquals(8, every, "a quarter of the window, as the benchmarks' default");
        Queue q = new Queue(77, n, every, window);
        WindowedPosts.run(n, window, every, 1, 77, q::post, q::reap, wcs());
        assertEquals(n, q.posted);
        assertEquals(n, q.retired);
        assertEquals(window, q.maxOutstanding, "the window fills and is never exceeded");
        assertEquals(expectedSignaled(77, n, every), q.signaledLog, "every 8th posted signaled, no other");
        assertEquals(77L + n - 1, (long) q.signaledLog.get(q.signaledLog.size() - 1), "the last posted is signaled");
    }

    @Test
    @DisplayName("a signaling interval above the window is refused: a full window would hold no signaled operation")
    void intervalAboveWindowIsRefused() {
        Queue q = new Queue(0, 13, 8, 4);
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> WindowedPosts.run(13, 4, 8, 1, 0, q::post, q::reap, wcs()));
    }

    @Test
    @DisplayName("a count that is no multiple of the interval still ends: its last operation is signaled")
    void lastOperationIsSignaled() throws Exception {
        int n = 13;
        Queue q = new Queue(0, n, 4, 4);
        WindowedPosts.run(n, 4, 4, 3, 0, q::post, q::reap, wcs());
        assertEquals(n, q.retired);
        assertEquals(List.of(3L, 7L, 11L, 12L), q.signaledLog, "every 4th posted signaled, and the last");
        for (int size : q.postSizes) {
            assertTrue(size <= 3, "a post call carries at most the post list");
        }
        assertTrue(q.maxOutstanding <= 4);
    }
}
