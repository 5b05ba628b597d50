package org.jwarp.ddp;

import java.nio.ByteBuffer;
import org.jwarp.ground.TermCode;

/**
 * The ULP side of {@link DdpReceiver}, RFC 5041 §5.4 (delivery) and §7 (errors). RDMAP implements
 * it; all calls happen on the thread that feeds the receiver, and none may allocate on the hot path.
 */
public interface DdpReceiveHandler {

    /**
     * ULP check of a tagged segment before placement (RFC 5040 opcode and version rules): null to
     * accept, or the TermCode to report. {@code rsvdUlp} is the 8-bit RsvdULP of the control field.
     */
    TermCode checkTagged(int rsvdUlp, int stag, long to, int payloadLength);

    /**
     * The window a non-empty tagged segment that passed {@link #checkTagged} must fall in, if the
     * ULP expects one for this opcode: true after {@link TaggedWindow#set}, false when any STag and
     * TO the region allows will do. The DDP receiver reports a mismatch (RFC 5041 §7.1, 1/0 or 1/1).
     */
    default boolean expectedWindow(int rsvdUlp, TaggedWindow window) {
        return false;
    }

    /** Access rights (see {@code org.jwarp.memory.StagAccess}) the target STag of this tagged segment must grant. */
    int taggedAccess(int rsvdUlp);

    /** ULP check of an untagged segment before placement: null to accept, or the TermCode to report. */
    TermCode checkUntagged(int qn, int rsvdUlp, int msn, int payloadLength);

    /**
     * A tagged message ended (its L segment was placed), RFC 5041 §5.4: RsvdULP of the last segment,
     * its STag and the message length (payload bytes since the previous tagged last segment).
     */
    void onTaggedMessage(int rsvdUlp, int stag, int length);

    /**
     * An untagged message is complete and every earlier message on its queue was delivered, RFC
     * 5041 §5.3 and §5.4: the buffer identified by {@code cookie} holds {@code length} bytes at
     * {@code offset}; RsvdULP fields are those of the last segment.
     */
    void onUntaggedMessage(int qn, int msn, int rsvdUlp, int rsvdUlp32, long cookie, ByteBuffer buffer, int offset,
            int length);

    /**
     * A segment failed validation, RFC 5041 §7.1: nothing of it was placed, and every later segment
     * is dropped silently. {@code segment[index, index + length)} is the offending DDP segment.
     */
    void onError(TermCode code, ByteBuffer segment, int index, int length);

    /**
     * RFC 5041 §8.3.1 (6): the buffer posted as {@code cookie} on {@code qn} lies in a region that
     * was revoked (deregistered or invalidated) after it was posted, so an arriving segment was not
     * placed into it. The buffer is taken off the queue (no flush reports it again); {@link #onError}
     * with {@link TermCode#DDP_LOCAL_CATASTROPHIC} follows at once.
     */
    default void onUntaggedBufferRevoked(int qn, long cookie) {
    }

    /**
     * RFC 5041 §7.1 check 2.2: the message arriving for the buffer posted as {@code cookie} on
     * {@code qn} (the head of the queue) is longer than the buffer. The buffer is taken off the queue
     * (no flush reports it again); {@link #onError} with
     * {@link TermCode#DDP_UNTAGGED_MESSAGE_TOO_LONG} (§7.2 2/5) follows at once.
     */
    default void onUntaggedBufferTooShort(int qn, long cookie) {
    }
}
