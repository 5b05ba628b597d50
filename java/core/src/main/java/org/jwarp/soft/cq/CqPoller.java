package org.jwarp.soft.cq;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.jwarp.soft.loop.Reactor;

/**
 * Receive polling of one {@link SoftCompletionQueue} (the CQ side of siw_qp_rx run on the waiting
 * thread): a thread waiting on the CQ reads the sockets of the CQ's streams itself, driven by the
 * readiness of the CQ's own selector, so it reads only the sockets that have data (one
 * {@code read()} per message, no empty reads, no scan of idle streams however many QPs share the
 * CQ). See {@link SoftCompletionQueue} for the scheme and its guarantees.
 *
 * <p>Ownership: one thread at a time leads (by try-lock). The leader claims the CQ's streams from
 * their reactor (OP_READ off there, {@link PolledStream#claim}); the claim is sticky across
 * waits, and the reactor takes the streams back only when this poller has been away (neither
 * leading nor polling) for the lease ({@link #revokeIfStale}): one check per poller per reactor
 * turn, not one per stream. The next leader claims them all again, not only those it happens to
 * read: a stream left with its reactor costs a reactor wake-up and a wake-up of the waiting
 * thread per message. A thread about to block elsewhere (on a completion channel) hands the
 * streams back at once ({@link #handBack}), and an empty {@link SoftCompletionQueue#poll} claims
 * them only once its thread has kept polling ({@link #pollProgress}): a thread that polls, arms
 * and sleeps leaves them with the reactor.
 */
public final class CqPoller implements Reactor.Polled {
    private static final Logger LOG = LoggerFactory.getLogger(CqPoller.class);

    private final SoftCompletionQueue cq;
    private final CqDevice device;
    /** Held by the thread that reads the streams' sockets. */
    final ReentrantLock leader = new ReentrantLock();
    /** The leader's receive buffer, allocated at the first poll; guarded by {@link #leader}. */
    private ByteBuffer rx;
    /** This CQ's selector over the streams' sockets; created at the first poll. */
    private volatile Selector selector;
    /** Streams registered with {@link #selector} (the array last keyed); guarded by {@link #leader}. */
    private PolledStream[] keyed;
    /** Every stream of {@link #keyed} is claimed by this poller; guarded by {@link #leader}. */
    private boolean claimedAll;
    /** A claim found a stream's lock busy: the leader retries before it blocks; guarded by {@link #leader}. */
    private boolean claimBusy;
    /** True while the leader blocks in {@link #selector}: a completion from elsewhere wakes it. */
    volatile boolean blocked;
    /** True while a thread leads or polls: the lease does not run. */
    private volatile boolean present;
    /** When the last leader or poller left ({@link System#nanoTime()}). */
    private volatile long leftAt;
    /** Set by {@link #reader} when a stream went back to its reactor; guarded by {@link #leader}. */
    private boolean lost;
    /** Set by a reactor that took streams back when the lease ran out ({@link #revokeIfStale}). */
    private volatile boolean revoked;
    /** Set once by {@link #close}; written under this object's monitor. */
    private volatile boolean closed;
    /** Streams this poller holds (claimed, not yet handed back). */
    final AtomicInteger held = new AtomicInteger();

    /** A stream claimed for this poller (its claim succeeded). */
    public void holdOne() {
        held.incrementAndGet();
    }

    /** A stream this poller held went back to its reactor. */
    public void releaseOne() {
        held.decrementAndGet();
    }

    private final Consumer<SelectionKey> reader = this::readReady;
    /** Empty polls in a row before {@link #pollProgress} claims streams (a poll, arm, poll, sleep makes two). */
    static final int CLAIM_POLLS = 64;
    /** Empty polls since the last completion taken, and when the first of them ran; written racily. */
    private int emptyPolls;
    private long emptySince;
    private final long spinNanos;

    CqPoller(SoftCompletionQueue cq, CqDevice device, long spinNanos) {
        this.cq = cq;
        this.device = device;
        this.spinNanos = spinNanos;
    }

    /**
     * An empty {@link SoftCompletionQueue#poll}: progress as {@link #progress}, but streams still
     * with their reactor are claimed only after {@link #CLAIM_POLLS} empty polls over at least the
     * spin time (a spinning thread), so a thread that polls once before it sleeps on a channel
     * does not take them from the reactor. Allocation-free.
     */
    void pollProgress(PolledStream[] ss) {
        if (held.get() == 0) {
            int n = emptyPolls;
            long now = System.nanoTime();
            if (n == 0) {
                emptySince = now;
            }
            emptyPolls = n + 1;
            if (n < CLAIM_POLLS || now - emptySince < spinNanos) {
                return;
            }
        }
        progress(ss);
    }

    /** A poll took a completion: the next claim needs a new run of empty polls. */
    void tookCompletion() {
        if (emptyPolls != 0) {
            emptyPolls = 0;
        }
    }

    /**
     * A thread is about to block outside this CQ (a completion channel): if nobody leads or polls
     * now, the streams go back to their reactors at once instead of after the lease (their data
     * would otherwise wait for the lease and the reactor's next turn). The reactor's selector sees
     * data that arrived meanwhile (level-triggered readiness, OP_READ restored before its wake-up).
     */
    void handBack() {
        if (held.get() == 0 || !leader.tryLock()) {
            return;
        }
        try {
            emptyPolls = 0;
            release();
            leftAt = System.nanoTime();
        } finally {
            leader.unlock();
        }
    }

    private void readReady(SelectionKey k) {
        if (((PolledStream) k.attachment()).pollReceive(rx, this) == PolledStream.POLL_NO) {
            lost = true;
        }
    }

    /**
     * A non-blocking pass from {@link SoftCompletionQueue#poll} (spin mode): claims the streams
     * if needed and reads those the selector reports readable (a single stream: its socket,
     * directly, as a spinning TCP reader does). Allocation-free.
     */
    void progress(PolledStream[] ss) {
        if (!leader.tryLock()) {
            return;
        }
        try {
            Selector sel = prepare(ss);
            if (sel == null) {
                return;
            }
            readNow(sel); // TCP's busy-poll pattern: one non-blocking read per spin, no readiness call first
        } catch (IOException | ClosedSelectorException e) {
            LOG.debug("poll selector unusable", e);
        } finally {
            leftAt = System.nanoTime();
            leader.unlock();
        }
    }

    /**
     * The leader's loop, {@link #leader} held: blocks in this CQ's selector (for {@code spinNanos}
     * first spinning, then for up to {@code yields} turns yielding, each turn one non-blocking
     * read pass) and reads the readable streams, until a
     * completion is in the ring (streams kept: the thread usually comes back within
     * microseconds; should another thread drain that completion first, the caller leads again
     * rather than park holding them, {@link SoftCompletionQueue#await}), the deadline, or the
     * selector becomes unusable (streams handed back; the caller then parks on the monitor, where
     * every completion notifies it).
     */
    void lead(long start, long deadline, long spinNanos, int yields) throws InterruptedException {
        long spinEnd = start + Math.min(spinNanos, Math.max(0, deadline - start));
        int yieldsLeft = yields;
        boolean keep = false;
        present = true;
        try {
            while (true) {
                Selector sel;
                try {
                    sel = prepare(cq.streams());
                } catch (ClosedSelectorException e) {
                    return;
                }
                if (sel == null) {
                    return;
                }
                if (cq.hasCompletion() || cq.isClosed()) {
                    keep = true;
                    return;
                }
                long now = System.nanoTime();
                if (now - deadline >= 0) {
                    return;
                }
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                try {
                    if (now - spinEnd < 0 || (!claimedAll && claimBusy)) {
                        readNow(sel); // a completion from another thread may land as well
                        Thread.onSpinWait();
                    } else if (yieldsLeft > 0) {
                        yieldsLeft--;
                        readNow(sel);
                        if (!cq.hasCompletion()) {
                            Thread.yield();
                        }
                    } else {
                        blocked = true; // before the last look: complete() wakes the selector after it
                        if (!cq.hasCompletion() && !cq.isClosed()) {
                            sel.select(reader, Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - now)));
                        }
                    }
                } catch (IOException | ClosedSelectorException e) {
                    return;
                } finally {
                    blocked = false;
                }
            }
        } finally {
            // Keep the streams only with a completion in hand (the caller comes back soon) and no
            // thread parked on the monitor (it would wait for the lease to run out).
            if (!keep || cq.hasWaiters()) {
                release();
            }
            leftAt = System.nanoTime();
            present = false;
        }
    }

    /**
     * Leader, spin or yield phase: one non-blocking pass over the readable streams (a single
     * stream: its socket directly, as a spinning TCP reader does).
     */
    private void readNow(Selector sel) throws IOException {
        PolledStream[] ss = keyed;
        if (ss.length == 1) {
            if (ss[0].pollReceive(rx, this) == PolledStream.POLL_NO) {
                lost = true;
            }
        } else {
            sel.selectNow(reader);
        }
    }

    /**
     * Leader: the selector with every stream of {@code ss} registered, and the streams claimed
     * (O(n) only when the set changed or a stream went back to its reactor). Null if unusable.
     */
    private Selector prepare(PolledStream[] ss) {
        Selector sel = selector;
        if (sel == null) {
            synchronized (this) {
                if (closed) {
                    return null;
                }
                try {
                    sel = selector = Selector.open();
                } catch (IOException e) {
                    return null;
                }
            }
        }
        if (closed) {
            return null;
        }
        if (rx == null) {
            rx = device != null ? device.buffers().acquire(Reactor.RX_BUFFER) : ByteBuffer.allocateDirect(Reactor.RX_BUFFER);
        }
        if (keyed != ss) {
            for (PolledStream s : ss) {
                SocketChannel ch = s.channel();
                if (ch != null && ch.keyFor(sel) == null) {
                    try {
                        ch.register(sel, SelectionKey.OP_READ, s);
                    } catch (ClosedChannelException | RuntimeException e) {
                        // closing: the reactor tears it down; its key went with the channel
                    }
                }
            }
            keyed = ss; // keys of streams gone are cancelled by their channel's close
            claimedAll = false;
        }
        if (lost || revoked) {
            lost = false;
            revoked = false; // before the claims: a revocation after them sets it again
            claimedAll = false;
        }
        claimBusy = false;
        if (!claimedAll) {
            boolean all = true;
            boolean busy = false;
            for (PolledStream s : ss) {
                int r = s.claim(this);
                all &= r == PolledStream.POLL_HELD;
                busy |= r == PolledStream.POLL_BUSY;
            }
            claimedAll = all;
            claimBusy = busy;
        }
        return sel;
    }

    /** Hands every stream this poller holds back to its reactor. */
    void release() {
        claimedAll = false;
        for (PolledStream s : cq.streams()) {
            s.releasePoll(this);
        }
    }

    /**
     * Reactor thread: if no thread has led or polled for {@code leaseNanos}, hands this poller's
     * streams on {@code r} back to it. True when this poller holds none of {@code r}'s streams now.
     */
    @Override
    public boolean revokeIfStale(Reactor r, long now, long leaseNanos) {
        if (held.get() == 0 || present || now - leftAt < leaseNanos) {
            return false;
        }
        boolean none = true;
        for (PolledStream s : cq.streams()) {
            if (s.reactor() == r) {
                none &= s.revokePoll(this);
            }
        }
        revoked = true; // after the streams went back: the next leader claims them all again
        return none;
    }

    /** Racy snapshot for stall reports. */
    String debugState() {
        return "poller held=" + held.get() + (leader.isLocked() ? " led" : "") + (blocked ? " blocked" : "")
                + (present ? " present" : "") + " away " + (System.nanoTime() - leftAt) / 1_000_000 + " ms"
                + (claimedAll ? " claimedAll" : "") + (claimBusy ? " claimBusy" : "") + " emptyPolls=" + emptyPolls;
    }

    /** The CQ closed: wakes and stops a blocked leader, hands the streams back, frees the buffer. */
    void close() {
        Selector sel;
        synchronized (this) {
            closed = true;
            sel = selector;
        }
        if (sel != null) {
            try {
                sel.close(); // wakes a leader blocked in it first
            } catch (IOException e) {
                LOG.debug("poll selector close failed", e);
            }
        }
        leader.lock();
        try {
            release();
            if (device != null && rx != null) {
                device.buffers().release(rx);
            }
            rx = null;
        } finally {
            leader.unlock();
        }
    }

    /** A completion arrived from another thread: wakes a leader blocked in the selector. */
    void wakeIfBlocked() {
        if (blocked && !leader.isHeldByCurrentThread()) { // the leader's own reads complete while it selects
            Selector sel = selector;
            if (sel != null) {
                sel.wakeup();
            }
        }
    }
}
