/**
 * The soft provider's verbs objects and memory (siw_verbs' objects and siw_mem): protection
 * domains and their regions (RFC 5040 §2.1 STags, registered in the device's table), queue pairs
 * with their send ring ({@code SoftSendQueue}, the engine's {@link org.jwarp.rdmap.SendRing}) and
 * receive ring, shared receive queues, and the {@link org.jwarp.soft.verbs.ReceiveFeed} that hands
 * posted receives to the engine. The work-request checks of RFC 5040 §7 run here, on the posting
 * thread.
 *
 * <p>Imports: {@code soft.tx} only. What these objects need from above is a narrow interface
 * owned here: the device as {@link org.jwarp.soft.verbs.DeviceResources} (STag table, events), the
 * connection a QP is attached to as {@link org.jwarp.soft.verbs.QpConnection} (kick, local TERM),
 * the completion queue as {@link org.jwarp.soft.verbs.CompletionSink}. The limits they enforce are
 * {@link org.jwarp.soft.verbs.SoftLimits}. Checked by {@code LayeringTest}.
 */
package org.jwarp.soft.verbs;
