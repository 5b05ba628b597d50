package org.jwarp.soft.tx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

import org.junit.jupiter.api.Test;

/**
 * The zero-copy transmit's bookkeeping over a real socket: staged bytes and referenced slices
 * leave in order, and a send WR completes only once the socket has accepted its last byte
 * (RFC 5040 §5.1: the local completion of a Send or Write means its buffer may be reused).
 */
class TxGatherTest {

    @Test
    void completesOnlyWhatTheSocketAccepted_5040_5_1() throws Exception {
        int slices = 96;
        int sliceLen = 64 * 1024;
        ByteBuffer mem = ByteBuffer.allocateDirect(slices * sliceLen);
        for (int i = 0; i < mem.capacity(); i++) {
            mem.put(i, (byte) (i * 7 + (i >>> 16)));
        }
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            try (SocketChannel tx = SocketChannel.open(server.getLocalAddress());
                 SocketChannel rx = server.accept()) {
                tx.configureBlocking(false);
                TxGather g = new TxGather(slices, Integer.MAX_VALUE);
                ByteBuffer staging = ByteBuffer.allocateDirect(64 * 1024);
                g.bind(new TxStaging(staging));
                ByteArrayOutputStream want = new ByteArrayOutputStream();
                long[] ends = new long[slices];
                for (int i = 0; i < slices; i++) {
                    // a 4-byte "header" staged, the slice referenced, a 4-byte "trailer" staged
                    for (int b = 0; b < 4; b++) {
                        staging.put((byte) (i + b));
                        want.write(i + b);
                    }
                    assertTrue(g.sink().canReference(sliceLen));
                    ByteBuffer v = g.sink().reference(staging.position(), mem, i * sliceLen, sliceLen);
                    byte[] p = new byte[sliceLen];
                    v.get(v.position(), p);
                    want.writeBytes(p);
                    for (int b = 0; b < 4; b++) {
                        staging.put((byte) (0x80 + i + b));
                        want.write(0x80 + i + b);
                    }
                    ends[i] = g.queuedEnd();
                    g.completeAt(i, ends[i]);
                }
                assertEquals(want.size(), ends[slices - 1]);
                // the peer reads nothing yet: the socket takes only part of the 6 MiB
                long total = 0;
                for (int k = 0; k < 1000; k++) {
                    long w = g.write(tx);
                    g.compact();
                    total += w;
                    if (w == 0) {
                        break;
                    }
                }
                assertTrue(total < want.size(), "the socket filled up before everything left: " + total);
                int completed = 0;
                for (int s = g.acceptedSlot(); s >= 0; s = g.acceptedSlot()) {
                    assertEquals(completed, s, "in order");
                    assertTrue(ends[s] <= total, "slot " + s + " ends at " + ends[s] + " beyond the accepted " + total);
                    completed++;
                }
                assertTrue(completed < slices, "a slot whose bytes the socket has not taken is not complete");
                assertTrue(completed == slices || ends[completed] > total);
                // now the peer drains; everything leaves and completes, and the bytes are the stream's
                ByteArrayOutputStream got = new ByteArrayOutputStream();
                ByteBuffer in = ByteBuffer.allocate(1 << 20);
                while (got.size() < want.size()) {
                    g.write(tx);
                    g.compact();
                    for (int s = g.acceptedSlot(); s >= 0; s = g.acceptedSlot()) {
                        assertEquals(completed++, s);
                    }
                    in.clear();
                    int r = rx.read(in);
                    got.write(in.array(), 0, r);
                }
                assertEquals(slices, completed);
                assertTrue(!g.pending());
                assertArrayEquals(want.toByteArray(), got.toByteArray());
            }
        }
    }

    /**
     * A partial write keeps its iovec: the next write resumes it (also across {@link TxGather#compact})
     * instead of laying out all pending entries again, and the stream bytes stay exact while new
     * FPDUs are queued between writes (RFC 5044 §4: FPDUs leave whole and in order).
     */
    @Test
    void partialWriteResumesTheIovec_5044_4() throws Exception {
        int sliceLen = 64 * 1024;
        int slices = 128;
        ByteBuffer mem = ByteBuffer.allocateDirect(slices * sliceLen);
        for (int i = 0; i < mem.capacity(); i++) {
            mem.put(i, (byte) (i * 13 + (i >>> 12)));
        }
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            try (SocketChannel tx = SocketChannel.open(server.getLocalAddress());
                 SocketChannel rx = server.accept()) {
                tx.configureBlocking(false);
                TxGather g = new TxGather(slices, Integer.MAX_VALUE);
                ByteBuffer staging = ByteBuffer.allocateDirect(64 * 1024);
                g.bind(new TxStaging(staging));
                ByteArrayOutputStream want = new ByteArrayOutputStream();
                ByteArrayOutputStream got = new ByteArrayOutputStream();
                ByteBuffer in = ByteBuffer.allocate(16 * 1024); // the peer reads slowly: writes stay partial
                int queued = 0;
                long resumed = 0;
                while (got.size() < want.size() || queued < slices) {
                    if (queued < slices && (queued < slices / 2 || got.size() % 5 == 0 || !g.pending())) {
                        for (int b = 0; b < 3; b++) {
                            staging.put((byte) (queued + b));
                            want.write(queued + b);
                        }
                        ByteBuffer v = g.sink().reference(staging.position(), mem, queued * sliceLen, sliceLen);
                        byte[] p = new byte[sliceLen];
                        v.get(v.position(), p);
                        want.writeBytes(p);
                        staging.put((byte) 0x7E);
                        want.write(0x7E);
                        queued++;
                    }
                    g.write(tx);
                    g.compact();
                    boolean partial = g.pending();
                    long kept = g.rebuilds();
                    g.write(tx); // nothing new queued: a partial write's iovec is resumed
                    g.compact();
                    if (partial && g.rebuilds() == kept) {
                        resumed++;
                    }
                    in.clear();
                    int r = rx.read(in);
                    got.write(in.array(), 0, r);
                }
                assertTrue(resumed > 0, "a partial write was resumed without a rebuild");
                assertTrue(g.rebuilds() < 3L * slices, "rebuilds " + g.rebuilds());
                assertTrue(!g.pending());
                assertArrayEquals(want.toByteArray(), got.toByteArray());
            }
        }
    }

    /**
     * Stage-ahead: while the socket takes everything, no more than the write budget is referenced
     * before a write; once a write leaves bytes behind (the socket is full) the ahead budget lets
     * more FPDUs be staged, their CRCs computed while the socket drains, and a write that takes
     * everything brings the write budget back. The stream bytes stay exact (RFC 5044 §4).
     */
    @Test
    void stagesAheadOnlyWhileTheSocketIsFull_5044_4() throws Exception {
        int sliceLen = 64 * 1024;
        int slices = 64;
        ByteBuffer mem = ByteBuffer.allocateDirect(slices * sliceLen);
        for (int i = 0; i < mem.capacity(); i++) {
            mem.put(i, (byte) (i * 31 + (i >>> 10)));
        }
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            try (SocketChannel tx = SocketChannel.open(server.getLocalAddress());
                 SocketChannel rx = server.accept()) {
                tx.configureBlocking(false);
                TxGather g = new TxGather(slices, sliceLen, 8 * sliceLen);
                ByteBuffer staging = ByteBuffer.allocateDirect(64 * 1024);
                g.bind(new TxStaging(staging));
                ByteArrayOutputStream want = new ByteArrayOutputStream();
                int queued = 0;
                // one slice fills the write budget; the socket takes it all: no stage-ahead
                queued = queue(g, staging, mem, queued, sliceLen, want);
                assertFalse(g.sink().canReference(sliceLen), "the write budget is one slice");
                assertFalse(g.roomAhead());
                g.write(tx);
                g.compact();
                assertFalse(g.socketFull());
                // the peer reads nothing: queue and write until a write leaves bytes behind
                while (!g.socketFull()) {
                    assertFalse(g.roomAhead(), "no stage-ahead while the socket takes everything");
                    queued = queue(g, staging, mem, queued, sliceLen, want);
                    g.write(tx);
                    g.compact();
                }
                assertTrue(g.shortWrites() > 0);
                int ahead = 0;
                while (g.roomAhead()) {
                    queued = queue(g, staging, mem, queued, sliceLen, want);
                    ahead++;
                }
                assertTrue(ahead >= 1, "staged ahead while the socket is full");
                assertTrue(g.sink().bytes() >= 4L * sliceLen, "beyond the one-slice write budget: " + g.sink().bytes());
                assertTrue(g.sink().bytes() <= 8L * sliceLen + sliceLen, "bounded by the ahead budget: "
                        + g.sink().bytes());
                // the peer drains: everything leaves in order and the write budget comes back
                ByteArrayOutputStream got = new ByteArrayOutputStream();
                ByteBuffer in = ByteBuffer.allocate(1 << 20);
                while (got.size() < want.size()) {
                    g.write(tx);
                    g.compact();
                    in.clear();
                    int r = rx.read(in);
                    got.write(in.array(), 0, r);
                }
                assertArrayEquals(want.toByteArray(), got.toByteArray());
                assertFalse(g.pending());
                g.write(tx);
                assertFalse(g.socketFull(), "nothing left behind");
                assertTrue(g.sink().canReference(sliceLen));
                queued = queue(g, staging, mem, queued, sliceLen, want);
                assertFalse(g.sink().canReference(sliceLen), "the write budget again once the socket took everything");
            }
        }
    }

    /** Stages a 2-byte "header", references slice {@code i}, stages a 2-byte "trailer"; returns i + 1. */
    private static int queue(TxGather g, ByteBuffer staging, ByteBuffer mem, int i, int len, ByteArrayOutputStream want) {
        int slice = i % (mem.capacity() / len);
        staging.put((byte) i).put((byte) (i >>> 8));
        want.write(i);
        want.write(i >>> 8);
        ByteBuffer v = g.sink().reference(staging.position(), mem, slice * len, len);
        byte[] p = new byte[len];
        v.get(v.position(), p);
        want.writeBytes(p);
        staging.put((byte) 0x55).put((byte) 0xAA);
        want.write(0x55);
        want.write(0xAA);
        return i + 1;
    }
}
