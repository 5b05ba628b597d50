package org.jwarp.mpa;

import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * Streaming reader for one MPA Request or Reply frame, RFC 5044 §7.1.1 and §7.1.2 (with RFC 6581
 * §6 and §9). It is fed whatever bytes the transport read, in chunks of any size, and answers
 * {@link Status#NEED_MORE} until the frame is complete. Bad input throws {@link MpaDecodeException}
 * as early as it can be seen: the key is checked byte by byte, PD_Length as soon as the header is in.
 *
 * <p>{@link #feed(ByteBuffer)} consumes only the frame's bytes: when it returns
 * {@link Status#COMPLETE}, the chunk's position is just past the frame and
 * {@link #trailingBytes()} says how many bytes followed it in that chunk. Neither side may send
 * before the peer's frame is answered (RFC 5044 §7.1.2; Linux siw fails such a connection with
 * -EPROTO), so by default those bytes are an error; a reader built with
 * {@code rejectTrailingBytes=false} leaves them for the caller.
 *
 * <p>The reader owns one direct buffer sized for the largest frame the limits allow and reuses it
 * after {@link #reset()}; feeding allocates nothing until the frame value is built.
 */
public final class MpaFrameReader {

    /** Progress after a {@link #feed(ByteBuffer)} towards one RFC 5044 §7.1.1 frame. */
    public enum Status {
        /** The frame is incomplete; feed more bytes. */
        NEED_MORE,
        /** The frame is complete; see {@link #frame()}. */
        COMPLETE
    }

    private final MpaFrame.Kind expected;
    private final MpaFrameLimits limits;
    private final boolean rejectTrailingBytes;
    private final ByteBuffer staging;
    private final MpaRequestReplyFlyweight flyweight = new MpaRequestReplyFlyweight();

    private int filled;
    private int needed = MpaRequestReplyFlyweight.HEADER_LENGTH;
    private MpaFrame frame;
    private MpaDecodeException failure;
    private int trailing;

    /** A strict reader: bytes after the frame are an error. */
    public MpaFrameReader(MpaFrame.Kind expected, MpaFrameLimits limits) {
        this(expected, limits, true);
    }

    /**
     * @param expected            the kind of frame this side may receive (REQUEST for a responder,
     *                            REPLY for an initiator), or null to accept either
     * @param limits              private-data limits
     * @param rejectTrailingBytes whether bytes after the frame in the same chunk are an error
     */
    public MpaFrameReader(MpaFrame.Kind expected, MpaFrameLimits limits, boolean rejectTrailingBytes) {
        this.expected = expected;
        this.limits = Objects.requireNonNull(limits, "limits");
        this.rejectTrailingBytes = rejectTrailingBytes;
        this.staging = ByteBuffer.allocateDirect(MpaRequestReplyFlyweight.HEADER_LENGTH + limits.maxPrivateDataLength());
        flyweight.wrap(staging, 0);
    }

    /**
     * Consumes bytes of {@code chunk} (from its position to its limit) up to the end of the frame.
     *
     * @throws MpaDecodeException    when the bytes cannot be the frame this reader expects
     * @throws IllegalStateException when fed after completion or failure without {@link #reset()}
     */
    public Status feed(ByteBuffer chunk) throws MpaDecodeException {
        if (frame != null || failure != null) {
            throw new IllegalStateException("MPA frame reader already " + (frame != null ? "complete" : "failed")
                    + "; reset() it first");
        }
        try {
            return doFeed(chunk);
        } catch (MpaDecodeException e) {
            failure = e;
            throw e;
        }
    }

    private Status doFeed(ByteBuffer chunk) throws MpaDecodeException {
        while (chunk.hasRemaining()) {
            int take = Math.min(chunk.remaining(), needed - filled);
            int before = filled;
            for (int i = 0; i < take; i++) {
                staging.put(filled++, chunk.get());
            }
            checkKeyBytes(before, filled);
            if (filled == MpaRequestReplyFlyweight.HEADER_LENGTH && needed == MpaRequestReplyFlyweight.HEADER_LENGTH) {
                MpaFrame.checkKey(flyweight, expected);
                needed = MpaRequestReplyFlyweight.HEADER_LENGTH + MpaFrame.checkPrivateDataLength(flyweight, limits);
            }
            if (filled == needed) {
                trailing = chunk.remaining();
                if (rejectTrailingBytes && trailing > 0) {
                    throw new MpaDecodeException("MPA frame", trailing + " bytes follow the MPA "
                            + kindName() + " frame; nothing may be sent before it is answered", MpaFrame.SEC_STARTUP);
                }
                frame = MpaFrame.fromHeader(flyweight, flyweight.hasReplyKey() ? MpaFrame.Kind.REPLY : MpaFrame.Kind.REQUEST);
                return Status.COMPLETE;
            }
        }
        return Status.NEED_MORE;
    }

    private String kindName() {
        return flyweight.hasReplyKey() ? "reply" : "request";
    }

    /** Checks key bytes [from, to) as they arrive, so a non-MPA peer is caught early. */
    private void checkKeyBytes(int from, int to) throws MpaDecodeException {
        int end = Math.min(to, MpaRequestReplyFlyweight.KEY_LENGTH);
        for (int i = from; i < end; i++) {
            byte b = staging.get(i);
            boolean reqOk = expected != MpaFrame.Kind.REPLY && b == MpaRequestReplyFlyweight.keyByte(false, i)
                    && prefixMatches(false, i);
            boolean repOk = expected != MpaFrame.Kind.REQUEST && b == MpaRequestReplyFlyweight.keyByte(true, i)
                    && prefixMatches(true, i);
            if (!reqOk && !repOk) {
                String what = expected == null ? "\"MPA ID Req Frame\" or \"MPA ID Rep Frame\""
                        : expected == MpaFrame.Kind.REQUEST ? "\"MPA ID Req Frame\"" : "\"MPA ID Rep Frame\"";
                throw new MpaDecodeException("MPA Key", "byte " + i + " (0x" + Integer.toHexString(b & 0xFF)
                        + ") does not match " + what, MpaFrame.SEC_FRAME);
            }
        }
    }

    private boolean prefixMatches(boolean reply, int upTo) {
        for (int i = 0; i < upTo; i++) {
            if (staging.get(i) != MpaRequestReplyFlyweight.keyByte(reply, i)) {
                return false;
            }
        }
        return true;
    }

    /** The decoded frame once {@link Status#COMPLETE}, else null. */
    public MpaFrame frame() {
        return frame;
    }

    public boolean isComplete() {
        return frame != null;
    }

    /** Bytes that followed the frame in the chunk that completed it (left unread in that chunk). */
    public int trailingBytes() {
        return trailing;
    }

    /** Bytes still missing before the frame can complete (a lower bound until the header is in). */
    public int bytesNeeded() {
        return needed - filled;
    }

    /** Bytes of the frame consumed so far. */
    public int bytesConsumed() {
        return filled;
    }

    /** Makes the reader ready for a new frame, reusing its buffer. */
    public void reset() {
        filled = 0;
        needed = MpaRequestReplyFlyweight.HEADER_LENGTH;
        frame = null;
        failure = null;
        trailing = 0;
    }
}
