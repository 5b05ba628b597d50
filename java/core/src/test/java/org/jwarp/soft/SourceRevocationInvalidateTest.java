package org.jwarp.soft;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.jwarp.memory.StagAccess;
import org.jwarp.memory.StagDomain;
import org.jwarp.memory.StagRegion;
import org.jwarp.memory.StagTable;
import org.jwarp.soft.loop.IoLock;
import org.jwarp.soft.tx.SourceRevocation;
import org.jwarp.soft.tx.TxGather;
import org.jwarp.soft.tx.TxStaging;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * RFC 5040 §5.3 with RFC 5041 §8.3.1 (6), the source side of a remote invalidation, at the level
 * of the streams' revocation listeners: when {@link StagTable#invalidate} returns (the caller then
 * reports the invalidation in the Send's receive completion), no {@link TxGather} of the region's
 * protection domain still reads the region: a guard written over it afterwards never leaves. The
 * invalidating thread holds its own stream's I/O lock, as the wire engine does; another stream's
 * lock may be held elsewhere, by a thread that lets go later or by a thread that is itself
 * invalidating a region of the first stream (which must not deadlock).
 */
class SourceRevocationInvalidateTest {
    static final byte FILL = 0x5A;
    static final byte GUARD = (byte) 0xC3;
    /** Generous bound for "no hang" (a loaded 2-core machine can stall a thread for seconds). */
    static final long HANG_SECONDS = SoftFixture.SETUP_SECONDS;

    private final StagTable stags = new StagTable(16);
    private final StagDomain pd = new StagDomain();
    /** Threads of their own for the invalidating "reactors" (the common pool may have one). */
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "invalidating-stream");
        t.setDaemon(true);
        return t;
    });

    @AfterEach
    void stopThreads() {
        threads.shutdownNow();
    }

    /** One stream's transmit side: its I/O lock, its gather and the listener registered for it. */
    private final class Stream {
        final IoLock io = new IoLock();
        final TxGather gather = new TxGather(8, 1 << 20);
        final ByteBuffer staging = ByteBuffer.allocateDirect(4096);

        Stream() {
            gather.bind(new TxStaging(staging));
            stags.addRevocationListener(new SourceRevocation(io, pd, gather));
        }

        /** Stages one FPDU-like run around an 8-byte slice of {@code r} that waits for the socket. */
        void reference(StagRegion r) {
            staging.put((byte) 0x7E);
            gather.sink().reference(staging.position(), r.buffer(), r.offset(), 8);
            staging.put((byte) 0x7F);
        }

        /** Writes everything pending and fails if a guard byte leaves. */
        void drainWithoutGuard() throws Exception {
            try (ServerSocketChannel server = ServerSocketChannel.open()) {
                server.bind(new InetSocketAddress("127.0.0.1", 0));
                try (SocketChannel tx = SocketChannel.open(server.getLocalAddress());
                     SocketChannel rx = server.accept()) {
                    int n = staging.position() + 8 * (staging.position() / 2);
                    while (gather.pending()) {
                        gather.write(tx);
                        gather.compact();
                    }
                    ByteBuffer in = ByteBuffer.allocate(n);
                    while (in.hasRemaining()) {
                        rx.read(in);
                    }
                    for (int i = 0; i < n; i++) {
                        assertNotEquals(GUARD, in.get(i), "byte " + i + " was written over the region after "
                                + "the invalidation returned");
                    }
                }
            }
        }
    }

    private StagRegion region() {
        ByteBuffer b = ByteBuffer.allocateDirect(64);
        for (int i = 0; i < 64; i++) {
            b.put(i, FILL);
        }
        return stags.register(pd, b, 0, 64, 0, StagAccess.LOCAL_WRITE | StagAccess.REMOTE_READ);
    }

    private static void guard(StagRegion r) {
        for (int i = 0; i < r.length(); i++) {
            r.buffer().put(r.offset() + i, GUARD);
        }
    }

    @Test
    void invalidationOnTheStreamFencesItsOwnAndAFreeStreamsSlices_Rfc5040_6_10_Rfc5041_8_3_1_6() throws Exception {
        Stream a = new Stream();
        Stream b = new Stream();
        StagRegion r = region();
        a.reference(r);
        b.reference(r);
        assertTrue(invalidateOn(a, r)); // the wire engine of stream A delivers the Send with Invalidate
        guard(r);
        a.drainWithoutGuard();
        b.drainWithoutGuard();
    }

    @Test
    void invalidationWaitsForTheHolderOfAnotherStreamsLock_Rfc5040_6_10_Rfc5041_8_3_1_6() throws Exception {
        Stream a = new Stream();
        Stream b = new Stream();
        StagRegion r = region();
        b.reference(r);
        b.io.lock(); // another thread is inside stream B (this one, standing in for its reactor)
        CompletableFuture<Boolean> inv;
        try {
            inv = CompletableFuture.supplyAsync(() -> invalidateOn(a, r), threads);
            Thread.sleep(200); // let it reach the fence; B's holder has not let go
            assertFalse(inv.isDone(), "the invalidation returned while stream B may still read the region");
        } finally {
            b.io.unlock(); // B's holder runs the fence handed to its lock as it lets go
        }
        assertTrue(inv.get(HANG_SECONDS, TimeUnit.SECONDS));
        guard(r);
        b.drainWithoutGuard();
    }

    @Test
    void twoStreamsInvalidatingEachOthersRegionsDoNotDeadlock_Rfc5040_6_10_Rfc5041_8_3_1_6() throws Exception {
        Stream a = new Stream();
        Stream b = new Stream();
        StagRegion ra = region();
        StagRegion rb = region();
        for (Stream s : new Stream[] {a, b}) {
            s.reference(ra);
            s.reference(rb);
        }
        CyclicBarrier bothInside = new CyclicBarrier(2);
        CompletableFuture<Boolean> onA = invalidateHolding(a, ra, bothInside);
        CompletableFuture<Boolean> onB = invalidateHolding(b, rb, bothInside);
        assertTrue(onA.get(HANG_SECONDS, TimeUnit.SECONDS), "invalidation on stream A hangs");
        assertTrue(onB.get(HANG_SECONDS, TimeUnit.SECONDS), "invalidation on stream B hangs");
        guard(ra);
        guard(rb);
        a.drainWithoutGuard();
        b.drainWithoutGuard();
    }

    /** Invalidates {@code r} as stream {@code s}'s wire engine does: holding {@code s}'s I/O lock. */
    private boolean invalidateOn(Stream s, StagRegion r) {
        s.io.lock();
        try {
            return stags.invalidate(r.stag(), pd);
        } finally {
            s.io.unlock();
        }
    }

    /** On its own thread: takes {@code s}'s lock, waits until the other thread holds its own, invalidates. */
    private CompletableFuture<Boolean> invalidateHolding(Stream s, StagRegion r, CyclicBarrier bothInside) {
        return CompletableFuture.supplyAsync(() -> {
            s.io.lock();
            try {
                bothInside.await(HANG_SECONDS, TimeUnit.SECONDS);
                return stags.invalidate(r.stag(), pd);
            } catch (Exception e) {
                throw new RuntimeException(e);
            } finally {
                s.io.unlock();
            }
        }, threads);
    }
}
