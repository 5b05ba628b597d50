package org.jwarp.rdmap;

import java.nio.ByteBuffer;

import org.jwarp.ddp.DdpHeader;
import org.jwarp.ddp.DdpSegmenter;
import org.jwarp.ddp.RemoteStagCheck;
import org.jwarp.ground.TermCode;
import org.jwarp.memory.StagAccess;
import org.jwarp.memory.StagRegion;
import org.jwarp.memory.StagTable;
import org.jwarp.mpa.FpduEncoder;
import org.jwarp.mpa.FpduSink;

/**
 * The responder side of RDMA Read (RFC 5040 §5.2) for one {@link RdmapEndpoint}: inbound Read
 * Requests are validated (source STag, PD and stream association, bounds, REMOTE_READ; RFC 5040
 * §5.2, RFC 5041 §8.2) and queued up to the IRD (the IRQ; one beyond it is refused by the inbound
 * checks with TERM 0/2/7 as siw does), then answered in order with Read Responses, tagged
 * messages segmented like a Write (RFC 5041 §5.2).
 *
 * <p>Source revocation (RFC 5041 §8.3): the source region is checked before every segment; once
 * it is revoked no further segment is read from it and the stream ends with TERM 0/1/0 (invalid
 * STag). A segment of at least {@link RdmapEndpoint#GATHER_MIN} payload bytes is referenced
 * through the {@link FpduSink}, not copied, with its CRC computed over the region's bytes (through
 * the sink's view: the region's buffer is shared, read by absolute index only); the sink
 * owns the rest of the guarantee: bytes it still references when the region is revoked must not be
 * read from the region afterwards (the soft provider snapshots them, see its {@code TxGather}).
 */
final class ReadResponder {
    private final RdmapEndpoint ep;
    private final FpduEncoder encoder;
    private final DdpHeader txHdr = new DdpHeader();
    private final int maxTagged;
    private final int depth;
    private final int[] sinkStag;
    private final long[] sinkTo;
    private final int[] size;
    private final StagRegion[] source;
    private final long[] sourceTo;
    private final int[] progress;
    private int head;
    private int count;
    /** Receive slots of inbound Read Requests (DDP untagged queue 1, RFC 5040 §4.4), one per IRD. */
    private final ByteBuffer requestSlots;

    ReadResponder(RdmapEndpoint ep, FpduEncoder encoder, int maxTagged, int ird) {
        this.ep = ep;
        this.encoder = encoder;
        this.maxTagged = maxTagged;
        depth = Math.max(1, ird);
        sinkStag = new int[depth];
        sinkTo = new long[depth];
        size = new int[depth];
        source = new StagRegion[depth];
        sourceTo = new long[depth];
        progress = new int[depth];
        requestSlots = ByteBuffer.allocateDirect(depth * ReadRequestHeader.LENGTH);
    }

    /** Posts every Read Request receive slot (once, when the endpoint's DDP receiver exists). */
    void postRequestSlots() {
        for (int i = 0; i < depth; i++) {
            repostSlot(i);
        }
    }

    /** Posts receive slot {@code slot} for the next inbound Read Request (DDP untagged queue 1). */
    private void repostSlot(int slot) {
        ep.ddp.postUntagged(RdmapOpcode.QN_READ_REQUEST, requestSlots, slot * ReadRequestHeader.LENGTH,
                ReadRequestHeader.LENGTH, slot);
    }

    int pending() {
        return count;
    }

    /** Validates and queues the Read Request in receive slot {@code slot} at {@code b[off..]}, or raises the error. */
    void accept(ByteBuffer b, int off, int length, int slot, StagTable stags, Object streamKey) {
        int sStag = ReadRequestHeader.sinkStag(b, off);
        long sTo = ReadRequestHeader.sinkTo(b, off);
        int n = ReadRequestHeader.size(b, off);
        int srcStag = ReadRequestHeader.sourceStag(b, off);
        long srcTo = ReadRequestHeader.sourceTo(b, off);
        repostSlot(slot); // the slot's bytes were copied out first
        if (length != ReadRequestHeader.LENGTH) {
            ep.term.raise(TermCode.RDMAP_CATASTROPHIC_STREAM, "Read Request of " + length + " bytes, expected 28 "
                    + "(RFC 5040 §4.4)", true);
            return;
        }
        if (n < 0) {
            ep.term.raise(TermCode.RDMAP_BASE_BOUNDS, "Read Request size " + Integer.toUnsignedString(n)
                    + " exceeds this implementation's 2^31-1 (RFC 5040 §4.4)", true);
            return;
        }
        StagRegion mr = null;
        if (n > 0) {
            mr = stags.lookup(srcStag);
            int r = RemoteStagCheck.check(mr, ep.pd, streamKey, srcTo, n, StagAccess.REMOTE_READ);
            if (r != StagTable.OK) {
                ep.term.raise(sourceCode(r), "Read Request source STag 0x" + Integer.toHexString(srcStag) + " TO 0x"
                        + Long.toHexString(srcTo) + " size " + n + " rejected (RFC 5040 §5.2)", true);
                return;
            }
        }
        int t = (head + count) % depth;
        sinkStag[t] = sStag;
        sinkTo[t] = sTo;
        size[t] = n;
        source[t] = mr;
        sourceTo[t] = srcTo;
        progress[t] = 0;
        count++;
    }

    /** The next Read Response segment if it fits; false when there is no room. */
    boolean emit(ByteBuffer dst, FpduSink sink) {
        int h = head;
        int p = progress[h];
        int n = DdpSegmenter.segmentLength(size[h], p, maxTagged);
        boolean last = DdpSegmenter.isLast(size[h], p, maxTagged);
        int hl = DdpHeader.TAGGED_HEADER_LENGTH;
        boolean gather = sink != null && n >= RdmapEndpoint.GATHER_MIN;
        if (gather ? dst.remaining() < encoder.gatheredStagingLength(hl, n) || !sink.canReference(n)
                : dst.remaining() < encoder.wireLength(hl + n)) {
            return false;
        }
        StagRegion src = source[h];
        if (n > 0 && !src.isValid()) {
            // The source STag was revoked after the Read Request was accepted (RFC 5041 §8.3).
            ep.term.raise(TermCode.RDMAP_INVALID_STAG, "Read source STag 0x" + Integer.toHexString(src.stag())
                    + " revoked while answering", false);
            return true;
        }
        int u = encoder.ulpduIndex(dst);
        txHdr.wrap(dst, u).putTagged(last, RdmapOpcode.control(RdmapOpcode.READ_RESPONSE), sinkStag[h], sinkTo[h] + p);
        if (n > 0 && gather) {
            // the room was checked above; the CRC runs over the sink's private view, never over
            // the region's buffer, which the PD's other streams read at the same time
            ByteBuffer v = sink.reference(u + hl, src.buffer(), src.indexOf(sourceTo[h] + p), n);
            encoder.finishGathered(dst, hl, v);
        } else {
            if (n > 0) {
                dst.put(u + hl, src.buffer(), src.indexOf(sourceTo[h] + p), n);
            }
            encoder.finish(dst, hl + n);
        }
        progress[h] = p + n;
        if (last) {
            source[h] = null;
            head = (head + 1) % depth;
            count--;
        }
        return true;
    }

    void reset() {
        for (int i = 0; i < depth; i++) {
            source[i] = null;
        }
        count = 0;
    }

    private static TermCode sourceCode(int r) {
        switch (r) {
            case StagTable.INVALID_STAG:
                return TermCode.RDMAP_INVALID_STAG;
            case StagTable.NOT_ASSOCIATED:
                return TermCode.RDMAP_STAG_NOT_ASSOCIATED;
            case StagTable.ACCESS_VIOLATION:
                return TermCode.RDMAP_ACCESS_VIOLATION;
            case StagTable.TO_WRAP:
                return TermCode.RDMAP_TO_WRAP;
            default:
                return TermCode.RDMAP_BASE_BOUNDS;
        }
    }
}
