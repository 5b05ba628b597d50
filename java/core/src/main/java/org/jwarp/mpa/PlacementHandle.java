package org.jwarp.mpa;

import java.nio.ByteBuffer;

/**
 * A stream reader's one handle on direct placement (RFC 5041 §7.1 checks passed, payload due):
 * when the next stream bytes are payload of a large FPDU whose header was validated, it lends a
 * view of where they go (DDP holds a placement lease on the region meanwhile), the reader reads the
 * socket into it and reports how much landed. The reader asks for nothing else, so the engine
 * above does not forward each call. Used under the stream's I/O lock; allocates nothing.
 */
public interface PlacementHandle {
    /**
     * Where the next stream bytes go, from the view's position to its limit, when at least
     * {@code minBytes} payload bytes of a directly placed FPDU are due; null: read and feed the
     * stream as usual. A non-null view must be followed by {@link #directRead} at once, also when
     * the read failed.
     */
    ByteBuffer directTarget(int minBytes);

    /** As {@link #directTarget(int)} with one byte due. */
    default ByteBuffer directTarget() {
        return directTarget(1);
    }

    /** {@code n} bytes were read into the view {@link #directTarget} returned, from its start; its lease is dropped. */
    void directRead(int n);

    /** ULPDU length of the FPDU being placed directly (payload or pad and CRC still due), else 0. */
    int directLength();

    /** Stream bytes still due for the FPDU being placed directly (payload rest, pad, CRC); a reader sizes its next read by it. */
    int directDue();
}
