/**
 * The embedded pure-Java iWARP provider ({@code soft}, the default of
 * {@link org.jwarp.verbs.Rdma}): the verbs API over MPA (RFC 5044 §4 FPDUs, §7.1 setup with the
 * RFC 6581 enhanced connection establishment), DDP (RFC 5041) and RDMAP (RFC 5040), on plain TCP.
 *
 * <p>Structure: a {@link org.jwarp.soft.SoftProvider} owns a fixed number of NIO event loops
 * ({@code soft.loop.Reactor}, default one) that drive every listener and every connection; there
 * is no thread per QP. Application threads post into preallocated rings of a
 * {@link org.jwarp.soft.verbs.SoftQueuePair} and wake the loop; the loop moves the work into the
 * wire engine's {@code RdmapEndpoint}, writes FPDUs from a borrowed staging area (flushed on
 * OP_WRITE when TCP is full) and fills the {@link org.jwarp.soft.cq.SoftCompletionQueue}. Connection
 * setup runs the foundation's {@code InitiatorNegotiator}/{@code ResponderNegotiator} with a
 * deadline on every step, a backlog limit, strict framing, the peer-to-peer RTR and the
 * responder's fence (RFC 6581 §9.2, RFC 5044 §7.1.2).
 *
 * <p>Sub-packages, by concern as in Linux siw, each importing only those before it (checked by
 * {@code LayeringTest}):
 * <ol>
 *   <li>{@code soft.loop}: the event loop ({@code Reactor}) and a connection's I/O lock
 *       ({@code IoLock}).
 *   <li>{@code soft.tx}: transmit buffers (staging areas lent by {@code DirectBufferPool}, the
 *       zero-copy {@code TxGather}, FPDU sizing) and what a revoked region means for bytes the
 *       gather still references ({@code SourceRevocation}, RFC 5041 §8.3).
 *   <li>{@code soft.verbs}: the verbs objects and memory (siw_verbs, siw_mem): PD, MR, QP with its
 *       send and receive rings, SRQ; they see the device, the connection and the CQ only as the
 *       narrow interfaces {@code DeviceResources}, {@code QpConnection}, {@code CompletionSink}.
 *   <li>{@code soft.cq}: completion queues and receive polling (siw_cq); a connection is a
 *       {@code PolledStream} there.
 *   <li>{@code soft} itself, on top: the provider, its config and device, and the connection.
 *       The connection side ({@code SoftConnectionManager}, {@code SoftListener},
 *       {@code SoftConnectionRequest}, {@code SoftConnection}, and {@code SoftStream} with its setup
 *       {@code StreamSetup} (siw_cm), transmit pump {@code StreamTransmit} (siw_qp_tx), receive pump
 *       {@code StreamReceive} (siw_qp_rx), teardown {@code StreamClose} and the engine glue
 *       {@code SoftDataPath}) sees its device only as {@code ConnectionHost} and names neither
 *       {@code SoftDevice} nor {@code SoftProvider}. Each helper keeps what it writes private:
 *       the MPA outcome and frames in {@code StreamSetup}, {@code failure()} in
 *       {@code StreamClose}, the staged buffer and gather in {@code StreamTransmit}; the stream
 *       owns its phase, socket and deadlines. These ten classes still call each other both ways
 *       and are not split into sub-packages yet.
 * </ol>
 *
 * <p>An outbound RDMA Write, class by class: {@code SoftQueuePair.postSend} checks the WR
 * (RFC 5040 §7, {@code WorkRequestChecks}) into {@code SoftSendQueue}'s ring under the QP lock and
 * calls {@code QpConnection.kick} ({@code SoftStream} → {@code StreamTransmit.kick}); the posting
 * thread, if it wins the connection's I/O lock, or else the reactor, runs {@code SoftDataPath.pump}:
 * {@code SoftQueuePair.issueSends} marks the WRs issued, {@code StreamTransmit.staging} borrows a
 * staging area from the device's pool ({@code ConnectionHost.buffers}) and keeps it private, and
 * {@code RdmapEndpoint.transmit} pulls the next WR through the {@code SendRing}
 * interface (the send ring), segments it ({@code DdpSegmenter}, RFC 5041 §5) and frames it
 * ({@code FpduEncoder}, RFC 5044 §4) into {@code TxGather} (its {@code FpduSink}: headers staged,
 * payload referenced in the region). When the last FPDU is framed the engine calls
 * {@code SendRing.done}; {@code SoftSendQueue} records the WR in {@code TxGather}'s completions,
 * {@code StreamTransmit.flush} writes the gather to the socket, and
 * {@code SoftDataPath.completeAccepted} completes the WR into the {@code SoftCompletionQueue}
 * (through {@code CompletionSink}) once the socket accepted its last byte.
 *
 * <p>An inbound tagged segment (a Write's or a Read Response's DDP segment): the reactor's
 * selector, or a CQ's {@code CqPoller} through {@code PolledStream.pollReceive}, makes
 * {@code StreamReceive} read the socket into the loop's receive buffer ({@code readOnce}, under the
 * I/O lock); {@code SoftStream.consume} hands the bytes, by phase, to
 * {@code SoftDataPath.onBytes} (the first FPDU checked for TERM and RTR by {@code RtrGate}), which
 * calls {@code RdmapEndpoint.receive}: {@code FpduDecoder} (CRC, RFC 5044
 * §4), then {@code DdpReceiver}, whose tagged check (RFC 5041 §7.1, {@code TaggedBufferCheck})
 * asks {@code InboundDispatch} and {@code StagTable} before any byte is placed into the region's buffer. A Write
 * completes nothing locally; the last segment of a Read Response makes the engine call
 * {@code SendRing.done}, and {@code SoftSendQueue} completes the Read WR into the send CQ.
 * Both paths still turn back up once: the engine pulls the WR from {@code soft.verbs} through
 * {@code SendRing} and writes into {@code soft.tx} through {@code FpduSink}, interfaces the engine
 * owns.
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
