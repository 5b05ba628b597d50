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
 */
package org.jwarp.verbs;
