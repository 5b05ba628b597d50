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
 */
public interface MemoryRegion extends AutoCloseable {
    /**
     * The registered buffer (a duplicate view; position and limit are the caller's).
     *
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
     * @throws IndexOutOfBoundsException when {@code [offset, offset + length)} is not inside the region
     */
    default ByteBuffer buffer(long offset, int length) {
        if (offset < 0 || length < 0 || offset > length() - length) {
            throw new IndexOutOfBoundsException("window [" + offset + ", +" + length + ") outside the region of "
                    + length() + " bytes");
        }
        return buffer().slice((int) offset, length);
    }

    /** Base virtual address the peer uses for tagged access (tagged offset of byte 0). */
    long address();

    /**
     * Bytes in the region. A long: regions over 2 GiB exist where the device allows them
     * ({@link DeviceInfo#maxMrSize()}, {@link ProtectionDomain#allocate}); tagged offsets are 64-bit
     * (RFC 5041 §4.1, §7.1).
     */
    long length();

    int lkey();

    /** The STag the peer names in RDMA Write and Read Requests. */
    int rkey();

    Set<Access> access();

    /**
     * Limits remote access to this region to the connection of {@code qp} (RFC 5041 §8.2 DDP Stream
     * association; §8.3 (3) asks DDP for this mechanism). A remote Write or Read naming the STag on
     * any other connection is refused as "STag not associated" and terminates that connection.
     * {@code null} returns the region to every connection of its protection domain.
     *
     * @throws UnsupportedOperationException when the provider scopes STags to a protection domain
     *         only ({@link DeviceInfo#streamBinding()} is false; the DiSNI provider: siw has no
     *         memory windows)
     * @throws IllegalArgumentException when {@code qp} is of another provider or protection domain
     */
    default void bindTo(QueuePair qp) {
        throw new UnsupportedOperationException("this provider scopes an STag to its protection domain only; "
                + "binding it to one connection (RFC 5041 §8.2 DDP Stream association) is not available");
    }

    @Override
    void close();
}
