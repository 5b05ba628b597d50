package org.jwarp.soft;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

import org.jwarp.memory.StagDomain;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RegionSizeException;

/**
 * A protection domain of the embedded provider (RFC 5041 §8.2): wraps the wire
 * engine's {@link StagDomain}; its regions are registered in the device's STag table and
 * only validate on streams of the same PD.
 */
public final class SoftProtectionDomain implements org.jwarp.verbs.ProtectionDomain {
    /** Each region gets its own base tagged offset, so a peer that forgets the address is caught. */
    private static final AtomicLong NEXT_BASE = new AtomicLong(1);

    private final SoftDevice device;
    private final StagDomain pd = new StagDomain();
    private final List<SoftMemoryRegion> regions = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    SoftProtectionDomain(SoftDevice device) {
        this.device = device;
    }

    StagDomain engineDomain() {
        return pd;
    }

    SoftDevice device() {
        return device;
    }

    @Override
    public SoftMemoryRegion register(ByteBuffer buffer, Set<Access> access) throws RdmaException {
        if (closed) {
            throw new RdmaException("protection domain closed");
        }
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
        long base = NEXT_BASE.getAndIncrement() << 32;
        org.jwarp.memory.StagRegion mr = device.stags().register(pd, buffer, 0, buffer.capacity(), base, bits);
        SoftMemoryRegion r = new SoftMemoryRegion(this, mr, buffer, access);
        regions.add(r);
        return r;
    }

    /**
     * Allocates a direct buffer of {@code length} bytes and registers it. The embedded provider's
     * regions are single direct buffers, so its limit ({@link SoftProvider#MAX_MR_SIZE}, reported as
     * {@link org.jwarp.verbs.DeviceInfo#maxMrSize()}) is what one {@link ByteBuffer} holds; a longer
     * region is refused with a {@link RegionSizeException} before anything is allocated.
     */
    @Override
    public SoftMemoryRegion allocate(long length, Set<Access> access) throws RdmaException {
        if (length <= 0) {
            throw new IllegalArgumentException("length: a region needs at least one byte, got " + length);
        }
        if (length > SoftProvider.MAX_MR_SIZE) {
            throw new RegionSizeException(length, SoftProvider.MAX_MR_SIZE,
                    "the soft provider backs a region by one direct ByteBuffer");
        }
        return register(ByteBuffer.allocateDirect((int) length), access);
    }

    @Override
    public SoftSharedReceiveQueue createSharedReceiveQueue(int maxWr, int maxSge) throws RdmaException {
        if (closed) {
            throw new RdmaException("protection domain closed");
        }
        try {
            return new SoftSharedReceiveQueue(this, maxWr, maxSge);
        } catch (IllegalArgumentException e) {
            throw new RdmaException("create SRQ: " + e.getMessage(), e);
        }
    }

    void forget(SoftMemoryRegion r) {
        regions.remove(r);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (SoftMemoryRegion r : regions) {
            r.close();
        }
        device.forget(this);
    }
}
