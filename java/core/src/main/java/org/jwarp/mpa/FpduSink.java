package org.jwarp.mpa;

import java.nio.ByteBuffer;

/**
 * Where a gathering transmitter takes an FPDU's payload by reference instead of by copy (zero-copy
 * transmit of RFC 5044 §4 FPDUs): the FPDU's MPA length field and DDP/RDMAP header are written
 * into the staging buffer, the payload stays in the caller's (registered) memory, and the pad and
 * CRC follow the header in the staging buffer; the sink splices the payload in between when the
 * bytes are written to the socket ({@link FpduEncoder#finishGathered}).
 */
public interface FpduSink {
    /** Whether a payload of {@code length} bytes can be referenced now (false: flush first). */
    boolean canReference(int length);

    /**
     * References {@code length} bytes of {@code src} from absolute index {@code index}, to be written
     * just before staging-buffer index {@code at}; returns a view of exactly those bytes
     * ({@code position}..{@code limit}) private to this sink. {@code src} may be shared with other
     * threads: it is read by absolute index only. Called once the room for the FPDU's staging bytes
     * was checked ({@link #canReference}, {@link FpduEncoder#gatheredStagingLength}); the caller then
     * completes them with {@link FpduEncoder#finishGathered(java.nio.ByteBuffer, int, ByteBuffer)}
     * over the returned view, which cannot fail then, so a reference is never left without its FPDU.
     */
    ByteBuffer reference(int at, ByteBuffer src, int index, int length);
}
