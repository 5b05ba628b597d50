package org.jwarp.rdmap;

import org.jwarp.ground.TermCode;
/**
 * Events of an {@link RdmapEndpoint}, RFC 5040 §5 (data transfer completions) and §6/§7 (errors and
 * termination). Called on the thread that drives the endpoint, from inside {@code receive} or
 * {@code transmit}; implementations must not call back into {@code receive}/{@code transmit}
 * re-entrantly, but may post work requests.
 */
public interface RdmapListener {

    /**
     * A signalled send-queue work request completed, in posting order: a Send or RDMA Write once
     * its last FPDU was handed to the transport (RFC 5040 §5.1, §5.3), an RDMA Read once its whole
     * Read Response was placed (§5.2). {@code opcode} is the {@link RdmapOpcode} posted. Only for
     * WRs posted to the endpoint's internal ring: a {@link SendRing} given to the endpoint is told
     * through {@link SendRing#done} and reports its own completions.
     */
    default void onSendCompletion(long wrId, int opcode, int byteLength) {
    }

    /**
     * A Send message was placed into the receive buffer posted as {@code wrId} (RFC 5040 §5.3).
     * {@code invalidatedStag} is the STag the peer invalidated (Send with Invalidate), else 0.
     */
    void onReceiveCompletion(long wrId, int opcode, int byteLength, int invalidatedStag);

    /**
     * This side detected an error (RFC 5040 §7, RFC 5041 §7.1, RFC 5044 §8): inbound processing has
     * stopped and a Terminate message carrying {@code code} is queued as the last outgoing message.
     */
    void onLocalError(TermCode code, String detail);

    /** The peer sent a Terminate message (RFC 5040 §4.8); the stream is dead, no TERM is sent back. */
    void onPeerTerminate(TerminateMessage term);

    /** The first valid FPDU arrived (what a responder waits for after negotiating an RTR, RFC 6581 §5). */
    default void onFirstFpdu() {
    }

    /**
     * An untagged Send segment arrived and no receive buffer is posted on the Send queue (a
     * new message over the in-order LLP). The listener may post one now with
     * {@link RdmapEndpoint#postReceive} (a shared receive queue hands out its next buffer here); if
     * it does not, the segment fails with RFC 5041 §7.2 error 2/2 as before.
     */
    default void onReceiveNeeded() {
    }

    /**
     * The receive buffer posted as {@code wrId} lies in a region revoked after it was posted
     * (RFC 5041 §8.3.1 (6)): a Send arrived for it and placed nothing. The receive is off the
     * engine's queue (no flush reports it); the stream terminates right after (DDP 0/0).
     */
    default void onReceiveRevoked(long wrId) {
    }

    /**
     * The receive buffer posted as {@code wrId} is too short for the Send arriving for it (RFC 5041
     * §7.1 check 2.2). The receive is off the engine's queue (no flush reports it); the stream
     * terminates right after (TERM DDP 2/5, §7.2).
     */
    default void onReceiveTooShort(long wrId) {
    }

    /** A work request left outstanding when {@link RdmapEndpoint#flush()} was called. */
    default void onFlushed(long wrId, boolean receiveQueue) {
    }
}
