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

    @Override
    void close();
}
