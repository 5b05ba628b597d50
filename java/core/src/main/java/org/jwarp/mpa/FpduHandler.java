package org.jwarp.mpa;

import java.nio.ByteBuffer;
import org.jwarp.ground.TermCode;

/**
 * Receives what {@link FpduDecoder} finds in the TCP stream, RFC 5044 §4: each complete, CRC-valid
 * ULPDU (a DDP segment), or the one framing error after which the stream is dead.
 */
public interface FpduHandler {

    /**
     * A complete ULPDU of {@code length} bytes at absolute {@code index} of {@code buffer}. The
     * bytes are valid only during the call; the buffer's position and limit must not be changed.
     */
    void onUlpdu(ByteBuffer buffer, int index, int length);

    /**
     * The stream failed MPA checks: {@link TermCode#MPA_CRC_ERROR} (RFC 5044 §4.4) or
     * {@link TermCode#MPA_MARKER_OR_FPDU_ERROR} (§4.3). Called once; later bytes are discarded.
     */
    void onFpduError(TermCode code, String detail);

    /**
     * Direct placement (optional): how many leading ULPDU bytes, given the first one, the handler
     * needs to see before it can take the rest of a ULPDU that did not arrive in one chunk straight
     * from the stream ({@link #beginDirect}); 0 (the default) when it never does.
     */
    default int directHeaderLength(int firstByte) {
        return 0;
    }

    /**
     * A ULPDU of {@code length} bytes did not arrive whole; its first {@code headerLength} bytes are
     * at {@code buffer[index, ...)} and stay there until the ULPDU ends. True: the handler validated
     * the header and takes the remaining bytes through {@link #placeDirect}, before the CRC is known;
     * {@link #endDirect} follows once the CRC matched, {@link #onFpduError} if it did not. False
     * (the default): the decoder gathers the ULPDU and hands it to {@link #onUlpdu} as usual.
     */
    default boolean beginDirect(ByteBuffer buffer, int index, int headerLength, int length) {
        return false;
    }

    /**
     * The next {@code n} bytes of the ULPDU begun by {@link #beginDirect}, at absolute
     * {@code index} of {@code buffer} (valid only during the call). False: the handler failed the
     * stream (it reported why); the decoder discards everything after.
     */
    default boolean placeDirect(ByteBuffer buffer, int index, int n) {
        return false;
    }

    /**
     * Direct read (optional): while a ULPDU taken by {@link #beginDirect} waits for payload, a view
     * of where its next bytes go, {@code [position, limit)} of at most {@code max} bytes, so the
     * caller can read the stream straight into the target. The handler holds what guards the target
     * (a placement lease) until {@link #directFilled}, which follows before any other call. Null
     * (the default): the bytes come through {@link #placeDirect}; also when the target can no
     * longer be written (revoked), after the handler reported that error.
     */
    default ByteBuffer directTarget(int max) {
        return null;
    }

    /** {@code n} bytes (0 allowed) landed in the view {@link #directTarget} returned; the handler releases it. */
    default void directFilled(int n) {
    }

    /** The ULPDU begun by {@link #beginDirect} is complete and its CRC (if negotiated) matched. */
    default void endDirect() {
    }
}
