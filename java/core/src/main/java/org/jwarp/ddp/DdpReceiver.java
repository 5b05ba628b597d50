package org.jwarp.ddp;

import java.nio.ByteBuffer;
import org.jwarp.memory.StagRegion;
import org.jwarp.memory.StagDomain;
import org.jwarp.memory.StagTable;
import org.jwarp.ground.TermCode;

/**
 * The Data Sink side of one DDP stream, RFC 5041 §5 and §7: validates every segment before a byte
 * is placed (§7.1), places payload straight into the ULP buffer (tagged: the registered region of
 * the STag; untagged: the buffer posted for the QN and MSN), in any order of arrival (§5.2), and
 * delivers untagged messages in MSN order, each at most once (§5.3, §5.4).
 *
 * <p>Tagged checks: {@link TaggedBufferCheck}, the one place that decides them. Untagged checks: DDP version, QN valid
 * (2/1), MSN with a buffer (2/2 for the next expected MSN with no buffer posted, 2/3 for any other
 * MSN outside the posted range), MO within the buffer (2/4), MO + length within the buffer (2/5).
 * Zero-length tagged segments are not checked against the STag (§7.1 covers non-zero segments);
 * zero-length untagged segments still consume a buffer and MSN.
 *
 * <p>Placement is counted by coverage, not by bytes received (RFC 5041 §5.4: a message is
 * delivered at most once, and only after every byte of it was placed): a segment that repeats an
 * already placed MSN/MO range (a duplicate, which a conforming Data Source over a reliable LLP
 * never sends, §5.2) is placed again but adds nothing, so it can neither complete a message with a
 * hole nor deliver it twice. An exact duplicate of the L segment (same MSN, same end) is tolerated
 * likewise; an L segment with another end is 2/4. Out-of-order coverage beyond the in-order
 * high-water mark is kept in a bounded, preallocated set of ranges per posted buffer
 * ({@link #DEFAULT_OUT_OF_ORDER_RANGES} unless configured); a segment that would need one more
 * range is a DDP local catastrophic error (0/0, §7.2: a local resource limit), reported before
 * it is placed. Over an in-order LLP (MPA over TCP, RFC 5044) a conforming peer never uses a range.
 *
 * <p>On the first error the segment is dropped, {@link DdpReceiveHandler#onError} is called, and
 * every later segment is dropped silently (§7.1); the ULP may still send one message (the TERM).
 * Out-of-order placement is supported for untagged messages (tracked per buffer) and for tagged
 * segments; a tagged message ends with its L segment, which an in-order LLP delivers last.
 *
 * <p>Direct placement ({@link #beginDirect}, {@link #placeDirect}, {@link #endDirect}): a segment
 * whose payload has not arrived yet is validated from its header alone, with exactly the checks
 * above, and its payload is then placed piece by piece as the LLP receives it; it completes only
 * after the LLP verified it (the MPA CRC). If that verification fails, the bytes already placed
 * stay where they were placed (the tagged region or the posted buffer holds undefined content
 * for that range) and the stream terminates; no completion reports them.
 *
 * <p>Not thread-safe: one thread feeds a receiver. Revocation of an STag from another thread is
 * fenced (RFC 5041 §8.3.1 (6)): a tagged segment holds a placement lease on its region from
 * validation until its payload is in, and {@code StagTable.invalidate}/{@code deregister} wait for
 * it, so once either returns no byte of any segment lands in the region; a segment that finds the
 * region revoked is the §7.1 invalid-STag error (1/0), reported before a byte is placed.
 * Untagged buffers posted with their region ({@link #postUntagged(int, StagRegion, ByteBuffer,
 * int, int, long)}) are fenced the same way: a segment for a buffer whose region was revoked after
 * it was posted places nothing, the buffer is handed back
 * ({@link DdpReceiveHandler#onUntaggedBufferRevoked}) and the stream fails with a local
 * catastrophic error (0/0, §7.2: the fault is this side's, as siw reports it).
 */
public final class DdpReceiver {
    /** Out-of-order ranges per posted untagged buffer unless the constructor is given another bound. */
    public static final int DEFAULT_OUT_OF_ORDER_RANGES = 4;

    private final StagDomain pd;
    private final TaggedBufferCheck taggedCheck;
    private final DdpReceiveHandler handler;
    private Object stream = this;
    private final UntaggedQueue[] queues;
    private final DdpHeader hdr = new DdpHeader();
    private boolean failed;
    private int taggedLength;
    // Results of the last successful untagged check (receive thread only).
    private int vSlot;
    private int vEnd;
    private final DirectPlacement dp = new DirectPlacement();
    private long segments;

    /**
     * @param pd          the protection domain of this stream (RFC 5041 §8.2)
     * @param stags       where tagged STags are resolved
     * @param queueDepths one entry per valid QN: the most buffers that can be posted on it
     * @param handler     the ULP
     */
    public DdpReceiver(StagDomain pd, StagTable stags, int[] queueDepths, DdpReceiveHandler handler) {
        this(pd, stags, queueDepths, handler, DEFAULT_OUT_OF_ORDER_RANGES);
    }

    /**
     * @param pd               the protection domain of this stream (RFC 5041 §8.2)
     * @param stags            where tagged STags are resolved
     * @param queueDepths      one entry per valid QN: the most buffers that can be posted on it
     * @param handler          the ULP
     * @param outOfOrderRanges disjoint byte ranges each untagged buffer can hold beyond its in-order
     *                         part while segments arrive out of order (at least 1)
     */
    public DdpReceiver(StagDomain pd, StagTable stags, int[] queueDepths, DdpReceiveHandler handler,
            int outOfOrderRanges) {
        this(pd, stags, queueDepths, handler, outOfOrderRanges, 1);
    }

    /**
     * As above, with untagged buffers of up to {@code maxSge} pieces each (a scatter list, placed
     * in order as one RFC 5041 §5.3 buffer).
     */
    public DdpReceiver(StagDomain pd, StagTable stags, int[] queueDepths, DdpReceiveHandler handler,
            int outOfOrderRanges, int maxSge) {
        this(pd, stags, queueDepths, handler, outOfOrderRanges, sameForEach(queueDepths.length, maxSge));
    }

    /**
     * As above, the buffers of queue {@code i} made of up to {@code maxSge[i]} pieces: only a queue
     * the ULP posts scatter lists on needs more than one (RDMAP's Send queue; its Read Request and
     * Terminate queues take one piece per buffer, RFC 5040 §4.4 and §4.8), and each piece costs
     * every buffer of the queue its bookkeeping.
     */
    public DdpReceiver(StagDomain pd, StagTable stags, int[] queueDepths, DdpReceiveHandler handler,
            int outOfOrderRanges, int[] maxSge) {
        if (maxSge.length != queueDepths.length) {
            throw new IllegalArgumentException("maxSge has " + maxSge.length + " entries for " + queueDepths.length
                    + " queues");
        }
        this.pd = pd;
        this.taggedCheck = new TaggedBufferCheck(pd, stags, handler);
        this.handler = handler;
        this.queues = new UntaggedQueue[queueDepths.length];
        for (int i = 0; i < queueDepths.length; i++) {
            queues[i] = new UntaggedQueue(Math.max(1, queueDepths[i]), 1, outOfOrderRanges, maxSge[i]);
        }
    }

    private static int[] sameForEach(int n, int v) {
        int[] a = new int[n];
        java.util.Arrays.fill(a, v);
        return a;
    }

    /**
     * Names this DDP stream for the RFC 5041 §8.2 stream association: a region bound to another key
     * ({@link org.jwarp.memory.StagRegion#bindStream}) is not placed into (error 1/2). Until set,
     * the key is this receiver, which no region is bound to.
     */
    public void streamKey(Object key) {
        stream = key == null ? this : key;
    }

    public Object streamKey() {
        return stream;
    }

    public StagDomain pd() {
        return pd;
    }

    /** True once an error was reported or {@link #fail()} was called. */
    public boolean failed() {
        return failed;
    }

    /** Stops placement: every later segment is dropped silently (RFC 5041 §7.1, ULP-detected error). */
    public void fail() {
        failed = true;
        dp.stop();
    }

    /** Segments accepted (placed) so far. */
    public long segmentCount() {
        return segments;
    }

    /**
     * Posts an untagged buffer of {@code capacity} bytes at {@code buffer[offset..]} on queue
     * {@code qn}; it receives the next unassigned MSN. {@code cookie} is returned on delivery.
     */
    public void postUntagged(int qn, ByteBuffer buffer, int offset, int capacity, long cookie) {
        postUntagged(qn, null, buffer, offset, capacity, cookie);
    }

    /**
     * As {@link #postUntagged(int, ByteBuffer, int, int, long)}, the buffer lying in the registered
     * {@code region} (null: unfenced memory): placement holds a lease on it and a revoked region
     * receives nothing (RFC 5041 §8.3.1 (6)); its bytes may also be read straight from the LLP.
     */
    public void postUntagged(int qn, StagRegion region, ByteBuffer buffer, int offset, int capacity, long cookie) {
        if (qn < 0 || qn >= queues.length) {
            throw new IllegalArgumentException("no untagged queue " + qn + " (RFC 5041 §5.1)");
        }
        if (offset < 0 || capacity < 0 || offset > buffer.capacity() - capacity) {
            throw new IllegalArgumentException("untagged buffer [" + offset + ", +" + capacity + ") outside buffer of "
                    + buffer.capacity());
        }
        queues[qn].post(region, buffer, offset, capacity, cookie);
    }

    /**
     * Posts an untagged buffer made of {@code n} pieces {@code buffers[i][offsets[i], +lengths[i])}
     * on queue {@code qn}, filled in order (a scatter list); the arrays are copied, so the caller
     * may reuse them.
     */
    public void postUntagged(int qn, ByteBuffer[] buffers, int[] offsets, int[] lengths, int n, long cookie) {
        postUntagged(qn, null, buffers, offsets, lengths, n, cookie);
    }

    /** As above, piece i lying in {@code regions[i]} (a null array or entry: unfenced memory). */
    public void postUntagged(int qn, StagRegion[] regions, ByteBuffer[] buffers, int[] offsets, int[] lengths, int n,
            long cookie) {
        if (qn < 0 || qn >= queues.length) {
            throw new IllegalArgumentException("no untagged queue " + qn + " (RFC 5041 §5.1)");
        }
        for (int i = 0; i < n; i++) {
            if (offsets[i] < 0 || lengths[i] < 0 || offsets[i] > buffers[i].capacity() - lengths[i]) {
                throw new IllegalArgumentException("untagged buffer piece " + i + " [" + offsets[i] + ", +" + lengths[i]
                        + ") outside buffer of " + buffers[i].capacity());
            }
        }
        queues[qn].post(regions, buffers, offsets, lengths, n, cookie);
    }

    /** Buffers posted on {@code qn} and not yet delivered. */
    public int postedCount(int qn) {
        return queues[qn].count();
    }

    /** Room left on {@code qn}. */
    public int freeSlots(int qn) {
        return queues[qn].depth() - queues[qn].count();
    }

    /** Cookies of the undelivered buffers on {@code qn}, oldest first, into {@code out}; returns the count. */
    public int pendingCookies(int qn, long[] out) {
        UntaggedQueue q = queues[qn];
        int n = Math.min(out.length, q.count());
        for (int i = 0; i < n; i++) {
            out[i] = q.cookies[(q.head() + i) % q.depth()];
        }
        return n;
    }

    /** Validates and places one DDP segment (an MPA ULPDU) of {@code length} bytes at {@code index}. */
    public void receive(ByteBuffer seg, int index, int length) {
        if (failed) {
            return;
        }
        if (length < 1) {
            error(TermCode.DDP_LOCAL_CATASTROPHIC, seg, index, length);
            return;
        }
        hdr.wrap(seg, index);
        int control = hdr.control();
        boolean tagged = (control & DdpHeader.T_FLAG) != 0;
        int hl = DdpHeader.headerLength(control);
        if (length < hl) {
            error(TermCode.DDP_LOCAL_CATASTROPHIC, seg, index, length);
            return;
        }
        if ((control & DdpHeader.DV_MASK) != DdpHeader.DDP_VERSION) {
            error(tagged ? TermCode.DDP_TAGGED_INVALID_VERSION : TermCode.DDP_UNTAGGED_INVALID_VERSION, seg, index,
                    length);
            return;
        }
        boolean last = (control & DdpHeader.L_FLAG) != 0;
        if (tagged) {
            receiveTagged(seg, index, length, last);
        } else {
            receiveUntagged(seg, index, length, last);
        }
    }

    private void receiveTagged(ByteBuffer seg, int index, int length, boolean last) {
        int rsvd = hdr.rsvdUlp();
        int stag = hdr.stag();
        long to = hdr.to();
        int payload = length - DdpHeader.TAGGED_HEADER_LENGTH;
        TermCode code = taggedCheck.check(rsvd, stag, to, payload, stream);
        if (code != null) {
            error(code, seg, index, length);
            return;
        }
        if (payload > 0) {
            StagRegion mr = taggedCheck.takeRegion();
            if (!mr.acquirePlacement()) {
                error(TaggedBufferCheck.revoked(), seg, index, length); // revoked since the check (§8.3.1 (6))
                return;
            }
            try {
                mr.buffer().put(mr.indexOf(to), seg, index + DdpHeader.TAGGED_HEADER_LENGTH, payload);
            } finally {
                mr.releasePlacement();
            }
        }
        completeTagged(rsvd, stag, payload, last);
    }

    private void completeTagged(int rsvd, int stag, int payload, boolean last) {
        segments++;
        taggedLength += payload;
        if (last) {
            int len = taggedLength;
            taggedLength = 0;
            handler.onTaggedMessage(rsvd, stag, len);
        }
    }

    private void receiveUntagged(ByteBuffer seg, int index, int length, boolean last) {
        int qn = hdr.qn();
        int msn = hdr.msn();
        int mo = hdr.mo();
        int payload = length - DdpHeader.UNTAGGED_HEADER_LENGTH;
        TermCode code = checkUntaggedSegment(qn, msn, mo, hdr.rsvdUlp(), payload, last);
        if (code != null) {
            if (code == TermCode.DDP_UNTAGGED_MESSAGE_TOO_LONG) {
                untaggedTooShort(qn, msn, mo, payload);
            }
            error(code, seg, index, length);
            return;
        }
        UntaggedQueue q = queues[qn];
        int s = vSlot;
        int end = vEnd;
        if (payload > 0 && !q.place(s, mo, seg, index + DdpHeader.UNTAGGED_HEADER_LENGTH, payload)) {
            untaggedRevoked(qn, s, seg, index, length);
            return;
        }
        completeUntagged(qn, q, s, end, last, hdr.rsvdUlp(), hdr.rsvdUlp32());
    }

    /**
     * RFC 5041 §7.1 untagged checks, then the coverage of the bytes (a local resource limit, §7.2
     * 0/0, when one more out-of-order range is needed); on success the slot and the segment's end
     * are left in {@link #vSlot} and {@link #vEnd}.
     */
    private TermCode checkUntaggedSegment(int qn, int msn, int mo, int rsvd, int payload, boolean last) {
        if (Integer.compareUnsigned(qn, queues.length) >= 0) {
            return TermCode.DDP_UNTAGGED_INVALID_QN;
        }
        TermCode ulp = handler.checkUntagged(qn, rsvd, msn, payload);
        if (ulp != null) {
            return ulp;
        }
        UntaggedQueue q = queues[qn];
        int s = q.slotFor(msn);
        if (s < 0) {
            return s == UntaggedQueue.NO_BUFFER ? TermCode.DDP_UNTAGGED_MSN_NO_BUFFER : TermCode.DDP_UNTAGGED_MSN_RANGE;
        }
        int cap = q.capacities[s];
        if (Integer.compareUnsigned(mo, cap) > 0 || (mo == cap && payload > 0)) {
            return TermCode.DDP_UNTAGGED_INVALID_MO;
        }
        long end = Integer.toUnsignedLong(mo) + payload;
        if (end > cap) {
            return TermCode.DDP_UNTAGGED_MESSAGE_TOO_LONG;
        }
        int total = q.total[s];
        if (total >= 0 && (end > total || (last && end != total))) {
            // A segment beyond the end set by the L segment, or a second L segment with another end.
            return last ? TermCode.DDP_UNTAGGED_INVALID_MO : TermCode.DDP_UNTAGGED_MESSAGE_TOO_LONG;
        }
        if (last && q.maxEnd[s] > end) {
            return TermCode.DDP_UNTAGGED_MESSAGE_TOO_LONG;
        }
        if (payload > 0 && !q.cover(s, mo, (int) end)) {
            // More out-of-order ranges than this buffer tracks: a local resource limit (§7.2 0/0).
            return TermCode.DDP_LOCAL_CATASTROPHIC;
        }
        vSlot = s;
        vEnd = (int) end;
        return null;
    }

    private void completeUntagged(int qn, UntaggedQueue q, int s, int end, boolean last, int rsvd, int rsvd32) {
        segments++;
        if (end > q.maxEnd[s]) {
            q.maxEnd[s] = end;
        }
        if (last && q.total[s] < 0) {
            q.total[s] = end;
            q.rsvdUlp[s] = rsvd;
            q.rsvdUlp32[s] = rsvd32;
        }
        deliverReady(qn, q);
    }

    // ---------------------------------------------------------------- direct placement

    /**
     * Bytes of a segment's DDP header given its first byte (the control field, RFC 5041 §4.2/§4.3):
     * what {@link #beginDirect} needs to see.
     */
    public static int headerLength(int firstByte) {
        return DdpHeader.headerLength(firstByte & 0xFF);
    }

    /**
     * Starts direct placement of a segment of {@code length} bytes of which only the header is
     * here ({@code seg[index, index + headerLength)}, RFC 5041 §7.1: the header is validated before
     * any payload byte is placed). Runs every check {@link #receive} runs; when one fails nothing is
     * reported and false is returned (the caller then gathers the segment and hands it to
     * {@link #receive}, which reports the error once the LLP has verified the bytes). Zero-length
     * segments are not placed directly. On true, the payload follows through {@link #placeDirect}
     * in order, and {@link #endDirect} completes the segment (delivery, the L flag) once the LLP
     * has verified it. The header bytes must stay in place until then (an error reports them).
     */
    public boolean beginDirect(ByteBuffer seg, int index, int length) {
        if (failed || dp.active) {
            return false;
        }
        hdr.wrap(seg, index);
        int control = hdr.control();
        boolean tagged = (control & DdpHeader.T_FLAG) != 0;
        int hl = DdpHeader.headerLength(control);
        if (length <= hl || (control & DdpHeader.DV_MASK) != DdpHeader.DDP_VERSION) {
            return false;
        }
        boolean last = (control & DdpHeader.L_FLAG) != 0;
        int payload = length - hl;
        if (tagged) {
            long to = hdr.to();
            if (taggedCheck.check(hdr.rsvdUlp(), hdr.stag(), to, payload, stream) != null) {
                return false;
            }
            dp.region = taggedCheck.takeRegion();
            dp.stag = hdr.stag();
            dp.at = dp.region.indexOf(to);
        } else {
            int qn = hdr.qn();
            int mo = hdr.mo();
            if (checkUntaggedSegment(qn, hdr.msn(), mo, hdr.rsvdUlp(), payload, last) != null) {
                return false;
            }
            dp.qn = qn;
            dp.slot = vSlot;
            dp.end = vEnd;
            dp.at = mo;
            dp.rsvd32 = hdr.rsvdUlp32();
        }
        dp.start(tagged, last, hdr.rsvdUlp(), payload, seg, index, length);
        return true;
    }

    /**
     * Places the next {@code n} payload bytes of the segment begun by {@link #beginDirect} from
     * {@code src[index, index + n)}. A tagged piece holds a placement lease on its region while it
     * copies (RFC 5041 §8.3.1 (6)); a region revoked since the segment began is the §7.1 invalid-STag
     * error (1/0), reported here, and false is returned (the stream is failed).
     */
    public boolean placeDirect(ByteBuffer src, int index, int n) {
        if (!dp.active) {
            return false;
        }
        if (dp.tagged) {
            StagRegion mr = dp.region;
            if (!mr.acquirePlacement()) {
                dp.abandon();
                error(TaggedBufferCheck.revoked(), dp.seg, dp.index, dp.length);
                return false;
            }
            try {
                mr.buffer().put(dp.at, src, index, n);
            } finally {
                mr.releasePlacement();
            }
        } else if (!queues[dp.qn].place(dp.slot, dp.at, src, index, n)) {
            untaggedRevoked(dp.qn, dp.slot, dp.seg, dp.index, dp.length);
            return false;
        }
        dp.at += n;
        return true;
    }

    /**
     * Reading straight from the LLP into the target: a view of where the next payload bytes of the
     * segment begun by {@link #beginDirect} go, {@code [position, limit)} of at most {@code max}
     * bytes within one region (the tagged window, or the posted buffer's current piece), with a
     * placement lease on that region held until {@link #directFilled} (RFC 5041 §8.3.1 (6): the
     * caller reads from a non-blocking socket, so revocation waits only for that read). Null when
     * the target is not a registered region (the bytes then come through {@link #placeDirect}),
     * or when the region was revoked: that error is reported here and the stream is failed.
     * Allocates nothing while the reads go into the region the last one went into (this receiver
     * keeps its own view of it, whichever other streams place into the same region meanwhile).
     */
    public ByteBuffer directTarget(int max) {
        if (!dp.active || failed || max <= 0 || dp.lending()) {
            return null;
        }
        StagRegion mr;
        int at;
        int room;
        if (dp.tagged) {
            mr = dp.region;
            at = dp.at;
            room = max;
        } else {
            UntaggedQueue q = queues[dp.qn];
            int p = q.pieceAt(dp.slot, dp.at);
            if (p < 0) {
                return null;
            }
            mr = q.pieceRegion(p);
            if (mr == null || mr.buffer() != q.pieceBuffer(p)) {
                return null;
            }
            at = q.pieceOffset(p) + q.pieceSkip;
            room = Math.min(max, q.pieceLength(p) - q.pieceSkip);
        }
        if (!mr.acquirePlacement()) {
            if (dp.tagged) {
                dp.abandon();
                error(TaggedBufferCheck.revoked(), dp.seg, dp.index, dp.length);
            } else {
                untaggedRevoked(dp.qn, dp.slot, dp.seg, dp.index, dp.length);
            }
            return null;
        }
        return dp.lend(mr, at, room);
    }

    /** {@code n} bytes landed in the view {@link #directTarget} returned: drops its lease (the view is kept for the next read). */
    public void directFilled(int n) {
        dp.filled(n);
    }

    /**
     * RFC 5041 §7.1 check 2.2 failed for the buffer at the head of {@code qn}: the message does not
     * fit its capacity. That buffer goes back to the ULP ({@link DdpReceiveHandler#onUntaggedBufferTooShort});
     * the §7.2 2/5 error follows. A segment that is too long only for the end a previous L segment
     * set (a sender inconsistency) or for a buffer not at the head returns nothing here.
     */
    private void untaggedTooShort(int qn, int msn, int mo, int payload) {
        UntaggedQueue q = queues[qn];
        int s = q.slotFor(msn);
        if (s >= 0 && s == q.head() && Integer.toUnsignedLong(mo) + payload > q.capacities[s]) {
            long cookie = q.cookies[s];
            q.pop();
            handler.onUntaggedBufferTooShort(qn, cookie);
        }
    }

    /** A segment for an untagged buffer whose region was revoked: the buffer goes back to the ULP, 0/0. */
    private void untaggedRevoked(int qn, int slot, ByteBuffer seg, int index, int length) {
        dp.abandon();
        UntaggedQueue q = queues[qn];
        if (slot == q.head()) {
            long cookie = q.cookies[slot];
            q.pop();
            handler.onUntaggedBufferRevoked(qn, cookie);
        }
        error(TermCode.DDP_LOCAL_CATASTROPHIC, seg, index, length);
    }

    /** Completes the segment begun by {@link #beginDirect}: every payload byte placed and verified by the LLP. */
    public void endDirect() {
        if (!dp.active) {
            return;
        }
        dp.stop();
        if (failed) {
            return;
        }
        if (dp.tagged) {
            completeTagged(dp.rsvd, dp.stag, dp.payload, dp.last);
        } else {
            completeUntagged(dp.qn, queues[dp.qn], dp.slot, dp.end, dp.last, dp.rsvd, dp.rsvd32);
        }
    }

    private void deliverReady(int qn, UntaggedQueue q) {
        while (!failed && q.headComplete()) {
            int h = q.head();
            int msn = q.headMsn();
            int rsvd = q.rsvdUlp[h];
            int rsvd32 = q.rsvdUlp32[h];
            long cookie = q.cookies[h];
            ByteBuffer buf = q.buffers[h];
            int off = q.offsets[h];
            int len = q.total[h];
            q.pop();
            handler.onUntaggedMessage(qn, msn, rsvd, rsvd32, cookie, buf, off, len);
        }
    }

    private void error(TermCode code, ByteBuffer seg, int index, int length) {
        failed = true;
        handler.onError(code, seg, index, length);
    }
}
