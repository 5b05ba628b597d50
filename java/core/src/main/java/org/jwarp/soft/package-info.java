/**
 * The embedded pure-Java iWARP provider ({@code soft}, the default of
 * {@link org.jwarp.verbs.Rdma}): the verbs API over MPA (RFC 5044 §4 FPDUs, §7.1 setup with the
 * RFC 6581 enhanced connection establishment), DDP (RFC 5041) and RDMAP (RFC 5040), on plain TCP.
 *
 * <p>Structure: a {@link org.jwarp.soft.SoftProvider} owns a fixed number of NIO event loops
 * ({@code Reactor}, default one) that drive every listener and every connection; there is no
 * thread per QP. Application threads post into preallocated rings of a
 * {@link org.jwarp.soft.verbs.SoftQueuePair} and wake the loop; the loop moves the work into the wire
 * engine's {@code RdmapEndpoint}, writes FPDUs from a per-connection direct buffer (flushed on
 * OP_WRITE when TCP is full) and fills the {@link org.jwarp.soft.SoftCompletionQueue}. Connection
 * setup runs the foundation's {@code InitiatorNegotiator}/{@code ResponderNegotiator} with a
 * deadline on every step, a backlog limit, strict framing, the peer-to-peer RTR and the
 * responder's fence (RFC 6581 §9.2, RFC 5044 §7.1.2).
 *
 * <p>Wire behaviour follows the Linux siw interop rules of the project notes: Rev 2 with S, A and
 * both Write and Read RTR offered, CRC offered, ORD ≥ 1 for a Read RTR, FPDUs ≤ the path's MSS
 * rounded down to 8 (the
 * MSS derived from the local interface's MTU, capped at 65528 bytes by default (65480 on loopback, as siw); 1448 bytes when the MTU is
 * unknown), setup TERMs with CRC 0
 * sent and accepted, and nothing sent directly after an MPA frame.
 *
 * <p>An unexpected exception on a connection's data path (reactor, or an application thread
 * that reads or transmits inline) ends that connection alone: TERM 0/0/0 local catastrophic error
 * (RFC 5040 §4.8), QP to ERR, WRs flushed, QP_FATAL, {@code failure()} set. It is never thrown
 * out of an application's poll, await or post (a {@link VirtualMachineError} is, once the
 * connection ended).
 */
package org.jwarp.soft;
