package org.jwarp.verbs;

import java.nio.ByteBuffer;
import java.util.Set;

/**
 * A registered memory region (ibv_mr; RFC 5040 §2.1 STag). The peer addresses it with
 * {@link #rkey()} and a virtual address in [{@link #address()}, {@link #address()} + {@link #length()}).
 * Closing it deregisters and invalidates the STag at once (RFC 5041 §8.3).
 */
public interface MemoryRegion extends AutoCloseable {
    /** The registered buffer (a duplicate view; position and limit are the caller's). */
    ByteBuffer buffer();

    /** Base virtual address the peer uses for tagged access (tagged offset of byte 0). */
    long address();

    int length();

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
     *         only (the DiSNI provider: siw has no memory windows)
     * @throws IllegalArgumentException when {@code qp} is of another provider or protection domain
     */
    default void bindTo(QueuePair qp) {
        throw new UnsupportedOperationException("this provider scopes an STag to its protection domain only; "
                + "binding it to one connection (RFC 5041 §8.2 DDP Stream association) is not available");
    }

    @Override
    void close();
}
