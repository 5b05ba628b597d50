/**
 * The transport-neutral verbs API that storage and MPI-style middleware code against: devices,
 * protection domains, memory regions over direct buffers, completion queues, queue pairs, work
 * requests and a connection manager with RFC 6581 connection parameters.
 *
 * <p>The shape follows the RDMA verbs of RFC 5040 §8 (consumer interface) and the Linux
 * libibverbs/librdmacm model: a consumer registers memory in a protection domain, posts work
 * requests to a queue pair and reaps work completions from a completion queue. Connection setup
 * follows rdma_cm: {@code responder_resources} carries the local IRD and {@code initiator_depth}
 * the local ORD (RFC 6581 §9.1). Providers implement it behind {@link org.jwarp.verbs.RdmaProvider};
 * {@link org.jwarp.verbs.Rdma} finds them.
 *
 * <p>Thread-safety: each interface states its own, for both providers. In short: posts to a
 * {@link org.jwarp.verbs.QueuePair}, {@link org.jwarp.verbs.CompletionQueue#poll} and
 * {@link org.jwarp.verbs.CompletionQueue#await}, {@link org.jwarp.verbs.ProtectionDomain#register},
 * {@link org.jwarp.verbs.Listener#next} and the {@link org.jwarp.verbs.ConnectionManager} calls
 * may run from several threads at once; {@code close()} of a device, protection domain or CQ comes
 * once, after the threads using it have stopped, while a connection or memory region may be
 * closed under use. A CQ and its queue pairs created single-consumer
 * ({@link org.jwarp.verbs.Device#createCompletionQueue(int, org.jwarp.verbs.CompletionChannel, boolean)},
 * {@link org.jwarp.verbs.QueuePairConfig#withSingleConsumer}) are used by one thread at a time
 * instead, and a provider may then post and poll without locks (the contract is in
 * {@link org.jwarp.verbs.CompletionQueue}, "Single-consumer mode"). The records ({@link org.jwarp.verbs.DeviceInfo},
 * {@link org.jwarp.verbs.QueuePairCaps}, ...) are immutable. Work requests, scatter-gather lists
 * and {@link org.jwarp.verbs.WorkCompletion}s are mutable and reusable: one thread uses an instance
 * at a time.
 */
package org.jwarp.verbs;
