package org.jwarp.mpa;

import java.nio.ByteBuffer;

/**
 * The arrays of an {@link FpduSink}'s slice ring: for each payload slice an FPDU references
 * (RFC 5044 §4), the staging index it is spliced in before, its view, the pool the view came from
 * and its bytes not yet written. A table goes with a staging area, not with a stream: the sink
 * {@linkplain FpduSink#bind binds} it while its owner holds the area and has bytes to send, so an
 * idle stream holds none. Once drained every entry is null again, so the next borrower finds it
 * as new.
 */
public final class SliceTable {
    final int[] at = new int[FpduSink.SLICES];
    final ByteBuffer[] view = new ByteBuffer[FpduSink.SLICES];
    final PayloadViewPool[] viewOf = new PayloadViewPool[FpduSink.SLICES];
    final int[] rem = new int[FpduSink.SLICES];
}
