package org.jwarp.rdmap;

/**
 * The send queue an {@link RdmapEndpoint} transmits from (RFC 5040 §5 data transfer, §6.5 ORD),
 * owned by the queue pair: the one place the engine pulls from. The engine takes the next WR
 * that may go ({@link #nextKind}, {@link #take}) as a copy in its own {@link SendWork} and
 * segments that copy; it reports back only that the WR finished ({@link #done}). Nothing of the
 * ring is read back while a WR is on its way down to the wire.
 *
 * <p>The ring decides which WR may go on the wire next, so the ORD is counted once, by the ring: it
 * holds a Read back while ORD Reads are outstanding, and everything posted after it waits too
 * ({@link ArraySendRing}, the soft provider's send queue). The engine only remembers the order of
 * the Read Requests it sent, to match their Read Responses (RFC 5040 §5.2).
 *
 * <p>A WR's gather pieces must stay readable between {@link #take} and {@link #done}. Every method
 * is called on the thread that drives the engine and must not allocate.
 */
public interface SendRing {
    /** {@link #nextKind}: a Send (RFC 5040 §5.3), DDP untagged on queue 0. */
    int SEND = 0;
    /** {@link #nextKind}: an RDMA Write (RFC 5040 §5.1), DDP tagged. */
    int WRITE = 1;
    /** {@link #nextKind}: an RDMA Read (RFC 5040 §5.2): a Read Request out, its Read Response back. */
    int READ = 2;

    /** {@link #SEND}, {@link #WRITE} or {@link #READ} of the oldest WR not taken yet, if it may go on the wire now; else -1. */
    int nextKind();

    /** The engine starts transmitting the WR {@link #nextKind} named: its fields into {@code into}; returns its sequence. */
    long take(SendWork into);

    /**
     * Whether every piece's memory of WR {@code seq} is still registered (a source deregistered while
     * the WR is in flight must not be read any more, RFC 5041 §8.3); checked before each segment.
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
