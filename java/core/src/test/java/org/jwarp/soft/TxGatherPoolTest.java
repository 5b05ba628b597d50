package org.jwarp.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

import org.junit.jupiter.api.Test;

/**
 * TxGather's payload-view pools: a stream referencing many regions over its life (registered,
 * used, deregistered) keeps views of at most {@link TxGather#POOLS} idle ones, and the bytes of
 * each referenced FPDU payload still leave in order (RFC 5044 §4 FPDUs, zero-copy transmit).
 */
class TxGatherPoolTest {

    @Test
    void poolsOfIdleRegionsAreDropped_5044_4() throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            try (SocketChannel tx = SocketChannel.open(server.getLocalAddress());
                 SocketChannel rx = server.accept()) {
                TxGather g = new TxGather(8, 1 << 20);
                ByteBuffer staging = ByteBuffer.allocateDirect(4096);
                g.bind(new TxStaging(staging));
                ByteBuffer in = ByteBuffer.allocate(64);
                int regions = 3 * TxGather.POOLS;
                for (int i = 0; i < regions; i++) {
                    ByteBuffer region = ByteBuffer.allocateDirect(16);
                    region.put(0, (byte) i);
                    staging.put((byte) 0x7E);
                    g.reference(staging.position(), region, 0, 1);
                    staging.put((byte) 0x7F);
                    while (g.pending()) {
                        g.write(tx);
                        g.compact();
                    }
                    in.clear().limit(3);
                    while (in.hasRemaining()) {
                        rx.read(in);
                    }
                    assertEquals((byte) i, in.get(1), "payload of region " + i + " spliced between its staging bytes");
                    assertTrue(g.pooledSources() <= TxGather.POOLS, "pools kept after " + (i + 1) + " regions: "
                            + g.pooledSources());
                }
            }
        }
    }
}
