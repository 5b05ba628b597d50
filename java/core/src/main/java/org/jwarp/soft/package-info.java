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
 *   <li>{@code soft.cm}: connection setup (siw_cm): {@code SoftConnectionManager} (rdma_cm's
 *       listen and connect), {@code SoftListener} (accept, the pending-handshake backlog and
 *       eviction), {@code StreamSetup} runs the connect and the MPA Request/Reply exchange and
 *       offers the ULP a {@code SoftConnectionRequest}; {@code CmParameters} maps rdma_cm's
 *       parameters onto the negotiators; {@code SetupTerm} sends and recognises setup TERMs;
 *       {@code RtrGate} checks the responder's first FPDU. It sees the stream only as
 *       {@code SetupStream} (which owns the connection's {@code Phase}) and hands over with
 *       {@code SetupStream.establish(outcome)}; it sees the device as {@code ConnectionHost}
 *       (the setup deadlines as {@code CmSettings}, which {@code SoftConfig} provides), which also
 *       makes the streams: {@code initiator}, and per listener {@code accepted}
 *       ({@code AcceptedStreams}).
 *   <li>{@code soft} itself, on top: the provider, its config and device, and the connection.
 *       The connection side ({@code SoftConnection}, and {@code SoftStream} with its transmit pump
 *       {@code StreamTransmit} (siw_qp_tx), receive pump {@code StreamReceive} (siw_qp_rx),
 *       teardown {@code StreamClose} and the engine glue {@code SoftDataPath}, and
 *       {@code ListenerStreams}, a listener's accepted streams with the idle sweep that reads
 *       their data-path progress) sees its device only as {@code StreamHost} (cm's
 *       {@code ConnectionHost} with the whole config and the staging pool) and names neither
 *       {@code SoftDevice} nor {@code SoftProvider}. Each helper keeps what it writes private: the MPA outcome and
 *       frames in {@code StreamSetup}, {@code failure()} in {@code StreamClose}, the staged buffer
 *       and gather in {@code StreamTransmit}; the stream owns its phase, socket and deadlines.
 *       These classes still call each other both ways and are not split into sub-packages yet.
 * </ol>
 *
 * <p>An outbound RDMA Write goes down, class by class:
 * <ol>
 *   <li>{@code SoftQueuePair.postSend} checks the WR (RFC 5040 §7, {@code WorkRequestChecks}) into
 *       {@code SoftSendQueue}'s ring under the QP lock and calls {@code QpConnection.kick}
 *       ({@code SoftStream} → {@code StreamTransmit.kick}).
 *   <li>The posting thread, if it wins the connection's I/O lock, or else the reactor, runs
 *       {@code SoftDataPath.pump}: {@code SoftQueuePair.issueSends} releases the WRs the ORD and
 *       fences let go, {@code StreamTransmit.staging} borrows a staging area from the device's pool
 *       ({@code StreamHost.buffers}), and {@code RdmapEndpoint.transmit} runs.
 *   <li>{@code TransmitOrder} puts Read Responses between messages; {@code SendTransmitter} pulls the
 *       next WR through {@code SendRing.nextKind}/{@code take}, which copies it into the engine's own
 *       {@code SendWork}: the one place the engine asks the layer above for anything, and nothing of
 *       the ring is read back while the WR is segmented.
 *   <li>{@code SendTransmitter} cuts the copy into DDP tagged segments ({@code DdpSegmenter},
 *       {@code DdpHeader}, RFC 5041 §5.2) and {@code FpduEncoder} frames each (RFC 5044 §4) into the
 *       staging buffer, a large payload referenced, not copied, into mpa's {@code FpduSink}: the
 *       slice table and its payload view pools, which {@code SoftDataPath} hands down with the
 *       buffer ({@code TxGather.sink}). The engine only writes into it; nothing calls back up.
 *   <li>{@code StreamTransmit.flush} has {@code TxGather} lay the staged runs and the sink's slices
 *       out in one iovec and write it to the socket; it settles and pops the slices the socket took.
 * </ol>
 * Only the end of the WR goes back up: after its last FPDU the engine calls {@code SendRing.done},
 * {@code SoftSendQueue} records the WR in {@code TxGather}'s completions, and
 * {@code SoftDataPath.completeAccepted} completes it into the {@code SoftCompletionQueue} (through
 * {@code CompletionSink}) once the socket accepted its last byte.
 *
 * <p>An inbound tagged segment (a Write's or a Read Response's) goes up, class by class:
 * <ol>
 *   <li>The reactor's selector, or a CQ's {@code CqPoller} through {@code PolledStream.pollReceive},
 *       makes {@code StreamReceive.readOnce} read the socket under the I/O lock: into the loop's
 *       receive buffer, or, for the rest of a large segment whose header passed the checks, straight
 *       into the region: the engine's one {@code PlacementHandle} ({@code RdmapEndpoint.placement},
 *       its {@code FpduDecoder}) lends a view that {@code DdpReceiver}'s {@code DirectPlacement}
 *       holds a placement lease on, and sizes the reads; {@code SoftDataPath.directTarget} only adds
 *       the connection's own gates.
 *   <li>{@code SoftStream.consume} hands the bytes, by phase, to {@code SoftDataPath.onBytes} (the
 *       first FPDU checked for TERM and RTR by {@code RtrGate}), which calls
 *       {@code RdmapEndpoint.receive}.
 *   <li>{@code FpduDecoder} frames and checks the CRC (RFC 5044 §4) and hands the ULPDU to
 *       {@code DdpReceiver.receive}.
 *   <li>{@code TaggedBufferCheck.check}, the one RFC 5041 §7.1 entry point, asks the ULP
 *       ({@code InboundDispatch.checkTagged}: RDMAP version and opcode, a Read Response only with a
 *       Read outstanding; {@code expectedWindow}: its Read Request's sink), then the memory in
 *       {@code RemoteStagCheck}'s order ({@code StagTable} and {@code StagRegion} answer what the
 *       region is), and decides the TERM code; then {@code DdpReceiver}
 *       places the payload into the region's buffer under a placement lease.
 *   <li>On the last segment {@code DdpReceiver} reports the message up
 *       ({@code InboundDispatch.onTaggedMessage}): a Write completes nothing locally; a Read
 *       Response ends the oldest Read ({@code SendTransmitter.readResponseDone} →
 *       {@code SendRing.done}), and {@code SoftSendQueue} completes the Read WR into the send CQ.
 * </ol>
 *
 * <p>Wire behaviour follows the Linux siw interop rules of the project notes: Rev 2 with S, A and
 * both Write and Read RTR offered, CRC offered, ORD ≥ 1 for a Read RTR, FPDUs ≤ the path's MSS
 * rounded down to 8 (the
 * MSS derived from the local interface's MTU, or loopback's when the peer is one of this host's own addresses, capped at 65528 bytes by default (65480 on loopback, as siw); 1448 bytes when the MTU is
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
