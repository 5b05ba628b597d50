package org.jwarp.ffm.impl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/**
 * The addresses rdma_cm keeps in an id's route record ({@code id->route.addr}, rdma-core 44's
 * {@code <rdma/rdma_cma.h>}): {@code rdma_get_local_addr} and {@code rdma_get_peer_addr} are static
 * inline there, so they are read here through the layout. After {@code rdma_listen} on port 0 the
 * source holds the port the kernel chose; on a requested id the destination is the initiator.
 *
 * <pre>
 * struct rdma_cm_id { verbs, channel, context, qp (4 pointers);
 *                     struct rdma_route route { struct rdma_addr addr {
 *                         union { sockaddr_storage src } (128 bytes), union { sockaddr_storage dst } ... } } ... }
 * </pre>
 */
final class FfmAddresses {
    /** {@code route.addr.src_storage}: right after the four pointers. */
    static final long SRC = IbvLayouts.CM_ID_QP + ADDRESS.byteSize();
    /** {@code sizeof(struct sockaddr_storage)}. */
    static final long SOCKADDR_STORAGE = 128;
    /** {@code route.addr.dst_storage}. */
    static final long DST = SRC + SOCKADDR_STORAGE;
    static final short AF_INET = 2;
    static final short AF_INET6 = 10;

    private FfmAddresses() {
    }

    /** {@code rdma_get_local_addr(id)}; null when the id has none of AF_INET/AF_INET6. */
    static InetSocketAddress local(MemorySegment cmId) {
        return read(cmId, SRC);
    }

    /** {@code rdma_get_peer_addr(id)}; null when the id has none of AF_INET/AF_INET6. */
    static InetSocketAddress peer(MemorySegment cmId) {
        return read(cmId, DST);
    }

    /** A {@code sockaddr_in} or {@code sockaddr_in6} at {@code offset}: family in host order, port in network order. */
    static InetSocketAddress read(MemorySegment s, long offset) {
        short family = s.get(JAVA_SHORT, offset);
        int port = (s.get(JAVA_BYTE, offset + 2) & 0xff) << 8 | s.get(JAVA_BYTE, offset + 3) & 0xff;
        byte[] ip;
        if (family == AF_INET) {
            ip = s.asSlice(offset + 4, 4).toArray(JAVA_BYTE);
        } else if (family == AF_INET6) {
            ip = s.asSlice(offset + 8, 16).toArray(JAVA_BYTE);
        } else {
            return null;
        }
        try {
            return new InetSocketAddress(InetAddress.getByAddress(ip), port);
        } catch (UnknownHostException e) {
            throw new IllegalStateException("address of " + ip.length + " bytes", e); // 4 and 16 are always valid
        }
    }
}
