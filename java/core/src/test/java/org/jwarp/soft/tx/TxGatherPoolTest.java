package org.jwarp.soft.tx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.lang.ref.WeakReference;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

import org.junit.jupiter.api.Test;

/**
 * TxGather's payload-view pools: a stream referencing many regions over its life (registered,
 * used, deregistered) keeps views of at most {@link TxGather#POOLS} idle ones, and the bytes of
 * each referenced FPDU payload still leave in order (RFC 5044 §4 FPDUs, zero-copy transmit); a
 * deregistered region's pool goes at once (RFC 5041 §8.3.1 (6): nothing of it stays reachable for
 * the QP's life), and a new source past {@link TxGather#POOLS} costs no more than its one view.
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
                    g.sink().reference(staging.position(), region, 0, 1);
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

    @Test
    void revokedSourcePoolIsDropped_5041_8_3_1() throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            try (SocketChannel tx = SocketChannel.open(server.getLocalAddress());
                 SocketChannel rx = server.accept()) {
                TxGather g = new TxGather(8, 1 << 20);
                ByteBuffer staging = ByteBuffer.allocateDirect(4096);
                g.bind(new TxStaging(staging));
                ByteBuffer region = ByteBuffer.allocateDirect(1 << 16);
                ByteBuffer other = ByteBuffer.allocateDirect(16);
                WeakReference<ByteBuffer> gone = new WeakReference<>(region);
                for (ByteBuffer src : new ByteBuffer[] {region, other}) {
                    staging.put((byte) 1);
                    g.sink().reference(staging.position(), src, 0, 8);
                    while (g.pending()) {
                        g.write(tx);
                        g.compact();
                    }
                }
                assertEquals(2, g.pooledSources());
                g.revoked(region, 0, region.capacity()); // deregistered: nothing pending of it
                assertEquals(1, g.pooledSources(), "the pool of a deregistered region is kept");
                // one slice of it pending at revocation: snapshotted, and the pool goes too
                ByteBuffer region2 = ByteBuffer.allocateDirect(1 << 16);
                WeakReference<ByteBuffer> gone2 = new WeakReference<>(region2);
                staging.put((byte) 2);
                g.sink().reference(staging.position(), region2, 0, 8);
                g.revoked(region2, 0, region2.capacity());
                assertEquals(1, g.pooledSources(), "the pool of a deregistered region with a slice pending is kept");
                while (g.pending()) {
                    g.write(tx);
                    g.compact();
                }
                region = null;
                region2 = null;
                for (int i = 0; i < 50 && (gone.get() != null || gone2.get() != null); i++) {
                    System.gc();
                    Thread.sleep(10);
                }
                assertNull(gone.get(), "a deregistered region's buffer stays reachable from the transmit path");
                assertNull(gone2.get(), "a deregistered region's buffer stays reachable from the transmit path");
                assertEquals(1, g.pooledSources());
                ByteBuffer in = ByteBuffer.allocate(64);
                rx.configureBlocking(false);
                rx.read(in);
            }
        }
    }

    private static long allocated() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean())
                .getThreadAllocatedBytes(Thread.currentThread().getId());
    }

    @Test
    void newSourcesPastThePoolBoundAllocateOnlyTheirView_5044_4() throws Exception {
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
                int n = 4000;
                int warm = 4 * TxGather.POOLS;
                ByteBuffer[] sources = new ByteBuffer[n];
                for (int i = 0; i < n; i++) {
                    sources[i] = ByteBuffer.allocateDirect(16);
                }
                ByteBuffer[] views = new ByteBuffer[n];
                long d0 = allocated();
                for (int i = 0; i < n; i++) {
                    views[i] = sources[i].duplicate(); // what a new source's one view costs
                }
                long viewBytes = (allocated() - d0) / n;
                TxGather g = new TxGather(8, 1 << 20);
                ByteBuffer staging = ByteBuffer.allocateDirect(4096);
                g.bind(new TxStaging(staging));
                long before = 0;
                for (int i = 0; i < n; i++) {
                    if (i == warm) {
                        before = allocated();
                    }
                    staging.put((byte) i);
                    g.sink().reference(staging.position(), sources[i], 0, 8);
                    while (g.pending()) {
                        g.write(tx);
                        g.compact();
                    }
                }
                long perSource = (allocated() - before) / (n - warm);
                assertTrue(perSource <= viewBytes + 4, "bytes allocated per new source: " + perSource + ", of which "
                        + viewBytes + " its view (a pool or an iterator per source besides)");
                assertTrue(g.pooledSources() <= TxGather.POOLS);
                assertTrue(views[n - 1] != null);
            }
        }
    }
}
