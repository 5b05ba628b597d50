package org.jwarp.verbs;

import java.util.Objects;

/**
 * What a queue pair is created with ({@code ibv_qp_init_attr}): its PD, CQs, queue depths,
 * scatter-gather entries per send and per receive request, the inline payload size asked for,
 * and an optional hook that runs once the QP exists and before this side's MPA frame is sent.
 * The provider may grant more than asked ({@link QueuePair#caps()}); asking more than the device
 * offers fails QP creation.
 *
 * <p>The hook is where receives are posted before any peer message can arrive: a Send that finds
 * no posted buffer is fatal to the stream (RFC 5041 §7.2, untagged error 2/2), and in the
 * peer-to-peer model the responder may send as soon as the RTR arrives (RFC 6581 §9.2), i.e.
 * before {@code connect} returns to the initiator. This is the rdma_cm order: create the QP, post
 * receives, then rdma_connect / rdma_accept. Only receives may be posted in the hook (the QP is not
 * yet in RTS).
 *
 * <p>With a {@link SharedReceiveQueue} ({@link #withSrq}) the QP takes its receive buffers from it:
 * {@code maxRecvWr} and {@code maxRecvSge} are then not used, and posting a receive to the QP is
 * refused. The SRQ must be of the same protection domain, else QP creation fails with an
 * {@link RdmaException}.
 *
 * <p>With {@link #withSingleConsumer} the QP is asked for in single-consumer mode: one thread at a
 * time posts to it and polls the CQs it completes into, and a provider may then drop its locks
 * (see "Single-consumer mode" in {@link CompletionQueue} for the contract).
 *
 * <p>Immutable, so thread-safe (the objects it names are shared, not copied).
 *
 * @param pd            the protection domain of the QP; its regions are the ones the QP's work
 *                      requests and the peer's tagged accesses may name
 * @param sendCq        the CQ of send-queue completions
 * @param recvCq        the CQ of receive completions (may be {@code sendCq})
 * @param maxSendWr     send-queue depth (≥ 1): slots held from post to completion
 * @param maxRecvWr     receive-queue depth (≥ 1)
 * @param maxSendSge    SGEs per send WR (≥ 1)
 * @param maxRecvSge    SGEs per receive WR (≥ 1)
 * @param maxInlineData inline bytes per send WR (≥ 0)
 * @param beforeConnect called on the connecting or accepting thread with the new QP; may be null
 * @param srq           the shared receive queue the QP draws its receive buffers from, or null
 * @param context       the application's object for this QP (ibverbs' {@code qp_context}), or null:
 *                      returned by {@link QueuePair#context()}, in {@link WorkCompletion#qpContext}
 *                      of every completion of the QP and in {@link AsyncEvent#qpContext()} of its
 *                      events ({@link #withContext})
 * @param singleConsumer the QP is used by one thread at a time, together with the CQs it completes
 *                      into ({@link #withSingleConsumer}); false: any thread, any time
 */
public record QueuePairConfig(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq,
                              int maxSendWr, int maxRecvWr, int maxSendSge, int maxRecvSge, int maxInlineData,
                              BeforeConnect beforeConnect, SharedReceiveQueue srq, Object context,
                              boolean singleConsumer) {
    /**
     * Checks the arguments.
     *
     * @param pd            the protection domain of the QP
     * @param sendCq        the CQ of send-queue completions
     * @param recvCq        the CQ of receive completions
     * @param maxSendWr     send-queue depth (≥ 1)
     * @param maxRecvWr     receive-queue depth (≥ 1)
     * @param maxSendSge    SGEs per send WR (≥ 1)
     * @param maxRecvSge    SGEs per receive WR (≥ 1)
     * @param maxInlineData inline bytes per send WR (≥ 0)
     * @param beforeConnect called with the new QP before connection setup; may be null
     * @param srq           the shared receive queue, or null
     * @param context       the application's object for the QP, or null
     * @param singleConsumer one thread at a time uses the QP and its CQs ({@link #withSingleConsumer})
     * @throws NullPointerException     when {@code pd}, {@code sendCq} or {@code recvCq} is null
     * @throws IllegalArgumentException when a depth is below 1, an SGE count outside
     *                                  1..{@link ScatterGatherList#CAPACITY} or the inline size negative
     */
    public QueuePairConfig {
        Objects.requireNonNull(pd, "pd");
        Objects.requireNonNull(sendCq, "sendCq");
        Objects.requireNonNull(recvCq, "recvCq");
        if (maxSendWr < 1 || maxRecvWr < 1) {
            throw new IllegalArgumentException("queue depths must be >= 1: send=" + maxSendWr + " recv=" + maxRecvWr);
        }
        if (maxSendSge < 1 || maxRecvSge < 1 || maxSendSge > ScatterGatherList.CAPACITY
                || maxRecvSge > ScatterGatherList.CAPACITY) {
            throw new IllegalArgumentException("SGEs per WR must be 1.." + ScatterGatherList.CAPACITY + ": send="
                    + maxSendSge + " recv=" + maxRecvSge);
        }
        if (maxInlineData < 0) {
            throw new IllegalArgumentException("maxInlineData must be >= 0: " + maxInlineData);
        }
    }

    /**
     * A QP any thread may use (not single-consumer).
     *
     * @param pd            the protection domain of the QP
     * @param sendCq        the CQ of send-queue completions
     * @param recvCq        the CQ of receive completions
     * @param maxSendWr     send-queue depth (≥ 1)
     * @param maxRecvWr     receive-queue depth (≥ 1)
     * @param maxSendSge    SGEs per send WR (≥ 1)
     * @param maxRecvSge    SGEs per receive WR (≥ 1)
     * @param maxInlineData inline bytes per send WR (≥ 0)
     * @param beforeConnect called with the new QP before connection setup; may be null
     * @param srq           the shared receive queue, or null
     * @param context       the application's object for the QP, or null
     */
    public QueuePairConfig(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq, int maxSendWr,
                           int maxRecvWr, int maxSendSge, int maxRecvSge, int maxInlineData, BeforeConnect beforeConnect,
                           SharedReceiveQueue srq, Object context) {
        this(pd, sendCq, recvCq, maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, maxInlineData, beforeConnect, srq, context,
                false);
    }

    /**
     * Without a user context object.
     *
     * @param pd            the protection domain of the QP
     * @param sendCq        the CQ of send-queue completions
     * @param recvCq        the CQ of receive completions
     * @param maxSendWr     send-queue depth (≥ 1)
     * @param maxRecvWr     receive-queue depth (≥ 1)
     * @param maxSendSge    SGEs per send WR (≥ 1)
     * @param maxRecvSge    SGEs per receive WR (≥ 1)
     * @param maxInlineData inline bytes per send WR (≥ 0)
     * @param beforeConnect called with the new QP before connection setup; may be null
     * @param srq           the shared receive queue, or null
     */
    public QueuePairConfig(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq, int maxSendWr,
                           int maxRecvWr, int maxSendSge, int maxRecvSge, int maxInlineData, BeforeConnect beforeConnect,
                           SharedReceiveQueue srq) {
        this(pd, sendCq, recvCq, maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, maxInlineData, beforeConnect, srq, null);
    }

    /**
     * Without a shared receive queue or a user context object.
     *
     * @param pd            the protection domain of the QP
     * @param sendCq        the CQ of send-queue completions
     * @param recvCq        the CQ of receive completions
     * @param maxSendWr     send-queue depth (≥ 1)
     * @param maxRecvWr     receive-queue depth (≥ 1)
     * @param maxSendSge    SGEs per send WR (≥ 1)
     * @param maxRecvSge    SGEs per receive WR (≥ 1)
     * @param maxInlineData inline bytes per send WR (≥ 0)
     * @param beforeConnect called with the new QP before connection setup; may be null
     */
    public QueuePairConfig(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq, int maxSendWr,
                           int maxRecvWr, int maxSendSge, int maxRecvSge, int maxInlineData, BeforeConnect beforeConnect) {
        this(pd, sendCq, recvCq, maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, maxInlineData, beforeConnect, null);
    }

    /**
     * One SGE per WR, no inline data.
     *
     * @param pd            the protection domain of the QP
     * @param sendCq        the CQ of send-queue completions
     * @param recvCq        the CQ of receive completions
     * @param maxSendWr     send-queue depth (≥ 1)
     * @param maxRecvWr     receive-queue depth (≥ 1)
     * @param beforeConnect called with the new QP before connection setup; may be null
     */
    public QueuePairConfig(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq, int maxSendWr,
                           int maxRecvWr, BeforeConnect beforeConnect) {
        this(pd, sendCq, recvCq, maxSendWr, maxRecvWr, 1, 1, 0, beforeConnect);
    }

    /**
     * A configuration without a hook, one SGE per WR, no inline data.
     *
     * @param pd        the protection domain of the QP
     * @param sendCq    the CQ of send-queue completions
     * @param recvCq    the CQ of receive completions
     * @param maxSendWr send-queue depth (≥ 1)
     * @param maxRecvWr receive-queue depth (≥ 1)
     */
    public QueuePairConfig(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq, int maxSendWr,
                           int maxRecvWr) {
        this(pd, sendCq, recvCq, maxSendWr, maxRecvWr, null);
    }

    /** Work done on a new QP before connection setup, typically posting receives. */
    @FunctionalInterface
    public interface BeforeConnect {
        /**
         * Runs once on the connecting or accepting thread, after the QP exists and before this
         * side's MPA frame is sent; only receives may be posted (the QP is in INIT).
         *
         * @param qp the new queue pair
         * @throws RdmaException to abandon the connection setup: {@code connect} or {@code accept}
         *                       then throws an {@link RdmaException} (the soft provider wraps any
         *                       failure of the hook in a {@link WorkRequestException})
         */
        void prepare(QueuePair qp) throws RdmaException;
    }

    /**
     * The common configuration: one CQ for sends and receives, both queues {@code depth} deep, one
     * SGE per WR, no inline data, no hook, no SRQ, no context.
     *
     * @param pd    the protection domain of the QP
     * @param cq    the CQ of all completions; size it for {@code 2 * depth} (overrun is fatal)
     * @param depth send- and receive-queue depth (≥ 1)
     * @return the configuration
     */
    public static QueuePairConfig of(ProtectionDomain pd, CompletionQueue cq, int depth) {
        return new QueuePairConfig(pd, cq, cq, depth, depth);
    }

    /**
     * The same configuration with {@code hook} run before this side's MPA frame is sent.
     *
     * @param hook the hook, or null for none
     * @return the new configuration
     */
    public QueuePairConfig withBeforeConnect(BeforeConnect hook) {
        return new QueuePairConfig(pd, sendCq, recvCq, maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, maxInlineData, hook, srq,
                context, singleConsumer);
    }

    /**
     * The same configuration asking for {@code send} SGEs per send WR and {@code recv} per receive.
     *
     * @param send SGEs per send WR (1..{@link ScatterGatherList#CAPACITY})
     * @param recv SGEs per receive WR (1..{@link ScatterGatherList#CAPACITY})
     * @return the new configuration
     */
    public QueuePairConfig withSge(int send, int recv) {
        return new QueuePairConfig(pd, sendCq, recvCq, maxSendWr, maxRecvWr, send, recv, maxInlineData, beforeConnect, srq,
                context, singleConsumer);
    }

    /**
     * The same configuration asking for {@code bytes} of inline data per send WR.
     *
     * @param bytes inline bytes per send WR (≥ 0)
     * @return the new configuration
     */
    public QueuePairConfig withInline(int bytes) {
        return new QueuePairConfig(pd, sendCq, recvCq, maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, bytes, beforeConnect, srq,
                context, singleConsumer);
    }

    /**
     * The same configuration drawing receive buffers from {@code shared} (null: the QP's own
     * receive queue).
     *
     * @param shared a shared receive queue of the same protection domain, or null
     * @return the new configuration
     */
    public QueuePairConfig withSrq(SharedReceiveQueue shared) {
        return new QueuePairConfig(pd, sendCq, recvCq, maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, maxInlineData,
                beforeConnect, shared, context, singleConsumer);
    }

    /**
     * The same configuration carrying {@code ctx}, the application's object for the QP (ibverbs'
     * {@code qp_context}; null for none): the provider hands it back in
     * {@link WorkCompletion#qpContext} of every completion of the QP and in
     * {@link AsyncEvent#qpContext()} of the QP's events, by reference, so reaping allocates nothing.
     *
     * @param ctx the application's object for the QP, or null
     * @return the configuration with {@code ctx}
     */
    public QueuePairConfig withContext(Object ctx) {
        return new QueuePairConfig(pd, sendCq, recvCq, maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, maxInlineData,
                beforeConnect, srq, ctx, singleConsumer);
    }

    /**
     * The same configuration asking for a single-consumer QP (true) or one any thread may use
     * (false, the default). A single-consumer QP is used by one thread at a time together with the
     * CQs it completes into: its posts and every poll, spin or await of those CQs (a poll maps the
     * QP's completions back to its requests) come from one thread, or move to another thread only
     * across a happens-before edge (a lock, a volatile write and read, a thread start or join, a
     * concurrent queue), as when receives are posted in the {@link BeforeConnect} hook on the
     * connecting thread and the application thread posts and polls afterwards. Its CQs should be
     * single-consumer too ({@link Device#createCompletionQueue(int, CompletionChannel, boolean)}),
     * and every QP completing into them follows the same rule. {@link QueuePair#qpNum},
     * {@link QueuePair#state}, {@link QueuePair#caps} and {@link QueuePair#context} stay callable
     * from any thread. The QP's {@link Connection} is closed by that thread or after it stopped
     * using the QP. The full contract, and what happens when it is broken, is in
     * {@link CompletionQueue} ("Single-consumer mode").
     *
     * <p>Provider difference: DiSNI then posts and maps completions without taking a lock; soft
     * and ffm accept the option and keep their thread-safe QP ({@link QueuePair#singleConsumer()}
     * is false there).
     *
     * @param single true for a single-consumer QP
     * @return the configuration with the option
     */
    public QueuePairConfig withSingleConsumer(boolean single) {
        return new QueuePairConfig(pd, sendCq, recvCq, maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, maxInlineData,
                beforeConnect, srq, context, single);
    }
}
