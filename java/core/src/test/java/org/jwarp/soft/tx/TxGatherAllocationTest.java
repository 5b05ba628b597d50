package org.jwarp.soft.tx;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

import org.junit.jupiter.api.Test;

/**
 * Review finding: TxGather caches one payload view per ring position and re-duplicates the
 * region's buffer whenever the position meets another region than last time. With payloads
 * from three regions in rotation (128 positions, not a multiple of 3) every referenced FPDU
 * allocates a ByteBuffer: the transmit hot path is not allocation-free (RFC 5044 §4 FPDUs, issue 13).
 */
class TxGatherAllocationTest {

    private static long allocated() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean())
                .getThreadAllocatedBytes(Thread.currentThread().getId());
    }

    @Test
    void referencingRotatingRegionsAllocatesNothing_5044_4() throws Exception {
        ByteBuffer[] regions = {ByteBuffer.allocateDirect(4096), ByteBuffer.allocateDirect(4096),
                ByteBuffer.allocateDirect(4096)};
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            try (SocketChannel tx = SocketChannel.open(server.getLocalAddress());
                 SocketChannel rx = server.accept()) {
                Thread drain = new Thread(() -> {
                    ByteBuffer in = ByteBuffer.allocateDirect(1 << 16);
                    try {
                        while (rx.read(in.clear()) >= 0) {
                            // discard
                        }
                    } catch (Exception e) {
                        // closed
                    }
                });
                drain.setDaemon(true);
                drain.start();
                TxGather g = new TxGather(64, 1 << 20);
                ByteBuffer staging = ByteBuffer.allocateDirect(64 * 1024);
                g.bind(new TxStaging(staging));
                int n = 30_000;
                long before = 0;
                for (int i = 0; i < n; i++) {
                    if (i == 1000) {
                        before = allocated(); // warm: every position met every region once
                    }
                    staging.putInt(i);
                    g.sink().reference(staging.position(), regions[i % 3], 0, 1024);
                    staging.putInt(i);
                    while (g.pending()) {
                        g.write(tx);
                        g.compact();
                    }
                }
                long perOp = (allocated() - before) / (n - 1000);
                assertTrue(perOp < 8, "bytes allocated per referenced FPDU: " + perOp);
            }
        }
    }
}
