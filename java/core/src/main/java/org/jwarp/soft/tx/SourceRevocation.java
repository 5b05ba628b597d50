package org.jwarp.soft.tx;

import java.util.concurrent.ConcurrentLinkedQueue;

import org.jwarp.memory.SourceFence;
import org.jwarp.memory.StagDomain;
import org.jwarp.memory.StagRegion;
import org.jwarp.memory.StagTable;
import org.jwarp.soft.loop.IoLock;

/**
 * RFC 5041 §8.3.1 (6) for the source side of one stream's zero-copy transmit: when a region is
 * deregistered, payload slices of it that still wait for the socket in the stream's
 * {@link TxGather} are snapshotted ({@link TxGather#revoked}, copy-on-revoke), so once
 * deregistration returns no byte is read from the region, and a peer that stops reading cannot
 * hold deregistration up. Later segments are the engine's: it checks the source before each one
 * (a Read Response then ends the stream with an invalid-STag TERM, a Send or Write with a local
 * catastrophic error).
 *
 * <p>Why this bound holds: the socket reads registered memory only inside {@link TxGather#write},
 * and the engine reads it only while staging an FPDU (copy or CRC), both under the stream's I/O
 * lock, which is held for engine work and non-blocking socket calls only, never across a blocking
 * one. So taking that lock waits for at most one bounded CRC-and-write, after which the slices
 * are copied. The listener is registered with the device's {@link StagTable} for as long as the
 * stream's transmit path exists and leaves it when the path is released.
 *
 * <p>A remote Send with Invalidate (RFC 5040 §5.3) fences the same way before its receive
 * completion is reported ({@link #invalidated}), but runs on a thread that holds the invalidating
 * stream's I/O lock, and may not wait for another stream's: two streams invalidating each other's
 * shared regions would deadlock. So a stream whose lock is held by another thread gets the fence
 * {@linkplain IoLock#runLocked handed to its lock} through its own queue: the holder runs it as it
 * lets go, or, if the holder is itself an invalidating thread waiting for fences, from its wait
 * ({@link #helpFences}, which runs nothing but fences, not other work handed to the lock).
 */
public final class SourceRevocation implements StagTable.RevocationListener {
    /** The stream's I/O lock. */
    private final IoLock io;
    private final StagDomain pd;
    private final TxGather gather;
    /** Fences of remote invalidations handed to this stream's lock, not yet run. */
    private final ConcurrentLinkedQueue<SourceFence> handed = new ConcurrentLinkedQueue<>();
    private final Runnable runHanded = this::helpFences;

    public SourceRevocation(IoLock io, StagDomain pd, TxGather gather) {
        this.io = io;
        this.pd = pd;
        this.gather = gather;
    }

    /** Registers the stream's listener; {@link TxGather#release} removes it. */
    public static void attach(IoLock io, StagTable stags, StagDomain pd, TxGather gather) {
        SourceRevocation l = new SourceRevocation(io, pd, gather);
        stags.addRevocationListener(l);
        gather.onRelease(() -> stags.removeRevocationListener(l));
    }

    @Override
    public void revoked(StagRegion r) {
        if (r.pd() != pd) {
            return; // this stream reads regions of its own protection domain only
        }
        io.lock();
        try {
            fence(r);
        } finally {
            io.unlock();
        }
    }

    /** Copy-on-revoke of {@code r}'s pending slices; the I/O lock is held. */
    private void fence(StagRegion r) {
        gather.revoked(r.buffer(), r.offset(), (int) Math.min(Integer.MAX_VALUE, r.offset() + r.length()));
    }

    @Override
    public void invalidated(SourceFence f) {
        StagRegion r = f.region();
        if (r.pd() != pd) {
            return;
        }
        if (io.isHeldByCurrentThread()) {
            fence(r); // the invalidating stream itself (or one whose lock this thread also holds)
            return;
        }
        if (io.tryLock()) {
            try {
                fence(r); // an idle stream: no hand-over, nothing allocated
            } finally {
                io.unlock();
            }
            return;
        }
        f.defer();
        handed.add(f);
        io.runLocked(runHanded); // now if the lock is free, else by its holder
    }

    @Override
    public void helpFences() {
        if (!io.isHeldByCurrentThread()) {
            return;
        }
        SourceFence f;
        while ((f = handed.poll()) != null) {
            try {
                fence(f.region());
            } finally {
                f.arrive();
            }
        }
    }
}
