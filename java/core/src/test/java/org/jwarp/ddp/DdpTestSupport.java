package org.jwarp.ddp;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.jwarp.memory.StagAccess;
import org.jwarp.ground.TermCode;

/** Builds DDP segments the way a Data Source does (RFC 5041 §5.2) and records receiver callbacks. */
final class DdpTestSupport {
    private DdpTestSupport() {
    }

    /** One DDP segment in its own direct buffer, with the message offset it covers. */
    record Segment(ByteBuffer bytes, long offset, int payload, boolean last) {
        int length() {
            return bytes.capacity();
        }

        Segment copy() {
            ByteBuffer b = ByteBuffer.allocateDirect(bytes.capacity());
            b.put(0, bytes, 0, bytes.capacity());
            return new Segment(b, offset, payload, last);
        }
    }

    static List<Segment> untagged(byte[] msg, int mulpdu, int rsvdUlp, int rsvdUlp32, int qn, int msn) {
        int max = DdpSegmenter.maxPayload(false, mulpdu);
        List<Segment> out = new ArrayList<>();
        long off = 0;
        do {
            int n = DdpSegmenter.segmentLength(msg.length, off, max);
            boolean last = DdpSegmenter.isLast(msg.length, off, max);
            ByteBuffer b = ByteBuffer.allocateDirect(DdpHeader.UNTAGGED_HEADER_LENGTH + n);
            new DdpHeader().wrap(b, 0).putUntagged(last, rsvdUlp, rsvdUlp32, qn, msn, (int) off);
            b.put(DdpHeader.UNTAGGED_HEADER_LENGTH, msg, (int) off, n);
            out.add(new Segment(b, off, n, last));
            off += n;
        } while (off < msg.length);
        return out;
    }

    /** One untagged segment carrying {@code msg[off, off + n)} at MO {@code off} (any segmentation). */
    static Segment untaggedSegment(byte[] msg, int off, int n, boolean last, int rsvdUlp, int rsvdUlp32, int qn,
            int msn) {
        ByteBuffer b = ByteBuffer.allocateDirect(DdpHeader.UNTAGGED_HEADER_LENGTH + n);
        new DdpHeader().wrap(b, 0).putUntagged(last, rsvdUlp, rsvdUlp32, qn, msn, off);
        b.put(DdpHeader.UNTAGGED_HEADER_LENGTH, msg, off, n);
        return new Segment(b, off, n, last);
    }

    static List<Segment> tagged(byte[] msg, int mulpdu, int rsvdUlp, int stag, long to) {
        int max = DdpSegmenter.maxPayload(true, mulpdu);
        List<Segment> out = new ArrayList<>();
        long off = 0;
        do {
            int n = DdpSegmenter.segmentLength(msg.length, off, max);
            boolean last = DdpSegmenter.isLast(msg.length, off, max);
            ByteBuffer b = ByteBuffer.allocateDirect(DdpHeader.TAGGED_HEADER_LENGTH + n);
            new DdpHeader().wrap(b, 0).putTagged(last, rsvdUlp, stag, to + off);
            b.put(DdpHeader.TAGGED_HEADER_LENGTH, msg, (int) off, n);
            out.add(new Segment(b, off, n, last));
            off += n;
        } while (off < msg.length);
        return out;
    }

    static void feed(DdpReceiver rx, Segment s) {
        rx.receive(s.bytes(), 0, s.length());
    }

    static ByteBuffer guarded(int size, int guard) {
        ByteBuffer b = ByteBuffer.allocateDirect(size + 2 * guard);
        for (int i = 0; i < b.capacity(); i++) {
            b.put(i, (byte) 0xEE);
        }
        return b;
    }

    static byte[] snapshot(ByteBuffer b) {
        byte[] a = new byte[b.capacity()];
        b.get(0, a);
        return a;
    }

    /** A ULP that accepts everything, requires a configurable access right and records events. */
    static class Recorder implements DdpReceiveHandler {
        int requiredAccess = StagAccess.REMOTE_WRITE;
        final List<TermCode> errors = new ArrayList<>();
        /** The segment the last error named, as handed to {@link #onError}. */
        ByteBuffer errorSegment;
        final List<long[]> untagged = new ArrayList<>(); // qn, msn, rsvd, rsvd32, cookie, length
        final List<long[]> taggedMsgs = new ArrayList<>(); // rsvd, stag, length

        @Override
        public TermCode checkTagged(int rsvdUlp, int stag, long to, int payloadLength) {
            return null;
        }

        @Override
        public int taggedAccess(int rsvdUlp) {
            return requiredAccess;
        }

        @Override
        public TermCode checkUntagged(int qn, int rsvdUlp, int msn, int payloadLength) {
            return null;
        }

        @Override
        public void onTaggedMessage(int rsvdUlp, int stag, int length) {
            taggedMsgs.add(new long[] {rsvdUlp, stag, length});
        }

        @Override
        public void onUntaggedMessage(int qn, int msn, int rsvdUlp, int rsvdUlp32, long cookie, ByteBuffer buffer,
                int offset, int length) {
            untagged.add(new long[] {qn, msn, rsvdUlp, rsvdUlp32, cookie, length});
        }

        @Override
        public void onError(TermCode code, ByteBuffer segment, int index, int length) {
            errors.add(code);
            errorSegment = segment;
        }
    }
}
