package org.jwarp.ffm.impl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.jwarp.ground.SnapshotArrays;
import org.jwarp.provider.OwnerCheck;
import org.jwarp.provider.StepHandoff;
import org.jwarp.verbs.CompletionChannel;
import org.jwarp.verbs.CompletionQueue;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A completion queue ({@code ibv_create_cq}). {@link #poll} is one downcall to the context's
 * {@code ops.poll_cq} into a preallocated array of {@code struct ibv_wc}, decoded into the
 * caller's {@link WorkCompletion}s: nothing is allocated per poll.
 *
 * <p>Thread-safe: polls and the steps of {@link #await} are serialized on this object. A
 * single-consumer CQ ({@link #single}) polls and spins without the monitor, and its QPs map
 * completions without theirs (one owner thread is the application's promise, see
 * {@link CompletionQueue}, checked under {@code -ea} by {@link OwnerCheck}); await keeps its
 * per-step monitor, so a close from another thread still ends a wait. QPs come and go under a
 * lock of their own ({@link #qpLock}), never behind an await step.
 */
public final class FfmCq implements CompletionQueue {
    private static final Logger LOG = LoggerFactory.getLogger(FfmCq.class);
    private static final FfmQp[] NO_QPS = new FfmQp[0];
    private static final FfmSrq[] NO_SRQS = new FfmSrq[0];
    /** Completions fetched per downcall at most. */
    static final int BATCH = 64;
    private static final long WC_SIZE = IbvLayouts.WC.byteSize();
    /** The longest nap of {@link #await} between polls on a CQ of a consumer's channel. */
    private static final long AWAIT_MAX_NAP_NANOS = TimeUnit.MICROSECONDS.toNanos(200);
    /** The longest one-downcall wait step of {@link #await}: interrupts and other pollers get in this often. */
    private static final long AWAIT_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final FfmContext device;
    final MemorySegment cq;
    private final MemorySegment pollCq;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment wcs = arena.allocate(IbvLayouts.WC, BATCH);
    private final int capacity;
    private volatile boolean open = true;
    /** Events of a channel acknowledged together ({@code ibv_ack_cq_events} takes the CQ's lock). */
    static final int CHANNEL_ACK_BATCH = 64;
    /** The consumer's channel this CQ was created on, or null. */
    private final FfmChannel channel;
    /** The sleep of {@link #await} on the CQ's own channel; null on a CQ of a consumer's channel. */
    private final FfmCqWait own;
    /**
     * Kernel siw never raises a solicited-only event for a receive ({@code siw_rqe_complete}
     * notifies without the Solicited Event flag): there a solicited-only arm would sleep through a
     * Send with SE, so the arm covers every completion (a spurious wake-up is harmless).
     */
    private final boolean solicitedUnreported;
    /**
     * Serializes {@link #attach} and {@link #closed}. Not the monitor: a one-downcall await holds
     * that for whole steps of up to {@link #AWAIT_SLICE_NANOS}, and QP setup and teardown must not
     * wait for it. Dispatch reads {@link #qps} without it.
     */
    private final Object qpLock = new Object();
    /**
     * With the one-downcall await: the threads about to take the monitor for a poll, a spin or an
     * await step. That await holds the monitor for whole steps and would take it again at once
     * after an empty one (a monitor is not fair), so between steps it lets them in first.
     */
    private final StepHandoff handoff = new StepHandoff();
    /** Whether {@link #await} is the one downcall (then polls count themselves in {@link #handoff}). */
    private final boolean oneCall;
    /** Runs in each one-downcall {@link #await} step under the monitor, before the wait (tests hold a step with it). */
    volatile Runnable stepHook;
    /**
     * Guards {@link #unacked} and {@link #acksFlushed}. Not the monitor: close() holds that while
     * {@code ibv_destroy_cq} waits for a channel thread's acknowledgement, which must not block.
     */
    private final Object ackLock = new Object();
    /** Events the channel took for this CQ and not yet acknowledged. */
    private int unacked;
    /** Set by close() once it acknowledged the count: an event taken later is acknowledged at once. */
    private boolean acksFlushed;
    /** Closed QPs kept at most while their flushed completions are still to come (the oldest go first). */
    static final int DRAINING_MAX = 16;

    /**
     * The QPs completing here, looked up by qp_num per completion (copy on write: few QPs, no
     * allocation on poll). A closed QP stays while WRs of it are outstanding: the device flushes
     * them after the QP left (RFC 5040 §8.2), and their completions must still map back.
     */
    private volatile FfmQp[] qps = NO_QPS;
    /**
     * The shared receive queues of QPs attached here (copy on write). A receive into an SRQ
     * belongs to the SRQ, not to the QP's rings, so a closed QP never stays for it: a completion
     * whose QP left goes to the SRQ that owns its token, which retires the slot and gives back the
     * caller's wrId (else the buffer's place in the SRQ would be lost for good).
     */
    private volatile FfmSrq[] srqs = NO_SRQS;
    /** Single-consumer mode: poll and spin take no monitor (one thread at a time, the contract). */
    private final boolean single;
    private final OwnerCheck owner = new OwnerCheck("completion queue");

    private FfmCq(FfmContext device, MemorySegment cq, int capacity, FfmChannel channel, FfmCqWait own, boolean single) {
        this.device = device;
        this.single = single;
        this.channel = channel;
        this.own = own;
        this.oneCall = own != null && own.oneCall() != null;
        this.solicitedUnreported = device.name.startsWith("siw");
        this.cq = cq;
        this.pollCq = device.pollCq;
        this.capacity = capacity;
    }

    static FfmCq create(FfmContext device, int entries) throws RdmaException {
        return create(device, entries, null, false);
    }

    /**
     * A CQ whose events go to {@code channel}; without one, to a channel of its own that only
     * {@link #await} sleeps on ({@link #channel()} is null then, and {@link #requestNotify} refused).
     */
    static FfmCq create(FfmContext device, int entries, FfmChannel channel, boolean single) throws RdmaException {
        FfmCqWait own = channel == null ? FfmCqWait.create(device) : null;
        try {
            return create(device, entries, channel, own, single);
        } catch (RdmaException | RuntimeException | Error e) {
            if (own != null) {
                own.destroy();
            }
            throw e;
        }
    }

    private static FfmCq create(FfmContext device, int entries, FfmChannel channel, FfmCqWait own, boolean single)
            throws RdmaException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Ibv.CALL_STATE);
            // a local: a conditional as invokeExact's argument would be typed Object
            MemorySegment events = channel == null ? own.channel : channel.channel;
            MemorySegment cq = (MemorySegment) Ibv.CREATE_CQ.invokeExact(state, device.ctx, entries, MemorySegment.NULL,
                    events, 0);
            if (cq.equals(MemorySegment.NULL)) {
                throw new RdmaException("ibv_create_cq(" + entries + ") on " + device.name + " failed with "
                        + Ibv.describe(Ibv.errno(state)));
            }
            cq = cq.reinterpret(IbvLayouts.CQ.byteSize());
            List<String> wrong = new ArrayList<>();
            if (!cq.get(ADDRESS, IbvLayouts.CQ_CONTEXT).equals(device.ctx)) {
                wrong.add("ibv_cq.context is " + FfmContext.hex(cq.get(ADDRESS, IbvLayouts.CQ_CONTEXT)) + ", not "
                        + FfmContext.hex(device.ctx));
            }
            int cqe = cq.get(JAVA_INT, IbvLayouts.CQ_CQE);
            if (cqe < entries) {
                wrong.add("ibv_cq.cqe is " + cqe + ", fewer than the " + entries + " asked for");
            }
            if (!wrong.isEmpty()) {
                int rc = (int) Ibv.DESTROY_CQ.invokeExact(cq);
                if (rc != 0) {
                    wrong.add("ibv_destroy_cq: " + Ibv.describe(rc));
                }
                FfmContext.layoutCheck("ibv_cq", wrong);
            }
            FfmCq made = new FfmCq(device, cq, cqe, channel, own, single);
            if (LOG.isDebugEnabled()) {
                LOG.debug("{}: await waits by {}", made, made.waitSequence());
            }
            if (channel != null) {
                channel.add(made);
            } else {
                own.bind(cq);
            }
            return made;
        } catch (RdmaException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Ibv.downcallFailed("ibv_create_cq", t);
        }
    }

    @Override
    public int capacity() {
        return capacity;
    }

    @Override
    public boolean singleConsumer() {
        return single;
    }

    @Override
    public int poll(WorkCompletion[] out, int max) {
        if (single) {
            boolean entered = owner.enter();
            try {
                return pollNow(out, max);
            } finally {
                owner.leave(entered);
            }
        }
        if (oneCall) {
            handoff.arriving();
        }
        synchronized (this) {
            if (oneCall) {
                handoff.arrived();
            }
            return pollNow(out, max);
        }
    }

    /**
     * The spin in one hold of the monitor, as DiSNI's native spin holds its CQ's lock: polls back
     * to back without a lock operation between them (each one costs more than an empty poll), so
     * a concurrent poll, await step or close waits for the spin's end, which the caller's bound
     * limits. A single-consumer CQ spins on its owner thread without the monitor, its ownership
     * checked (under {@code -ea}) once per spin.
     */
    @Override
    public int spin(WorkCompletion[] out, int max, long maxPolls, long maxNanos) {
        if (maxPolls < 1 || maxNanos < 0) {
            throw new IllegalArgumentException("spin: maxPolls must be >= 1 and maxNanos >= 0, got " + maxPolls
                    + ", " + maxNanos);
        }
        if (single) {
            boolean entered = owner.enter();
            try {
                return spinNow(out, max, maxPolls, maxNanos);
            } finally {
                owner.leave(entered);
            }
        }
        if (oneCall) {
            handoff.arriving();
        }
        synchronized (this) {
            if (oneCall) {
                handoff.arrived();
            }
            return spinNow(out, max, maxPolls, maxNanos);
        }
    }

    /** Polls until a completion or a bound (the caller holds the monitor or owns the CQ). */
    private int spinNow(WorkCompletion[] out, int max, long maxPolls, long maxNanos) {
        long start = maxNanos > 0 ? System.nanoTime() : 0;
        for (long polls = 1; ; polls++) {
            int n = pollNow(out, max);
            if (n > 0 || polls >= maxPolls) {
                return n;
            }
            if (maxNanos > 0 && (polls & 63) == 0 && System.nanoTime() - start >= maxNanos) {
                return 0;
            }
        }
    }

    /** One {@code ops.poll_cq}, the completions decoded (the caller holds the monitor or owns the CQ). */
    private int pollNow(WorkCompletion[] out, int max) {
        if (!open) {
            throw new IllegalStateException("completion queue is closed");
        }
        int want = Math.min(Math.min(max, out.length), BATCH);
        if (want <= 0) {
            return 0;
        }
        int n;
        try {
            n = (int) Ibv.POLL_CQ.invokeExact(pollCq, cq, want, wcs);
        } catch (Throwable t) {
            throw Ibv.downcallFailed("ops.poll_cq", t);
        }
        if (n < 0) {
            throw new IllegalStateException("ibv_poll_cq on " + device.name + " failed: " + n);
        }
        for (int i = 0; i < n; i++) {
            decode(i * WC_SIZE, out[i]);
        }
        return n;
    }

    private void decode(long base, WorkCompletion wc) {
        wc.wrId = wcs.get(JAVA_LONG, base + IbvLayouts.WC_WR_ID);
        int status = wcs.get(JAVA_INT, base + IbvLayouts.WC_STATUS);
        wc.status = WcStatus.of(status);
        wc.qpNum = wcs.get(JAVA_INT, base + IbvLayouts.WC_QP_NUM);
        wc.vendorError = wcs.get(JAVA_INT, base + IbvLayouts.WC_VENDOR_ERR);
        wc.solicited = false;
        wc.qpContext = null;
        if (status == 0) {
            wc.opcode = opcode(wcs.get(JAVA_INT, base + IbvLayouts.WC_OPCODE));
            wc.byteLength = wcs.get(JAVA_INT, base + IbvLayouts.WC_BYTE_LEN);
            wc.withInvalidate = (wcs.get(JAVA_INT, base + IbvLayouts.WC_FLAGS) & IbvLayouts.WC_WITH_INV) != 0;
            wc.invalidatedRkey = wc.withInvalidate ? wcs.get(JAVA_INT, base + IbvLayouts.WC_IMM_DATA) : 0;
            dispatch(wc, true);
        } else {
            // only wr_id, status, qp_num and vendor_err are valid in an error completion
            wc.opcode = WcOpcode.RECV;
            wc.byteLength = 0;
            wc.withInvalidate = false;
            wc.invalidatedRkey = 0;
            dispatch(wc, false);
        }
    }

    /** Hands the completion to its QP, which maps the token back to the caller's wrId. */
    private void dispatch(WorkCompletion wc, boolean success) {
        for (FfmQp q : qps) {
            if (q.qpNum() == wc.qpNum && q.completed(wc, success)) {
                if (q.isClosed() && q.drainedOn(this)) {
                    detach(q); // a closed QP's last flushed WR
                }
                return;
            }
        }
        for (FfmSrq s : srqs) {
            if (s.owns(wc.wrId) && s.completed(wc)) {
                wc.qpContext = null; // its QP is gone
                return;
            }
        }
        LOG.debug("completion of unknown WR token 0x{} on QP {}", Long.toHexString(wc.wrId), wc.qpNum);
    }

    /** The open QP of this CQ whose {@code struct ibv_qp} is at {@code address}, or null. */
    FfmQp qpAt(long address) {
        for (FfmQp q : qps) {
            if (q.qp.address() == address && !q.isClosed()) {
                return q;
            }
        }
        return null;
    }

    void attach(FfmQp qp) {
        synchronized (qpLock) {
            qps = SnapshotArrays.with(qps, qp);
            FfmSrq s = qp.sharedReceiveQueue();
            if (s != null && !Arrays.asList(srqs).contains(s)) {
                FfmSrq[] now = srqs;
                for (FfmSrq o : srqs) {
                    if (!o.isOpen()) {
                        now = SnapshotArrays.without(now, o, NO_SRQS); // a closed SRQ owns no slot any more
                    }
                }
                srqs = SnapshotArrays.with(now, s);
            }
        }
    }

    /**
     * A QP of this CQ was destroyed: it leaves now when none of its WRs is outstanding, else once
     * the last of them completed (flushed); of the closed QPs still waiting, the oldest leave
     * beyond {@link #DRAINING_MAX} (a WR the device never completes must not keep them for ever).
     * Under {@link #qpLock}, not the poll's monitor: a poll may dispatch the QP's last completion
     * meanwhile; it retires the WR under the QP's monitor, so whichever of the two finds the QP
     * closed and drained after that lets it go (both may: leaving twice is harmless).
     */
    void closed(FfmQp qp) {
        synchronized (qpLock) {
            if (qp.drainedOn(this)) {
                detach(qp);
                return;
            }
            int draining = 0;
            for (FfmQp q : qps) {
                draining += q.isClosed() ? 1 : 0;
            }
            for (int i = 0; draining > DRAINING_MAX && i < qps.length; i++) {
                if (qps[i].isClosed()) {
                    LOG.debug("QP {} closed with WRs outstanding left {} without their completions", qps[i].qpNum(), this);
                    detach(qps[i--]);
                    draining--;
                }
            }
        }
    }

    private void detach(FfmQp qp) {
        synchronized (qpLock) {
            qps = SnapshotArrays.without(qps, qp, NO_QPS);
        }
    }

    /** {@code enum ibv_wc_opcode} without {@link WcOpcode#of}'s scan over a fresh {@code values()} array. */
    static WcOpcode opcode(int op) {
        return switch (op) {
            case 0 -> WcOpcode.SEND;
            case 1 -> WcOpcode.RDMA_WRITE;
            case 2 -> WcOpcode.RDMA_READ;
            case 3 -> WcOpcode.COMP_SWAP;
            case 4 -> WcOpcode.FETCH_ADD;
            case 5 -> WcOpcode.BIND_MW;
            case 6 -> WcOpcode.LOCAL_INV;
            case 128 -> WcOpcode.RECV;
            case 129 -> WcOpcode.RECV_RDMA_WITH_IMM;
            default -> throw new IllegalStateException("ibv_poll_cq returned an unknown ibv_wc_opcode " + op);
        };
    }

    /**
     * Waits for at least one completion or the timeout. On a CQ without a consumer's channel:
     * poll, arm for every completion ({@code ops.req_notify_cq}), poll, then sleep on the CQ's own
     * channel ({@link FfmCqWait}: {@code poll(2)} of at most 100 ms, {@code ibv_get_cq_event},
     * acknowledged in batches) and poll again; each step one downcall, nothing allocated. The CQ's
     * monitor is held for the polls and the arming only, never for the sleep. With jwarp's native
     * library named by {@code -Djwarp.ffm.nativeLib} ({@link FfmNativeWait}) the whole sequence is
     * one downcall ({@code jw_cq_await}) made under the monitor in steps of at most 100 ms, as the
     * DiSNI provider's: a concurrent poll then waits for the step's end, and goes before the next. On a CQ of a
     * consumer's channel the channel's events belong to its consumer: polls with naps (at most
     * 200 µs), as the DiSNI provider's does. A CQ closed while the caller waits ends the wait with
     * 0 (the close wakes a sleeper at once); one closed before the call is an error.
     */
    @Override
    public int await(WorkCompletion[] out, int max, long timeout, TimeUnit unit) throws InterruptedException {
        if (single && OwnerCheck.CHECKED) {
            boolean entered = owner.enterAwait(); // a close from another thread is no violation from here on
            try {
                return awaitNow(out, max, timeout, unit);
            } finally {
                owner.leave(entered);
            }
        }
        return awaitNow(out, max, timeout, unit);
    }

    private int awaitNow(WorkCompletion[] out, int max, long timeout, TimeUnit unit) throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        if (own != null && own.oneCall() != null) {
            return awaitInOneCall(out, max, deadline);
        }
        long nap = 1_000;
        boolean first = true;
        while (true) {
            int n;
            long taken = 0;
            synchronized (this) {
                if (!open && !first) {
                    return 0; // closed while this thread waited
                }
                n = pollNow(out, max);
                if (n == 0 && own != null) {
                    taken = own.taken(); // an event taken after this read may have disarmed the arming below
                    int rc = arm(false);
                    if (rc != 0) {
                        throw new IllegalStateException("ibv_req_notify_cq on " + device.name + " failed with "
                                + Ibv.describe(Math.abs(rc)));
                    }
                    n = pollNow(out, max); // a completion that raced the arming raises no event
                }
            }
            first = false;
            if (n > 0) {
                return n;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return 0;
            }
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            if (own != null) {
                if (!own.sleep(left, taken)) {
                    return 0;
                }
            } else {
                LockSupport.parkNanos(Math.min(nap, left));
                nap = Math.min(nap * 2, AWAIT_MAX_NAP_NANOS);
            }
        }
    }

    /**
     * The wait as {@code jw_cq_await} ({@link FfmNativeWait}): each step one downcall under the
     * monitor, of at most {@link #AWAIT_SLICE_NANOS}, the completions decoded before the monitor
     * is let go; after an empty step the threads that waited for the monitor go first
     * ({@link #handoff}). An interrupt is seen between steps, close() ends a step through the
     * wake-up fd.
     */
    private int awaitInOneCall(WorkCompletion[] out, int max, long deadline) throws InterruptedException {
        boolean first = true;
        while (true) {
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            long slice = Math.max(0, Math.min(deadline - System.nanoTime(), AWAIT_SLICE_NANOS));
            int n;
            handoff.arriving();
            synchronized (this) {
                handoff.arrived();
                if (!open || own.closing()) {
                    if (first && !open) {
                        throw new IllegalStateException("completion queue is closed");
                    }
                    return 0; // closed while this thread waited
                }
                int want = Math.min(Math.min(max, out.length), BATCH);
                if (want <= 0) {
                    return 0;
                }
                Runnable hook = stepHook;
                if (hook != null) {
                    hook.run();
                }
                n = own.step(want, wcs, slice);
                if (n < 0) {
                    throw new IllegalStateException(FfmNativeWait.SYMBOL + " (ibv_poll_cq, ibv_req_notify_cq, "
                            + "ibv_get_cq_event) on " + device.name + " failed with " + Ibv.describe(-n));
                }
                for (int i = 0; i < n; i++) {
                    decode(i * WC_SIZE, out[i]);
                }
            }
            if (n > 0 || deadline - System.nanoTime() <= 0) {
                return n;
            }
            first = false;
            handoff.letArrivalsIn(deadline); // they take the monitor before the next step
        }
    }

    /**
     * Which wait {@link #await} uses (tests, logs): "one downcall (jw_cq_await of PATH)", "Java
     * steps (poll, arm, poll, poll(2), ibv_get_cq_event)", or "polls with naps" on a CQ of a
     * consumer's channel.
     */
    String waitSequence() {
        if (own == null) {
            return "polls with naps (a consumer's channel)";
        }
        return own.oneCall() != null ? "one downcall (" + own.oneCall() + ")"
                : "Java steps (poll, arm, poll, poll(2), ibv_get_cq_event)";
    }

    /** {@code ops.req_notify_cq} under the monitor, the CQ open; the device's return code. */
    private int arm(boolean solicitedOnly) {
        try {
            return (int) Ibv.REQ_NOTIFY_CQ.invokeExact(device.reqNotifyCq, cq, solicitedOnly && !solicitedUnreported ? 1 : 0);
        } catch (Throwable t) {
            throw Ibv.downcallFailed("ops.req_notify_cq", t);
        }
    }

    /**
     * Events {@link #await} took from the CQ's own channel and has not acknowledged yet, in either
     * wait (tests, from the awaiting thread; 0 on a CQ of a consumer's channel).
     */
    int awaitUnacknowledged() {
        return own == null ? 0 : own.unacknowledged();
    }

    /** Events {@link #await} took from the CQ's own channel (tests; 0 on a CQ of a consumer's channel). */
    long awaitEvents() {
        return own == null ? 0 : own.taken();
    }

    /**
     * Arms the CQ: one downcall to the context's {@code ops.req_notify_cq}. On siw a solicited-only
     * arm covers every completion (see {@link #solicitedUnreported}).
     */
    @Override
    public void requestNotify(boolean solicitedOnly) throws RdmaException {
        if (channel == null) {
            throw new IllegalStateException("completion queue on " + device.name + " was created without a completion channel");
        }
        int rc;
        synchronized (this) {
            if (!open) {
                throw new RdmaException("requestNotify: completion queue on " + device.name + " is closed");
            }
            rc = arm(solicitedOnly);
        }
        if (rc != 0) {
            throw new RdmaException("ibv_req_notify_cq on " + device.name + " failed with " + Ibv.describe(Math.abs(rc)));
        }
    }

    @Override
    public CompletionChannel channel() {
        return channel;
    }

    /**
     * Counts one event that the channel took for this CQ ({@code ibv_get_cq_event}) and
     * acknowledges the count every {@link #CHANNEL_ACK_BATCH} events; once close() has
     * acknowledged the rest, an event taken later is acknowledged at once.
     */
    void channelEventTaken() {
        synchronized (ackLock) {
            unacked++;
            if (unacked >= CHANNEL_ACK_BATCH || acksFlushed) {
                ackEvents();
            }
        }
    }

    /** Acknowledges the events counted (under {@link #ackLock}). */
    private void ackEvents() {
        if (unacked == 0) {
            return;
        }
        try {
            FfmChannel.ACK_CQ_EVENTS.invokeExact(cq, unacked);
        } catch (Throwable t) {
            throw Ibv.downcallFailed("ibv_ack_cq_events", t);
        }
        unacked = 0;
    }

    /** Events taken and not yet acknowledged (tests). */
    int unacknowledgedEvents() {
        synchronized (ackLock) {
            return unacked;
        }
    }

    /**
     * Destroys the CQ after waking a sleeping {@link #await}. On a single-consumer CQ, close comes
     * from the owner or after it stopped polling (checked under {@code -ea}), or while the owner
     * awaits.
     */
    @Override
    public void close() {
        if (single) {
            owner.idleOrMine(); // passes while the owner awaits
        }
        if (own != null) {
            own.wake(); // ends a one-downcall wait, which holds the monitor closeNow takes
        }
        closeNow();
    }

    private synchronized void closeNow() {
        if (!open) {
            return;
        }
        open = false;
        device.forget(this);
        // ibv_destroy_cq waits for every event it reported to be acknowledged
        if (channel != null) {
            synchronized (ackLock) {
                acksFlushed = true;
                ackEvents();
            }
            channel.forget(this);
        } else {
            own.release(); // wakes a sleeping await, which returns 0
        }
        try {
            int rc = (int) Ibv.DESTROY_CQ.invokeExact(cq);
            if (rc != 0) {
                LOG.warn("ibv_destroy_cq on {} failed with {} (a queue pair still uses it?): the CQ leaked", device.name,
                        Ibv.describe(rc));
            }
        } catch (Throwable t) {
            throw Ibv.downcallFailed("ibv_destroy_cq", t);
        }
        if (own != null) {
            own.destroy();
        }
        arena.close();
    }

    @Override
    public String toString() {
        return "FfmCq{" + device.name + ", " + capacity + " entries}";
    }
}
