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
}
