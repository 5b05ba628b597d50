package org.jwarp.cli;

import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WorkCompletion;

/**
 * The loop of ib_write_bw and ib_read_bw (RFC 5040 §5.1 RDMA Write, §5.2 RDMA Read), shared by
 * {@code jwarp client} and the benchmarks so that both measure the same thing: {@code n}
 * operations, at most {@code window} of them posted and not yet retired, posted {@code postList}
 * to a call; operation {@code k} (0-based) is signaled when {@code k % signalEvery == signalEvery - 1}
 * or it is the last (perftest's CQ moderation); a completion retires its operation and every one
 * posted before it (RFC 5040 §5: a send queue completes in order). Receive completions reaped on
 * the way are not this loop's and are skipped. Allocates nothing.
 */
public final class WindowedPosts {
    /** Posts operations {@code from .. from + count - 1} in one post call, each signaled as {@link #signaled} says. */
    @FunctionalInterface
    public interface Post {
        void post(int from, int count) throws RdmaException;
    }

    /**
     * Waits for completions of this side's send queue into {@code wcs}; returns how many (0: none
     * yet, the loop asks again). Throws on a failed completion or when too long passed.
     */
    @FunctionalInterface
    public interface Reap {
        int reap(WorkCompletion[] wcs) throws RdmaException, InterruptedException;
    }

    private WindowedPosts() {
    }

    /** The default signaling interval for a window: a quarter of it (perftest's --cq-mod for our windows). */
    public static int defaultSignalEvery(int window) {
        return Math.max(1, window / 4);
    }

    /** Bytes a bandwidth warm-up moves at most, whatever its operation count. */
    public static final long WARMUP_BYTES_CAP = 1L << 30;

    /**
     * Operations of a bandwidth warm-up by count: {@code warmup}, but no more than
     * {@link #WARMUP_BYTES_CAP} bytes of {@code size}; run as passes of an eighth of the measured
     * count ({@code jwarp client --warmup} and {@code BenchMain --warmup-iters} alike).
     */
    public static int warmupOps(int warmup, int size) {
        return (int) Math.min(warmup, Math.max(1, WARMUP_BYTES_CAP / Math.max(1, size)));
    }

    /** Whether operation {@code k} of {@code n} is signaled at interval {@code every}. */
    public static boolean signaled(int k, int n, int every) {
        return k % every == every - 1 || k == n - 1;
    }

    /**
     * Runs the loop; WR ids are {@code base + k}, and {@code post} signals operation {@code k} when
     * {@link #signaled}{@code (k, n, every)}. Returns when all {@code n} are retired.
     *
     * @param every the signaling interval, at most the window (else a full window could hold no
     *              signaled operation and nothing would ever retire)
     * @param wcs   the completion array {@code reap} fills (its length bounds one reap)
     */
    public static void run(int n, int window, int every, int postList, long base, Post post, Reap reap,
                           WorkCompletion[] wcs) throws RdmaException, InterruptedException {
        if (n < 1 || window < 1 || postList < 1 || every < 1 || every > window) {
            throw new IllegalArgumentException("n, window and postList must be >= 1, the signaling interval 1.."
                    + "window; got n " + n + ", window " + window + ", every " + every + ", postList " + postList);
        }
        int posted = 0;
        int retired = 0;
        while (retired < n) {
            while (posted < n && posted - retired < window) {
                int k = Math.min(postList, Math.min(n - posted, window - (posted - retired)));
                post.post(posted, k);
                posted += k;
            }
            int got = reap.reap(wcs);
            for (int i = 0; i < got; i++) {
                WorkCompletion wc = wcs[i];
                if (wc.opcode == WcOpcode.RECV) {
                    continue;
                }
                long done = wc.wrId - base + 1;
                if (done > retired && done <= posted) {
                    retired = (int) done;
                }
            }
        }
    }
}
