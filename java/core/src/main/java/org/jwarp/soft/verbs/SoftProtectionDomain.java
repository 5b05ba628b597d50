package org.jwarp.soft.verbs;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;

import org.jwarp.memory.StagDomain;
import org.jwarp.provider.Teardown;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RegionSizeException;

/**
 * A protection domain of the embedded provider (RFC 5041 §8.2): wraps the wire
 * engine's {@link StagDomain}; its regions are registered in the device's STag table and
 * only validate on streams of the same PD.
 *
 * <p>Closing it closes its shared receive queues, then deregisters its regions (every one, even
 * when one fails; the first failure is thrown with the others suppressed). Registrations run
 * under the read side of a lock whose write side {@link #close()} takes, so a registration is
 * either finished (and deregistered by the close) or refused with an {@link RdmaException}: once
 * {@code close()} returns, no STag of the domain is valid (RFC 5041 §8.3.1 (6)).
 */
public final class SoftProtectionDomain implements org.jwarp.verbs.ProtectionDomain {
    /** Each region gets its own base tagged offset, so a peer that forgets the address is caught. */
    private static final AtomicLong NEXT_BASE = new AtomicLong(1);

    private final DeviceResources device;
    private final StagDomain pd = new StagDomain();
    private final List<SoftMemoryRegion> regions = new CopyOnWriteArrayList<>();
    private final List<SoftSharedReceiveQueue> srqs = new CopyOnWriteArrayList<>();
    /** Read side: a registration or SRQ creation in progress; write side: {@link #close()}. */
    private final ReentrantReadWriteLock life = new ReentrantReadWriteLock();
    private volatile boolean closed;

    public SoftProtectionDomain(DeviceResources device) {
        this.device = device;
    }

    public StagDomain engineDomain() {
        return pd;
    }

    public DeviceResources device() {
        return device;
    }

    @Override
    public SoftMemoryRegion register(ByteBuffer buffer, Set<Access> access) throws RdmaException {
        if (buffer == null || !buffer.isDirect()) {
            throw new IllegalArgumentException("buffer: memory regions must be direct ByteBuffers (RFC 5041 §8.2 model)");
        }
        int bits = 0;
        for (Access a : access) {
            bits |= switch (a) {
                case LOCAL_WRITE -> org.jwarp.memory.StagAccess.LOCAL_WRITE;
                case REMOTE_WRITE -> org.jwarp.memory.StagAccess.REMOTE_WRITE;
                case REMOTE_READ -> org.jwarp.memory.StagAccess.REMOTE_READ;
            };
        }
        if (access.contains(Access.REMOTE_WRITE) && !access.contains(Access.LOCAL_WRITE)) {
            throw new IllegalArgumentException("access: REMOTE_WRITE requires LOCAL_WRITE (ibv_reg_mr rule)");
        }
        life.readLock().lock();
        try {
            checkOpen();
            long base = NEXT_BASE.getAndIncrement() << 32;
            // The provider's own view of the memory: the application keeps its buffer's position,
            // limit and mark, and whatever it does with them never bounds the provider's indexing.
            ByteBuffer own = buffer.duplicate().clear();
            org.jwarp.memory.StagRegion mr = device.stags().register(pd, own, 0, own.capacity(), base, bits);
            SoftMemoryRegion r = new SoftMemoryRegion(this, mr, own, access);
            regions.add(r);
            return r;
        } finally {
            life.readLock().unlock();
        }
    }

    private void checkOpen() throws RdmaException {
        if (closed) {
            throw new RdmaException("protection domain closed: no new regions or shared receive queues in it");
        }
    }

    /**
     * Allocates a direct buffer of {@code length} bytes and registers it. The embedded provider's
     * regions are single direct buffers, so its limit ({@link SoftLimits#MAX_MR_SIZE}, reported as
     * {@link org.jwarp.verbs.DeviceInfo#maxMrSize()}) is what one {@link ByteBuffer} holds; a longer
     * region is refused with a {@link RegionSizeException} before anything is allocated.
     */
    @Override
    public SoftMemoryRegion allocate(long length, Set<Access> access) throws RdmaException {
        if (length <= 0) {
            throw new IllegalArgumentException("length: a region needs at least one byte, got " + length);
        }
        if (length > SoftLimits.MAX_MR_SIZE) {
            throw new RegionSizeException(length, SoftLimits.MAX_MR_SIZE,
                    "the soft provider backs a region by one direct ByteBuffer");
        }
        return register(ByteBuffer.allocateDirect((int) length), access);
    }

    @Override
    public SoftSharedReceiveQueue createSharedReceiveQueue(int maxWr, int maxSge) throws RdmaException {
        life.readLock().lock();
        try {
            checkOpen();
            SoftSharedReceiveQueue q = new SoftSharedReceiveQueue(this, maxWr, maxSge);
            srqs.add(q);
            return q;
        } catch (IllegalArgumentException e) {
            throw new RdmaException("create SRQ: " + e.getMessage(), e);
        } finally {
            life.readLock().unlock();
        }
    }

    /** Shared receive queues of this domain not yet closed (tests, leak checks). */
    int liveSharedReceiveQueues() {
        return srqs.size();
    }

    void forget(SoftSharedReceiveQueue q) {
        srqs.remove(q);
    }

    void forget(SoftMemoryRegion r) {
        regions.remove(r);
    }

    /**
     * Closes the domain's shared receive queues, then deregisters its regions; waits for
     * registrations in progress first. Every one is released even when one fails; the first
     * failure is then thrown, the others suppressed. A second call does nothing.
     */
    @Override
    public void close() {
        life.writeLock().lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
        } finally {
            life.writeLock().unlock();
        }
        Teardown t = new Teardown();
        for (SoftSharedReceiveQueue q : srqs) {
            t.run(q::close);
        }
        for (SoftMemoryRegion r : regions) {
            t.run(r::close);
        }
        t.run(() -> device.forget(this));
        t.rethrow();
    }
}
