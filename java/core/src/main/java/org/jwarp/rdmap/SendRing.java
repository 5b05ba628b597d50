package org.jwarp.rdmap;

import java.nio.ByteBuffer;

/**
 * The send queue an {@link RdmapEndpoint} transmits from (RFC 5040 §5 data transfer, §6.5 ORD):
 * the one ring that holds a send work request, owned by the queue pair. The engine keeps no copy
 * of a WR: it reads the fields of the WR it is segmenting through this interface, by the ring's
 * sequence number, and reports each WR back through {@link #done}.
 *
 * <p>The ring decides which WR may go on the wire next ({@link #next}), so the ORD is counted
 * once, by the ring: it holds a Read back while ORD Reads are outstanding, and everything posted
 * after it waits too (the soft provider's send queue, {@link ArraySendRing}). The engine only remembers the order of
 * the Read Requests it sent, to match their Read Responses (RFC 5040 §5.2).
 *
 * <p>A WR's fields must not change between {@link #take} and {@link #done}. Every method is
 * called on the thread that drives the engine and must not allocate.
 */
public interface SendRing {
    /** {@link #kind}: a Send (RFC 5040 §5.3), DDP untagged on queue 0. */
    int SEND = 0;
    /** {@link #kind}: an RDMA Write (RFC 5040 §5.1), DDP tagged. */
    int WRITE = 1;
    /** {@link #kind}: an RDMA Read (RFC 5040 §5.2): a Read Request out, its Read Response back. */
    int READ = 2;

    /** Sequence of the oldest WR the engine has not taken yet, if it may go on the wire now; else -1. */
    long next();

    /** The engine starts transmitting WR {@code seq}, the one {@link #next} returned. */
    void take(long seq);

    /** {@link #SEND}, {@link #WRITE} or {@link #READ}. */
    int kind(long seq);

    /** The {@link RdmapOpcode} of the message (Send variants carry SE and Invalidate). */
    int opcode(long seq);

    /** Message length in bytes. */
    int length(long seq);

    /** Write: the sink STag; Read: the source STag; Send with Invalidate: the STag to invalidate; else 0. */
    int remoteStag(long seq);

    /** Write: the sink TO; Read: the source TO. */
    long remoteTo(long seq);

    /** Read: the local sink STag (0 for a zero-length Read). */
    int localStag(long seq);

    /** Read: the local sink TO. */
    long localTo(long seq);

    /** Send or Write: pieces of the gather list. */
    int pieces(long seq);

    /** Buffer of gather piece {@code i}. */
    ByteBuffer pieceBuffer(long seq, int i);

    /** Absolute index in {@link #pieceBuffer} where piece {@code i} starts. */
    int pieceOffset(long seq, int i);

    /** Bytes of piece {@code i}. */
    int pieceLength(long seq, int i);

    /**
     * Whether every piece's memory is still registered (a source deregistered while the WR is in
     * flight must not be read any more, RFC 5041 §8.3); checked before each segment.
     */
    boolean sourceValid(long seq);

    /**
     * WR {@code seq} finished on the engine's side: a Send or Write's last FPDU was handed to the
     * transport, a Read's whole Read Response was placed. The ring reports completions in posting
     * order.
     */
    void done(long seq);

    /** WRs taken and not yet done (diagnostics). */
    int outstanding();

    /** The stream died ({@link RdmapEndpoint#flush}): the engine takes nothing more from the ring. */
    void abandon();
}
