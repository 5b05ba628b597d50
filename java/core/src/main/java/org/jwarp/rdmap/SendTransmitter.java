package org.jwarp.rdmap;

import java.nio.ByteBuffer;

import org.jwarp.ddp.DdpHeader;
import org.jwarp.ddp.DdpSegmenter;
import org.jwarp.ddp.TaggedWindow;
import org.jwarp.ground.TermCode;
import org.jwarp.mpa.FpduEncoder;
import org.jwarp.mpa.FpduSink;

/**
 * Outbound messages of one {@link RdmapEndpoint} from its {@link SendRing}: Sends (RFC 5040 §5.3,
 * DDP untagged queue 0, one MSN per message shared by its segments), RDMA Writes (§5.1, tagged) and
 * Read Requests (§5.2, untagged queue 1), segmented to the MULPDU with every non-last FPDU full
 * (RFC 5041 §5.2), and siw's RTR messages (RFC 6581 §5). It keeps only the progress of the one
 * message being segmented, as the copy {@link SendWork} the ring filled when the engine took it,
 * and the order of the Read Requests sent (the ORQ) with their sink windows, to match their
 * responses; it never reads a ring slot back.
 *
 * <p>A Send or Write segment of at least {@link RdmapEndpoint#GATHER_MIN} payload bytes lying in one
 * gather piece is referenced through the {@link FpduSink}, not copied (zero-copy transmit).
 */
final class SendTransmitter {
    /** ORQ entry of the Read RTR, which is no ring WR. */
    private static final long RTR = Long.MIN_VALUE;

    private final RdmapEndpoint ep;
    private final SendRing ring;
    private final FpduEncoder encoder;
    private final DdpHeader txHdr = new DdpHeader();
    private final int maxTagged;
    private final int maxUntagged;

    /** The WR being segmented, or -1; its fields in {@link #wr}. */
    private long cur = -1;
    private final SendWork wr;
    private int curProgress;
    private int curMsn;
    private int txSendMsn;
    private int txReadMsn;
    /** An RTR to send first: -1 none, else {@link SendRing#SEND}, {@link SendRing#WRITE} or {@link SendRing#READ}. */
    private int rtrPending = -1;
    /** The Read RTR awaits its empty response: ring Reads wait (it holds the one Read slot, RFC 6581 §9.1). */
    private boolean rtrReadOut;

    /** Read Requests sent, awaiting their responses in order: ring sequences or {@link #RTR}. */
    private final long[] orq;
    /** Each ORQ entry's sink window (RFC 5040 §5.2): local STag, TO and length. */
    private final int[] orqStag;
    private final long[] orqTo;
    private final int[] orqLen;
    private int orqHead;
    private int orqCount;

    /** Set by {@link #pieceHolding}: the buffer index at which the found piece holds the range. */
    private int pieceIndex;

    SendTransmitter(RdmapEndpoint ep, SendRing ring, FpduEncoder encoder, int maxTagged, int maxUntagged, int ord,
            int maxSge) {
        this.ep = ep;
        this.ring = ring;
        this.encoder = encoder;
        this.maxTagged = maxTagged;
        this.maxUntagged = maxUntagged;
        this.orq = new long[Math.max(1, ord) + 1];
        this.orqStag = new int[orq.length];
        this.orqTo = new long[orq.length];
        this.orqLen = new int[orq.length];
        this.wr = new SendWork(maxSge);
    }

    void postRtr(int kind) {
        if (rtrPending >= 0) {
            throw new IllegalStateException("an RTR is already queued (RFC 6581 §5: one per connection)");
        }
        rtrPending = kind;
    }

    int readsOutstanding() {
        return orqCount;
    }

    /** A message has segments on the wire and more to go. */
    boolean begun() {
        return cur >= 0;
    }

    boolean hasPending() {
        if (rtrPending >= 0 || cur >= 0) {
            return true;
        }
        int k = ring.nextKind();
        return k >= 0 && !(rtrReadOut && k == SendRing.READ);
    }

    /** Emits the next FPDU if it fits; false when there is none or no room. */
    boolean emit(ByteBuffer dst, FpduSink sink) {
        if (rtrPending >= 0) {
            return emitRtr(dst);
        }
        if (cur < 0) {
            int k = ring.nextKind();
            if (k < 0 || (rtrReadOut && k == SendRing.READ)) {
                return false;
            }
            if (k == SendRing.READ) {
                if (dst.remaining() < readRequestWireLength()) {
                    return false;
                }
                long q = ring.take(wr);
                emitReadRequest(dst, q, wr.localStag(), wr.localTo(), wr.length(), wr.remoteStag(), wr.remoteTo());
                wr.clear();
                return true;
            }
            cur = ring.take(wr);
            curProgress = 0;
        }
        return emitSegment(dst, sink, cur);
    }

    private boolean emitRtr(ByteBuffer dst) {
        switch (rtrPending) {
            case SendRing.READ:
                if (!emitReadRequest(dst, RTR, 0, 0, 0, 1, 0)) {
                    return false;
                }
                rtrReadOut = true;
                break;
            case SendRing.WRITE: {
                if (dst.remaining() < encoder.wireLength(DdpHeader.TAGGED_HEADER_LENGTH)) {
                    return false;
                }
                int u = encoder.ulpduIndex(dst);
                txHdr.wrap(dst, u).putTagged(true, RdmapOpcode.control(RdmapOpcode.WRITE), 1, 0);
                encoder.finish(dst, DdpHeader.TAGGED_HEADER_LENGTH);
                break;
            }
            default: {
                if (dst.remaining() < encoder.wireLength(DdpHeader.UNTAGGED_HEADER_LENGTH)) {
                    return false;
                }
                int u = encoder.ulpduIndex(dst);
                txHdr.wrap(dst, u).putUntagged(true, RdmapOpcode.control(RdmapOpcode.SEND), 0, RdmapOpcode.QN_SEND,
                        ++txSendMsn, 0);
                encoder.finish(dst, DdpHeader.UNTAGGED_HEADER_LENGTH);
                break;
            }
        }
        rtrPending = -1;
        return true;
    }

    /** A Read Request (RFC 5040 §4.4, §5.2) on queue 1 with the next MSN; the ORQ remembers it. */
    private boolean emitReadRequest(ByteBuffer dst, long q, int sinkStag, long sinkTo, int size, int srcStag,
            long srcTo) {
        int ulpdu = DdpHeader.UNTAGGED_HEADER_LENGTH + ReadRequestHeader.LENGTH;
        if (dst.remaining() < readRequestWireLength()) {
            return false;
        }
        if (orqCount == orq.length) {
            throw new IllegalStateException("more Read Requests outstanding than the ORD " + (orq.length - 1)
                    + " (the send ring admitted too many, RFC 5040 §6.5)");
        }
        int u = encoder.ulpduIndex(dst);
        txHdr.wrap(dst, u).putUntagged(true, RdmapOpcode.control(RdmapOpcode.READ_REQUEST), 0,
                RdmapOpcode.QN_READ_REQUEST, ++txReadMsn, 0);
        ReadRequestHeader.put(dst, u + DdpHeader.UNTAGGED_HEADER_LENGTH, sinkStag, sinkTo, size, srcStag, srcTo);
        encoder.finish(dst, ulpdu);
        int e = (orqHead + orqCount) % orq.length;
        orq[e] = q;
        orqStag[e] = sinkStag;
        orqTo[e] = sinkTo;
        orqLen[e] = size;
        orqCount++;
        return true;
    }

    private int readRequestWireLength() {
        return encoder.wireLength(DdpHeader.UNTAGGED_HEADER_LENGTH + ReadRequestHeader.LENGTH);
    }

    /** The next segment of the Send or Write {@code q} (RFC 5041 §5.2: non-last segments fill the MULPDU). */
    private boolean emitSegment(ByteBuffer dst, FpduSink sink, long q) {
        boolean tagged = wr.kind() == SendRing.WRITE;
        int size = wr.length();
        int max = tagged ? maxTagged : maxUntagged;
        int progress = curProgress;
        int n = DdpSegmenter.segmentLength(size, progress, max);
        boolean last = DdpSegmenter.isLast(size, progress, max);
        int hl = tagged ? DdpHeader.TAGGED_HEADER_LENGTH : DdpHeader.UNTAGGED_HEADER_LENGTH;
        int piece = sink != null && n >= RdmapEndpoint.GATHER_MIN ? pieceHolding(progress, n) : -1;
        if (piece >= 0 ? dst.remaining() < encoder.gatheredStagingLength(hl, n) || !sink.canReference(n)
                : dst.remaining() < encoder.wireLength(hl + n)) {
            return false;
        }
        if (n > 0 && !ring.sourceValid(q)) {
            // The source was deregistered while the WR was in flight: its bytes may no longer be read
            // (RFC 5041 §8.3); the message cannot be completed, so the stream ends.
            ep.term.raise(TermCode.RDMAP_LOCAL_CATASTROPHIC, "source memory of a " + (tagged ? "Write" : "Send")
                    + " deregistered while it was being sent", false);
            return true;
        }
        int u = encoder.ulpduIndex(dst);
        int control = RdmapOpcode.control(wr.opcode());
        if (tagged) {
            txHdr.wrap(dst, u).putTagged(last, control, wr.remoteStag(), wr.remoteTo() + progress);
        } else {
            if (progress == 0) {
                curMsn = ++txSendMsn;
            }
            txHdr.wrap(dst, u).putUntagged(last, control, wr.remoteStag(), RdmapOpcode.QN_SEND, curMsn, progress);
        }
        if (piece >= 0) {
            // the room was checked above; the CRC runs over the sink's private view, never over
            // the region's buffer, which the PD's other streams read at the same time
            ByteBuffer v = sink.reference(u + hl, wr.pieceBuffer(piece), pieceIndex, n);
            encoder.finishGathered(dst, hl, v);
        } else {
            if (n > 0) {
                copyOut(progress, dst, u + hl, n);
            }
            encoder.finish(dst, hl + n);
        }
        curProgress = progress + n;
        if (last) {
            cur = -1;
            wr.clear();
            ring.done(q);
        }
        return true;
    }

    /** The piece holding message bytes [{@code from}, +{@code n}) of {@link #wr} entirely, or -1; sets {@link #pieceIndex}. */
    private int pieceHolding(int from, int n) {
        int pos = 0;
        int c = wr.pieces();
        for (int i = 0; i < c; i++) {
            int len = wr.pieceLength(i);
            if (from < pos + len) {
                if (from + n > pos + len) {
                    return -1;
                }
                pieceIndex = wr.pieceOffset(i) + from - pos;
                return i;
            }
            pos += len;
        }
        return -1;
    }

    /** Copies {@code n} message bytes of {@link #wr} from message offset {@code from} into {@code dst} at {@code at}. */
    private void copyOut(int from, ByteBuffer dst, int at, int n) {
        int pos = 0;
        int c = wr.pieces();
        for (int i = 0; i < c && n > 0; i++) {
            int len = wr.pieceLength(i);
            if (from < pos + len) {
                int skip = from - pos;
                int k = Math.min(n, len - skip);
                dst.put(at, wr.pieceBuffer(i), wr.pieceOffset(i) + skip, k);
                at += k;
                from += k;
                n -= k;
            }
            pos += len;
        }
    }

    // ---------------------------------------------------------------- Read Responses (RFC 5040 §5.2)

    /** An inbound Read Response with no Read Request outstanding is an unexpected opcode (RFC 5040 §5.2). */
    TermCode checkReadResponse() {
        return orqCount == 0 ? TermCode.RDMAP_UNEXPECTED_OPCODE : null;
    }

    /**
     * The sink window of the oldest Read Request, which its Read Response may only fill (RFC 5040
     * §5.2); the empty Read RTR's is STag 0, TO 0, no bytes. False with no Read outstanding.
     */
    boolean readResponseWindow(TaggedWindow w) {
        if (orqCount == 0) {
            return false;
        }
        w.set(orqStag[orqHead], orqTo[orqHead], orqLen[orqHead]);
        return true;
    }

    /** The whole Read Response of the oldest Read Request was placed: {@code length} bytes. */
    void readResponseDone(int length) {
        long q = orq[orqHead];
        int expected = orqLen[orqHead];
        orqHead = (orqHead + 1) % orq.length;
        orqCount--;
        if (length != expected) {
            ep.term.raise(TermCode.RDMAP_CATASTROPHIC_STREAM, "Read Response of " + length + " bytes for a Read of "
                    + expected + " (RFC 5040 §5.2)", true);
            return;
        }
        if (q == RTR) {
            rtrReadOut = false;
        } else {
            ring.done(q);
        }
    }

    /** After the stream died: forget everything (the ring is abandoned separately). */
    void reset() {
        cur = -1;
        wr.clear();
        rtrPending = -1;
        rtrReadOut = false;
        orqCount = 0;
    }
}
