package org.jwarp.verbs;

import java.nio.ByteBuffer;
import java.util.Set;

/**
 * A registered memory region (ibv_mr; RFC 5040 §2.1 STag). The peer addresses it with
 * {@link #rkey()} and a virtual address in [{@link #address()}, {@link #address()} + {@link #length()}).
 * Closing it deregisters and invalidates the STag at once (RFC 5041 §8.3).
 *
 * <p>Thread-safety: the accessors may be called from any thread (a region's address, keys, length
 * and access never change). {@link #close()} may run while the peer or local work requests use
 * the region: later remote access is refused, and posted WRs naming it may complete in error.
 * {@link #bindTo} may be called from any thread, also while the region is in use; it takes effect
 * for segments validated after it returns (a tagged segment whose STag was checked before keeps
 * that check's outcome). Ask {@link DeviceInfo#streamBinding()} before calling it.
 *
 * <p><b>Who may touch the memory.</b> The application owns the region's bytes except where a work
 * request or the peer uses them:
 * <ul>
 *   <li>the buffers a posted work request names belong to the provider until the request's
 *       completion (see {@link QueuePair}): do not write into the source of a Send or RDMA Write,
 *       and do not read or write the sink of a receive or RDMA Read, before it;</li>
 *   <li>with {@link Access#REMOTE_WRITE} the peer may place into the region at any time; the
 *       application learns that a Write arrived only from its own protocol (a following Send, or a
 *       flag byte it polls, calling {@link CompletionQueue#progress()} on the soft provider);</li>
 *   <li>with {@link Access#REMOTE_READ} the peer may read the region at any time: a Read Response
 *       is sent from the region itself (zero copy) until the peer's Read completes, which this side
 *       does not see.</li>
 * </ul>
 *
 * <p><b>Zero copy and the CRC</b>, as with Linux siw's zero-copy transmit: the soft provider
 * computes an FPDU's CRC32c (RFC 5044 §4.4) when it stages the FPDU, but the socket reads the
 * region's bytes later. A local write into bytes that a Send, RDMA Write or Read Response in flight
 * references (before the WR's completion; for a Read Response, before the peer's Read completes)
 * gives the peer a CRC error, and the peer ends the connection with a TERM (RFC 5044 §8): both
 * queue pairs go to ERR with a {@link AsyncEvent.Type#QP_FATAL} event, and their outstanding work
 * requests complete in error (the oldest send request of the side that received the TERM with the
 * status the TERM maps to, see {@link WcStatus}) or flushed. Through DiSNI the device decides (siw behaves
 * the same way). Closing the region meanwhile copies the bytes it holds at that moment for the
 * socket (soft), so a close never waits for a slow peer, but the bytes sent need not match the CRC.
 *
 * <p>Many connections may use one region at once: the soft provider reads and writes registered
 * memory by absolute index through views of its own, so every stream of the protection domain may
 * send from, answer Reads from and place into one region concurrently, and the buffer the
 * application registered keeps its position, limit and mark.
 */
public interface MemoryRegion extends AutoCloseable {
    /**
     * The registered buffer (a duplicate view; position and limit are the caller's).
     *
     * @return a view of the whole region, sharing its memory
     * @throws IllegalStateException when the region is longer than a {@link ByteBuffer} can be
     *         ({@link Integer#MAX_VALUE} bytes): use {@link #buffer(long, int)} windows then
     */
    ByteBuffer buffer();

    /**
     * A view of {@code length} bytes of the region from byte {@code offset} (tagged offset
     * {@link #address()} + {@code offset}), for regions of any length, also those over 2 GiB
     * ({@link ProtectionDomain#allocate}). The view shares the region's memory; it is only valid
     * while the region is open. Setup-time access: it may allocate.
     *
     * @param offset the first byte of the view, from the region's start
     * @param length the view's length in bytes
     * @return the view
     * @throws IndexOutOfBoundsException when {@code [offset, offset + length)} is not inside the region
     */
    default ByteBuffer buffer(long offset, int length) {
        if (offset < 0 || length < 0 || offset > length() - length) {
            throw new IndexOutOfBoundsException("window [" + offset + ", +" + length + ") outside the region of "
                    + length() + " bytes");
        }
        return buffer().slice((int) offset, length);
    }

    /**
     * {@return the base virtual address the peer uses for tagged access (tagged offset of byte 0)}
     * Pass it with {@link #rkey()} to the peer, e.g. in private data.
     */
    long address();

    /**
     * {@return the bytes in the region} A long: regions over 2 GiB exist where the device allows them
     * ({@link DeviceInfo#maxMrSize()}, {@link ProtectionDomain#allocate}); tagged offsets are 64-bit
     * (RFC 5041 §4.1, §7.1).
     */
    long length();

    /**
     * {@return the local key ({@code lkey}) that names the region in this side's scatter-gather
     * entries} The soft provider uses one STag for lkey and rkey.
     */
    int lkey();

    /** {@return the STag the peer names in RDMA Write and Read Requests ({@code rkey})} */
    int rkey();

    /** {@return the access rights the region was registered with; do not modify the set} */
    Set<Access> access();

    /**
     * Limits remote access to this region to the connection of {@code qp} (RFC 5041 §8.2 DDP Stream
     * association; §8.3 (3) asks DDP for this mechanism). A remote Write or Read naming the STag on
     * any other connection is refused as "STag not associated" and terminates that connection.
     * {@code null} returns the region to every connection of its protection domain.
     *
     * @param qp the connection's queue pair, or null for every connection of the domain
     * @throws UnsupportedOperationException when the provider scopes STags to a protection domain
     *         only ({@link DeviceInfo#streamBinding()} is false; the DiSNI provider: siw has no
     *         memory windows)
     * @throws IllegalArgumentException when {@code qp} is of another provider or protection domain
     */
    default void bindTo(QueuePair qp) {
        throw new UnsupportedOperationException("this provider scopes an STag to its protection domain only; "
                + "binding it to one connection (RFC 5041 §8.2 DDP Stream association) is not available");
    }

    /**
     * Deregisters the region ({@code ibv_dereg_mr}): its STag is invalid when this returns, remote
     * access through it is refused from then on (RFC 5041 §8.3), and posted work requests naming it
     * may complete in error. Memory from {@link ProtectionDomain#allocate} is freed. A second close
     * does nothing.
     */
    @Override
    void close();
}
