package org.jwarp.disni.impl;

import com.ibm.disni.util.MemoryUtils;
import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.RdmaVerbs;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import org.jwarp.disni.natives.JwarpNative;
import org.jwarp.provider.OwnerCheck;
import org.jwarp.provider.StepHandoff;
import org.jwarp.verbs.CompletionQueue;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A completion queue created through DiSNI with its own completion channel. Polling reads
 * {@code struct ibv_wc} entries from a preallocated direct buffer (no allocation per poll) and
 * hands each completion to the owning queue pair, which maps the device wr_id (a ring token)
 * back to the caller's wrId and retires WRs by ring position, so it can count outstanding RDMA
 * Reads against the negotiated ORD (RFC 6581 section 9.1, RFC 5040 section 6.5).
 *
 * <p>Thread-safe: polls, spins and await steps are serialized on this object; a poll waiting for
 * it goes before an await's next step ({@link StepHandoff}). A single-consumer CQ
 * ({@link #single}) polls and spins without the monitor (its one owner thread is the application's
 * promise, checked under {@code -ea} by {@link OwnerCheck}); await keeps its per-step monitor, so a
 * close from another thread still ends a wait. QPs come and go under a lock of their own
 * ({@link #qpLock}), never behind an await step.
 */
final class DisniCq implements CompletionQueue {
    private static final Logger LOG = LoggerFactory.getLogger(DisniCq.class);
    static final int WC_SIZE = JwarpNative.probe(JwarpNative.PROBE_WC_SIZE);
    static final int WC_STATUS = JwarpNative.probe(JwarpNative.PROBE_WC_STATUS);
    static final int WC_OPCODE = JwarpNative.probe(JwarpNative.PROBE_WC_OPCODE);
    static final int WC_VENDOR_ERR = JwarpNative.probe(JwarpNative.PROBE_WC_VENDOR_ERR);
    static final int WC_BYTE_LEN = JwarpNative.probe(JwarpNative.PROBE_WC_BYTE_LEN);
    static final int WC_IMM = JwarpNative.probe(JwarpNative.PROBE_WC_IMM);
    static final int WC_QP_NUM = JwarpNative.probe(JwarpNative.PROBE_WC_QP_NUM);
    static final int WC_FLAGS = JwarpNative.probe(JwarpNative.PROBE_WC_FLAGS);
    static final int IBV_WC_WITH_INV = 1 << 3;
    private static final int BATCH = 32;

    private final RdmaVerbs verbs;
    /** Finds the SRQ of a receive token whose QP is gone; null in unit tests without a device. */
    private final DisniDevice device;
    final IbvCompChannel channel;
    final IbvCQ cq;
    private final long cqPtr;
    private final int capacity;
    private final ByteBuffer wcs = ByteBuffer.allocateDirect(WC_SIZE * BATCH).order(ByteOrder.nativeOrder());
    private final long wcsAddr = MemoryUtils.getAddress(wcs);
    /** The channel's {@code ibv_comp_channel}. */
    private final long chPtr;
    /**
     * Ends a native {@link #await} wait when written (eventfd): close() writes it before it takes
     * the monitor the waiter holds. -1 on a CQ of a shared channel (its await never blocks natively).
     */
    private final int wakeFd;
    /**
     * Completion events taken and not acknowledged yet (native uint32): by {@link #await} on a CQ
     * with its own channel (guarded by this), by {@link DisniChannel#next} on a CQ of a shared
     * channel (guarded by {@link #ackLock}).
     */
    private final ByteBuffer ackState = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
    private final long ackStateAddr = MemoryUtils.getAddress(ackState);
    /** Events of a shared channel acknowledged together, as {@code JwarpNative.cqAwait} does. */
    static final int CHANNEL_ACK_BATCH = 64;
    /**
     * Guards {@link #ackState} and {@link #acksFlushed} on a CQ of a shared channel. Not the
     * monitor: close() holds that while {@code ibv_destroy_cq} waits for a channel thread's
     * acknowledgement, which this lock must not block.
     */
    private final Object ackLock = new Object();
    /** Set by close() once it acknowledged the count: an event taken later is acknowledged at once. */
    private boolean acksFlushed;
    /** Longest native wait of one {@link #await} step: interrupts and other pollers get in at least this often. */
    static final long AWAIT_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** Set by the first close(), before it wakes a waiter: an await in progress then returns 0. */
    private volatile boolean closing;
    private final java.util.concurrent.atomic.AtomicBoolean closeStarted = new java.util.concurrent.atomic.AtomicBoolean();
    /** Attached QPs by qp_num (replaced on attach/detach, read without a lock). */
    private volatile QpTable<DisniQp> qps = new QpTable<>(DisniQp::qpNum);
    /**
     * Detached (closed) QPs whose WRs had not all completed: their flushed completions (RFC 5040
     * section 8.2) still arrive here and must map back to the caller's wrIds. Newest first; an
     * entry goes once its queues are empty, the oldest beyond {@link #DRAINING_MAX}.
     */
    private volatile DisniQp[] draining = new DisniQp[0];
    static final int DRAINING_MAX = 64;
    private volatile boolean open = true;
    /** The consumer's completion channel this CQ was created on, or null (then {@link #channel} is its own). */
    final DisniChannel shared;
    /**
     * Kernel siw (6.1) never raises a solicited-only event for a receive (siw_rqe_complete notifies
     * as for any signalled completion, without the Solicited Event flag), so a solicited-only arm
     * would sleep through a Send with SE: on such a device the arm covers every completion (a
     * spurious wake-up is harmless, a missed one is not).
     */
    volatile boolean solicitedUnreported;
    /** Single-consumer mode: poll and spin take no monitor (one thread at a time, the contract). */
    private final boolean single;
    private final OwnerCheck owner = new OwnerCheck("completion queue");
    /**
     * On a CQ with its own channel (its await holds the monitor for whole steps): the threads about
     * to take the monitor, let in before the await's next step.
     */
    private final StepHandoff handoff = new StepHandoff();
    /** Whether {@link #await} waits in native steps under the monitor (own channel; then polls count in {@link #handoff}). */
    private final boolean stepped;
    /** Runs in each native {@link #await} step under the monitor, before the wait (tests hold a step with it). */
    volatile Runnable stepHook;

    DisniCq(DisniDevice device, RdmaVerbs verbs, IbvCompChannel channel, IbvCQ cq, int capacity) throws IOException {
        this(device, verbs, channel, cq, capacity, null, false);
    }

    DisniCq(DisniDevice device, RdmaVerbs verbs, IbvCompChannel channel, IbvCQ cq, int capacity, DisniChannel shared,
            boolean single) throws IOException {
        this.single = single;
        this.device = device;
        this.shared = shared;
        this.verbs = verbs;
        this.channel = channel;
        this.cq = cq;
        this.cqPtr = CmDispatcher.ptr(cq);
        this.capacity = capacity;
        this.chPtr = CmDispatcher.ptr(channel);
        this.wakeFd = shared == null ? JwarpNative.wakeCreate() : -1;
        this.stepped = shared == null;
    }

    long ptr() {
        return cqPtr;
    }

    /** The attached QP with this number, or null. */
    DisniQp qp(int qpNum) {
        return qps.get(qpNum);
    }

    /** Serialized with {@link #close()}: never arms a destroyed CQ. */
    @Override
    public synchronized void requestNotify(boolean solicitedOnly) throws org.jwarp.verbs.RdmaException {
        if (shared == null) {
            throw new IllegalStateException("requestNotify: this CQ was created without a completion channel");
        }
        if (!open) {
            throw new org.jwarp.verbs.RdmaException("requestNotify: completion queue is closed");
        }
        int rc = JwarpNative.reqNotifyCq(cqPtr, solicitedOnly && !solicitedUnreported);
        if (rc != 0) {
            throw new org.jwarp.verbs.RdmaException("ibv_req_notify_cq failed with errno " + rc);
        }
    }

    @Override
    public org.jwarp.verbs.CompletionChannel channel() {
        return shared;
    }

    /**
     * Serializes {@link #attach} and {@link #detach}, not the CQ's monitor: a thread in a native
     * {@link #await} step holds that for up to 100 ms, and connection setup must not wait for it.
     * Decoders read {@link #qps} then {@link #draining} without a lock, so detach publishes the
     * closed QP into draining before it leaves qps: a decoder always finds it in one of them.
     */
    private final Object qpLock = new Object();

    void attach(DisniQp qp) {
        synchronized (qpLock) {
            qps = qps.with(qp);
        }
    }

    void detach(DisniQp qp) {
        synchronized (qpLock) {
            QpTable<DisniQp> cur = qps;
            QpTable<DisniQp> n = cur.without(qp);
            if (n != cur) {
                java.util.List<DisniQp> d = new java.util.ArrayList<>(DRAINING_MAX);
                if (qp.hasOutstanding()) {
                    d.add(qp);
                }
                for (DisniQp q : draining) {
                    if (d.size() < DRAINING_MAX && q.hasOutstanding()) {
                        d.add(q);
                    }
                }
                draining = d.toArray(new DisniQp[0]);
                qps = n;
            }
        }
    }

    /**
     * Counts one event that the shared channel took for this CQ ({@code ibv_get_cq_event}) and
     * acknowledges the count every {@link #CHANNEL_ACK_BATCH} events; once close() has flushed the
     * count, at once, so {@code ibv_destroy_cq}, which waits for every event it reported, ends.
     */
    void channelEventTaken() {
        synchronized (ackLock) {
            int k = ackState.getInt(0) + 1;
            ackState.putInt(0, k);
            if (k >= CHANNEL_ACK_BATCH || acksFlushed) {
                int acked = JwarpNative.cqAckEvents(cqPtr, ackStateAddr);
                if (acked < 0) {
                    LOG.warn("acknowledging the CQ's completion events failed ({})", acked);
                }
            }
        }
    }

    /** Events taken and not yet acknowledged (tests). */
    int unacknowledgedEvents() {
        synchronized (ackLock) {
            return ackState.getInt(0);
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
                return pollNow(out, max, 0, 0);
            } finally {
                owner.leave(entered);
            }
        }
        if (stepped) {
            handoff.arriving();
        }
        synchronized (this) {
            if (stepped) {
                handoff.arrived();
            }
            return pollNow(out, max, 0, 0);
        }
    }

    /**
     * The spin wait in one JNI crossing ({@link JwarpNative#pollCqSpin}): native polls into the
     * CQ's WC buffer until a completion or the bound, under this CQ's monitor like {@link #poll}
     * (the buffer and the QPs' rings are shared by every poller, and close() must not destroy the
     * CQ under the spin), so a concurrent poll, await or close waits for the spin's end, which the
     * caller's bound limits. A single-consumer CQ spins without the monitor.
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
                return pollNow(out, max, maxPolls, maxNanos);
            } finally {
                owner.leave(entered);
            }
        }
        if (stepped) {
            handoff.arriving();
        }
        synchronized (this) {
            if (stepped) {
                handoff.arrived();
            }
            return pollNow(out, max, maxPolls, maxNanos);
        }
    }

    /** One poll ({@code maxPolls} 0) or one native spin, then the completions decoded (caller holds the monitor or owns the CQ). */
    private int pollNow(WorkCompletion[] out, int max, long maxPolls, long maxNanos) {
        if (!open) {
            throw new IllegalStateException("completion queue is closed");
        }
        int want = Math.min(Math.min(max, out.length), BATCH);
        if (want <= 0) {
            return 0;
        }
        int n = maxPolls == 0 ? JwarpNative.pollCq(cqPtr, want, wcsAddr)
                : JwarpNative.pollCqSpin(cqPtr, want, wcsAddr, maxPolls, maxNanos);
        if (n < 0) {
            throw new IllegalStateException("ibv_poll_cq failed: " + n);
        }
        for (int i = 0; i < n; i++) {
            decode(i * WC_SIZE, out[i]);
        }
        return n;
    }

    private void decode(int base, WorkCompletion wc) {
        wc.wrId = wcs.getLong(base);
        int status = wcs.getInt(base + WC_STATUS);
        wc.status = WcStatus.of(status);
        wc.qpNum = wcs.getInt(base + WC_QP_NUM);
        wc.vendorError = wcs.getInt(base + WC_VENDOR_ERR);
        wc.solicited = false;
        if (status == 0) {
            int op = wcs.getInt(base + WC_OPCODE);
            wc.opcode = opcode(op);
            wc.byteLength = wcs.getInt(base + WC_BYTE_LEN);
            int flags = wcs.getInt(base + WC_FLAGS);
            wc.withInvalidate = (flags & IBV_WC_WITH_INV) != 0;
            wc.invalidatedRkey = wc.withInvalidate ? wcs.getInt(base + WC_IMM) : 0;
            if (!dispatch(wc, true, op < WcOpcode.RECV.code)) {
                LOG.debug("completion of unknown WR token 0x{} on QP {}", Long.toHexString(wc.wrId), wc.qpNum);
            }
        } else {
            // only wr_id, status, qp_num and vendor_err are valid in an error completion
            wc.byteLength = 0;
            wc.withInvalidate = false;
            wc.invalidatedRkey = 0;
            wc.opcode = WcOpcode.RECV;
            if (!dispatch(wc, false, false)) {
                LOG.debug("error completion of unknown WR token 0x{} on QP {}", Long.toHexString(wc.wrId), wc.qpNum);
            }
        }
    }

    private static WcOpcode opcode(int op) {
        switch (op) {
            case 0: return WcOpcode.SEND;
            case 1: return WcOpcode.RDMA_WRITE;
            case 2: return WcOpcode.RDMA_READ;
            case 3: return WcOpcode.COMP_SWAP;
            case 4: return WcOpcode.FETCH_ADD;
            case 5: return WcOpcode.BIND_MW;
            case 6: return WcOpcode.LOCAL_INV;
            case 128: return WcOpcode.RECV;
            case 129: return WcOpcode.RECV_RDMA_WITH_IMM;
            default: return WcOpcode.SEND;
        }
    }

    /**
     * Hands a completion to the QP whose WR token it carries: live QPs with its qp_num first, then
     * closed ones still draining (their tokens differ by generation even when the number is reused).
     * A receive into a shared receive queue belongs to the SRQ, not to the QP's rings: a closed QP
     * never stays draining for it, so a token tagged as an SRQ's that no QP took goes to the
     * device's SRQ of that generation, which retires its slot (else the app would see the token and
     * the SRQ would lose the buffer's place for good).
     */
    private boolean dispatch(WorkCompletion wc, boolean success, boolean send) {
        DisniQp live = qps.get(wc.qpNum);
        if (live != null && (success ? live.completed(wc, send) : live.completedOnError(wc))) {
            wc.qpContext = live.context();
            return true;
        }
        for (DisniQp q : draining) {
            if (q.qpNum() == wc.qpNum && (success ? q.completed(wc, send) : q.completedOnError(wc))) {
                wc.qpContext = q.context();
                return true;
            }
        }
        wc.qpContext = null;
        if (!send && (wc.wrId & DisniSrq.TAG_MASK) == DisniSrq.TAG && device != null) {
            DisniSrq srq = device.srqOwning(wc.wrId);
            return srq != null && srq.completed(wc);
        }
        return false;
    }

    /**
     * On a CQ with its own channel the blocking sequence is one native call per step
     * ({@link JwarpNative#cqAwait}: poll, arm for every completion, poll, wait on the channel's fd,
     * take the event, poll), made under this CQ's monitor like {@link #poll} (the WC buffer, the
     * QPs' rings and the unacknowledged-event count are shared), in steps of at most
     * {@link #AWAIT_SLICE_NANOS}: a concurrent poll, spin or await waits for the step's end and
     * goes before the next step ({@link StepHandoff}); an interrupt is seen between steps. Events
     * are acknowledged in batches, the rest at close. close() ends a step at once through the wake
     * fd; the waiter then returns 0.
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
        if (shared != null) {
            // the channel's events belong to its consumer: poll with short sleeps instead
            while (true) {
                int n = poll(out, max);
                if (n > 0) {
                    return n;
                }
                if (System.nanoTime() - deadline >= 0) {
                    return 0;
                }
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                java.util.concurrent.locks.LockSupport.parkNanos(200_000L);
            }
        }
        boolean first = true;
        while (true) {
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            long left = Math.max(0, Math.min(deadline - System.nanoTime(), AWAIT_SLICE_NANOS));
            int n;
            handoff.arriving();
            synchronized (this) {
                handoff.arrived();
                if (!open || closing) {
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
                n = JwarpNative.cqAwait(cqPtr, chPtr, wakeFd, want, wcsAddr, left, ackStateAddr);
                if (n < 0) {
                    throw new IllegalStateException("completion wait (ibv_poll_cq, ibv_req_notify_cq, "
                            + "ibv_get_cq_event) failed: " + n);
                }
                for (int i = 0; i < n; i++) {
                    decode(i * WC_SIZE, out[i]);
                }
            }
            if (n > 0) {
                return n;
            }
            if (System.nanoTime() - deadline >= 0) {
                return 0;
            }
            first = false;
            handoff.letArrivalsIn(deadline); // the threads that waited for the monitor go before the next step
        }
    }

    /**
     * Wakes a thread waiting in {@link #await} (wake fd), then destroys the CQ under the monitor
     * once that thread has left the native wait: the events it (or the shared channel) took and had
     * not acknowledged are acknowledged first ({@code ibv_destroy_cq} would wait for them for ever);
     * an event a channel thread takes during the destroy is acknowledged by that thread at once.
     * A second close waits for the first. On a single-consumer CQ, close comes from the owner or
     * after it stopped polling (checked under {@code -ea}), or while the owner awaits.
     */
    @Override
    public void close() {
        if (single) {
            owner.idleOrMine(); // passes while the owner awaits
        }
        if (!closeStarted.compareAndSet(false, true)) {
            synchronized (this) {
                while (open) { // the first close has not taken the monitor yet
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                }
            }
            return;
        }
        closing = true;
        if (wakeFd >= 0) {
            int rc = JwarpNative.wakeSignal(wakeFd);
            if (rc != 0) {
                LOG.warn("waking the CQ's waiter failed (errno {}): close waits for its step to end", rc);
            }
        }
        synchronized (this) {
            open = false;
            try {
                int acked;
                if (shared == null) {
                    acked = JwarpNative.cqAckEvents(cqPtr, ackStateAddr);
                } else {
                    synchronized (ackLock) {
                        acksFlushed = true;
                        acked = JwarpNative.cqAckEvents(cqPtr, ackStateAddr);
                    }
                }
                if (acked < 0) {
                    LOG.warn("acknowledging the CQ's completion events failed ({}): ibv_destroy_cq may block", acked);
                }
                int rc = verbs.destroyCQ(cq);
                if (rc != 0) {
                    LOG.warn("ibv_destroy_cq returned {} (a QP still uses it?): the native CQ leaked", rc);
                }
                if (shared == null) {
                    rc = verbs.destroyCompChannel(channel);
                    if (rc != 0) {
                        LOG.warn("ibv_destroy_comp_channel returned {}: the native channel leaked", rc);
                    }
                } else {
                    shared.forget(this);
                }
            } catch (IOException e) {
                LOG.warn("destroying CQ: {}", e.toString());
            } finally {
                if (wakeFd >= 0) {
                    int rc = JwarpNative.wakeClose(wakeFd);
                    if (rc != 0) {
                        LOG.warn("closing the CQ's wake fd failed (errno {})", rc);
                    }
                }
                notifyAll(); // a second close() waits for this one
            }
        }
    }
}
