package org.jwarp.rdmap;

import java.nio.ByteBuffer;

/**
 * The engine's copy of the one send work request it is segmenting (RFC 5040 §5.1–§5.3): a
 * {@link SendRing} fills it when the engine takes the WR, so the engine never reads the ring's
 * slots back while it segments. Preallocated for {@code maxSge} gather pieces; filled and read on
 * the thread that drives the engine; nothing is allocated.
 */
public final class SendWork {
    private int kind;
    private int opcode;
    private int length;
    private int remoteStag;
    private long remoteTo;
    private int localStag;
    private long localTo;
    private int pieces;
    private final ByteBuffer[] pieceBuffer;
    private final int[] pieceOffset;
    private final int[] pieceLength;

    SendWork(int maxSge) {
        pieceBuffer = new ByteBuffer[maxSge];
        pieceOffset = new int[maxSge];
        pieceLength = new int[maxSge];
    }

    /**
     * The WR's fields, its gather list emptied.
     *
     * @param kind       {@link SendRing#SEND}, {@link SendRing#WRITE} or {@link SendRing#READ}
     * @param opcode     the {@link RdmapOpcode} (Send variants carry SE and Invalidate)
     * @param length     message length in bytes
     * @param remoteStag Write: the sink STag; Read: the source STag; Send with Invalidate: the STag to invalidate; else 0
     * @param remoteTo   Write: the sink TO; Read: the source TO
     * @param localStag  Read: the local sink STag (0 for a zero-length Read)
     * @param localTo    Read: the local sink TO
     */
    public void set(int kind, int opcode, int length, int remoteStag, long remoteTo, int localStag, long localTo) {
        this.kind = kind;
        this.opcode = opcode;
        this.length = length;
        this.remoteStag = remoteStag;
        this.remoteTo = remoteTo;
        this.localStag = localStag;
        this.localTo = localTo;
        for (int i = 0; i < pieces; i++) {
            pieceBuffer[i] = null;
        }
        pieces = 0;
    }

    /** Appends a gather piece of a Send or Write: {@code length} bytes of {@code buffer} from absolute index {@code offset}. */
    public void piece(ByteBuffer buffer, int offset, int length) {
        pieceBuffer[pieces] = buffer;
        pieceOffset[pieces] = offset;
        pieceLength[pieces] = length;
        pieces++;
    }

    /** Drops the references to the application's buffers once the WR is segmented. */
    void clear() {
        set(0, 0, 0, 0, 0, 0, 0);
    }

    int kind() {
        return kind;
    }

    int opcode() {
        return opcode;
    }

    int length() {
        return length;
    }

    int remoteStag() {
        return remoteStag;
    }

    long remoteTo() {
        return remoteTo;
    }

    int localStag() {
        return localStag;
    }

    long localTo() {
        return localTo;
    }

    int pieces() {
        return pieces;
    }

    ByteBuffer pieceBuffer(int i) {
        return pieceBuffer[i];
    }

    int pieceOffset(int i) {
        return pieceOffset[i];
    }

    int pieceLength(int i) {
        return pieceLength[i];
    }
}
