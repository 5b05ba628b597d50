/**
 * Connection setup of the soft provider (siw_cm): rdma_cm's listen and connect
 * ({@link org.jwarp.soft.cm.SoftConnectionManager}), the listener's accept with its limit on
 * pending handshakes and the eviction of silent ones ({@link org.jwarp.soft.cm.SoftListener}), the
 * TCP connect, the MPA Request/Reply exchange
 * for both roles ({@link org.jwarp.soft.cm.StreamSetup}, RFC 5044 §7.1.2 with the RFC 6581
 * enhanced connection establishment, decided by the foundation's negotiators), the Rev 1 retry
 * (RFC 6581 §10), the request a listener hands the ULP ({@link org.jwarp.soft.cm.SoftConnectionRequest}),
 * rdma_cm's parameters as negotiator settings ({@link org.jwarp.soft.cm.CmParameters}, §9.1/§9.2),
 * the TERMs of setup, sent with CRC 0 and recognised in place of an MPA frame or the first FPDU
 * ({@link org.jwarp.soft.cm.SetupTerm}), and the responder's check that the first FPDU is an RTR
 * the Reply offered ({@link org.jwarp.soft.cm.RtrGate}, §9.2).
 *
 * <p>Imports: {@code soft.loop} and {@code soft.verbs}; never the stream, transmit, receive or
 * the device. Setup sees the stream as {@link org.jwarp.soft.cm.SetupStream}, which owns the
 * connection's {@code Phase}; it ends by calling {@code SetupStream.establish(outcome)}, and FPDU
 * mode is the stream's. It sees the device as {@link org.jwarp.soft.cm.ConnectionHost}, which
 * makes the streams; a listener's established streams are watched above
 * ({@link org.jwarp.soft.cm.AcceptedStreams}: the idle timeout reads data-path progress, which
 * setup never sees). Checked by {@code LayeringTest}.
 */
package org.jwarp.soft.cm;
