package org.jwarp.ddp;

import java.nio.ByteBuffer;
import org.jwarp.memory.StagRegion;

/**
 * The one segment a {@link DdpReceiver} places directly, from {@code beginDirect} to
 * {@code endDirect}: what its validated header said, how far its payload got, and the view through
 * which the LLP reads the next bytes straight into registered memory under a placement lease
 * (RFC 5041 §8.3.1 (6)). The receiver validates, reports errors and completes; this holds the
 * state between those steps. Receive thread only; allocates nothing while reads keep going into
 * the regions they went into lately.
 */
final class DirectPlacement {
    // Writes into one region and Sends into another alternate, so a few views are kept; streams
    // sharing a region each keep their own. Least recently lent replaced.
    private static final int VIEW_CACHE = 4;

    boolean active;
    boolean tagged;
    boolean last;
    /** Tagged: the STag's region; {@code at} is an index into its buffer. */
    StagRegion region;
    int stag;
    /** Untagged: queue, slot and the segment's end; {@code at} is the message offset. */
    int qn;
    int slot;
    int end;
    int at;
    int rsvd;
    int rsvd32;
    int payload;
    /** The segment's header, reported with an error. */
    ByteBuffer seg;
    int index;
    int length;

    private StagRegion leased;
    private ByteBuffer lent;
    private final StagRegion[] cRegion = new StagRegion[VIEW_CACHE];
    private final ByteBuffer[] cView = new ByteBuffer[VIEW_CACHE];
    private int cNext;

    /** The header passed every check: its payload follows. */
    void start(boolean isTagged, boolean isLast, int ulp, int payloadLength, ByteBuffer header, int at0, int len) {
        active = true;
        tagged = isTagged;
        last = isLast;
        rsvd = ulp;
        payload = payloadLength;
        seg = header;
        index = at0;
        length = len;
    }

    /** Placement of this segment ended (completed, or the stream failed): forget the region and header. */
    void stop() {
        active = false;
        region = null;
        seg = null;
    }

    /** Placement failed midway: no more bytes go to the region; the header stays for the error report. */
    void abandon() {
        active = false;
        region = null;
    }

    /** A view lent by {@link #lend} is still out. */
    boolean lending() {
        return lent != null;
    }

    /** This receiver's view of {@code mr}, {@code [at, at + room)}, lent under the lease the caller acquired. */
    ByteBuffer lend(StagRegion mr, int from, int room) {
        ByteBuffer v = viewOf(mr);
        v.limit(v.capacity()).position(from).limit(from + room);
        leased = mr;
        lent = v;
        return v;
    }

    /** {@code n} bytes landed in the lent view: drops its lease (the view is kept unless the region was revoked). */
    void filled(int n) {
        StagRegion mr = leased;
        if (mr == null) {
            return;
        }
        leased = null;
        lent = null;
        mr.releasePlacement();
        if (!mr.isValid()) {
            for (int i = 0; i < VIEW_CACHE; i++) {
                if (cRegion[i] == mr) {
                    cRegion[i] = null; // revoked: keep no view of its memory
                    cView[i] = null;
                }
            }
        }
        at += n;
    }

    private ByteBuffer viewOf(StagRegion mr) {
        for (int i = 0; i < VIEW_CACHE; i++) {
            if (cRegion[i] == mr) {
                return cView[i];
            }
        }
        int i = cNext;
        cNext = (i + 1) % VIEW_CACHE;
        ByteBuffer v = mr.buffer().duplicate();
        cRegion[i] = mr;
        cView[i] = v;
        return v;
    }
}
