package org.jwarp.disni.impl;

import com.ibm.disni.util.MemoryUtils;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.RdmaVerbs;
import com.ibm.disni.verbs.SVCDeregMr;
import com.ibm.disni.verbs.SVCRegMr;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.jwarp.disni.natives.JwarpNative;
import org.jwarp.provider.Teardown;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.ProtectionDomain;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RegionSizeException;
import org.jwarp.verbs.SharedReceiveQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A protection domain (RFC 5041 section 8.2) allocated through DiSNI ({@code ibv_alloc_pd}).
 * {@link #close()} destroys its shared receive queues and deregisters its regions before
 * {@code ibv_dealloc_pd} (which would fail with EBUSY while they exist); registrations run under the
 * read side of a lock whose write side the close takes, so once it returns no STag of the domain
 * is valid and a later registration is refused with an {@link RdmaException}.
 */
final class DisniPd implements ProtectionDomain {
    private static final Logger LOG = LoggerFactory.getLogger(DisniPd.class);
    final IbvPd pd;
    private final RdmaVerbs verbs;
    private volatile boolean open = true;

    private final long maxMrSize;
    /** Regions of this domain still open: {@link #close()} releases them (an allocated region's memory too). */
    private final Set<DisniMr> regions = ConcurrentHashMap.newKeySet();
    /** Shared receive queues of this domain still open: {@link #close()} destroys them first. */
    private final Set<DisniSrq> srqs = ConcurrentHashMap.newKeySet();
    /** Read side: a registration or SRQ creation in progress; write side: {@link #close()}. */
    private final ReentrantReadWriteLock life = new ReentrantReadWriteLock();

    private final DisniDevice device;

    DisniPd(DisniDevice device, RdmaVerbs verbs, IbvPd pd, long maxMrSize) {
        this.device = device;
        this.verbs = verbs;
        this.pd = pd;
        this.maxMrSize = maxMrSize;
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, Set<Access> access) throws RdmaException {
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException("buffer: only direct buffers can be registered (RFC 5040 section 8 STag)");
        }
        if (buffer.capacity() == 0) {
            throw new IllegalArgumentException("buffer: an empty buffer cannot be registered");
        }
        int flags = 0;
        for (Access a : access) {
            flags |= a.ibvFlag;
        }
        if ((flags & Access.REMOTE_WRITE.ibvFlag) != 0) {
            flags |= Access.LOCAL_WRITE.ibvFlag; // ibv_reg_mr requires LOCAL_WRITE with REMOTE_WRITE
        }
        SVCRegMr call = null;
        life.readLock().lock();
        try {
            checkOpen();
            call = verbs.regMr(pd, buffer, flags);
            IbvMr mr = call.execute().getMr();
            return track(new DisniMr(this, mr.getAddr(), mr.getLength(), mr.getLkey(), mr.getRkey(), access, buffer,
                    () -> deregister(mr)));
        } catch (IOException e) {
            throw new RdmaException("ibv_reg_mr of " + buffer.capacity() + " bytes at 0x"
                    + Long.toHexString(MemoryUtils.getAddress(buffer)) + " failed: " + e.getMessage()
                    + " (is the memlock limit high enough? ulimit -l)", e);
        } finally {
            life.readLock().unlock();
            if (call != null) {
                call.free();
            }
        }
    }

    private void checkOpen() throws RdmaException {
        if (!open) {
            throw new RdmaException("protection domain is closed: no new regions or shared receive queues in it");
        }
    }

    private void deregister(IbvMr mr) {
        SVCDeregMr call = null;
        try {
            call = verbs.deregMr(mr);
            call.execute();
        } catch (IOException e) {
            LOG.warn("ibv_dereg_mr: {}", e.toString());
        } finally {
            if (call != null) {
                call.free();
            }
        }
    }

    @Override
    public SharedReceiveQueue createSharedReceiveQueue(int maxWr, int maxSge) throws RdmaException {
        if (maxWr < 1 || maxSge < 1) {
            throw new RdmaException("create SRQ: max_wr " + maxWr + " and max_sge " + maxSge + " must be >= 1");
        }
        life.readLock().lock();
        try {
            checkOpen();
            DisniSrq s = DisniSrq.create(device, this, maxWr, maxSge);
            srqs.add(s);
            device.track(s);
            return s;
        } finally {
            life.readLock().unlock();
        }
    }

    void forget(DisniSrq s) {
        srqs.remove(s);
    }

    /**
     * Destroys the shared receive queues still open, deregisters every region still open (and
     * frees allocated memory), then deallocates the domain; waits for registrations in progress
     * first. Every child is released even when one fails; the first failure is then thrown, the
     * others suppressed. A second call does nothing.
     */
    @Override
    public void close() {
        life.writeLock().lock();
        try {
            if (!open) {
                return;
            }
            open = false;
        } finally {
            life.writeLock().unlock();
        }
        Teardown t = new Teardown();
        for (DisniSrq s : srqs) {
            t.run(s::close);
        }
        for (DisniMr r : regions) {
            t.run(r::close);
        }
        t.run(() -> {
            try {
                int rc = verbs.deallocPd(pd);
                if (rc != 0) {
                    LOG.warn("ibv_dealloc_pd returned {} (QPs still use it): the native PD leaked", rc);
                }
            } catch (IOException e) {
                LOG.warn("ibv_dealloc_pd: {}", e.toString());
            }
        });
        t.rethrow();
    }

    /**
     * A region of any length (RFC 5041 section 4.1: 64-bit tagged offsets): memory mapped by the
     * native library and registered by address and 64-bit length, since DiSNI's regMr takes an int.
     * Any failure after the mapping unmaps it again; nothing leaks. Closing the region deregisters
     * it at once (its STag is dead) and gives its pages back at once (unmapped, or discarded while a
     * window is reachable); the mapping stays until no window of it ({@link MemoryRegion#buffer()},
     * {@link MemoryRegion#buffer(long, int)}, their slices and duplicates) is reachable: a window kept
     * past close reads zeros (or what it wrote since), never the region's old bytes nor another
     * region's ({@link WindowedMemory}).
     */
    @Override
    public MemoryRegion allocate(long length, Set<Access> access) throws RdmaException {
        if (length <= 0) {
            throw new IllegalArgumentException("length: a region needs at least one byte, got " + length);
        }
        if (length > maxMrSize) {
            throw new RegionSizeException(length, maxMrSize, "the device's ibv_device_attr.max_mr_size");
        }
        life.readLock().lock();
        try {
            checkOpen();
            return allocateOpen(length, access);
        } finally {
            life.readLock().unlock();
        }
    }

    private MemoryRegion allocateOpen(long length, Set<Access> access) throws RdmaException {
        int flags = 0;
        for (Access a : access) {
            flags |= a.ibvFlag;
        }
        if ((flags & Access.REMOTE_WRITE.ibvFlag) != 0) {
            flags |= Access.LOCAL_WRITE.ibvFlag;
        }
        long addr;
        try {
            addr = JwarpNative.mapRegion(length);
        } catch (IOException e) {
            throw new RdmaException("allocating a region of " + length + " bytes: " + e.getMessage(), e);
        }
        ByteBuffer keys = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
        long mrPtr;
        try {
            mrPtr = JwarpNative.regMr(CmDispatcher.ptr(pd), addr, length, flags, keys);
        } catch (IOException | RuntimeException e) {
            int rc = JwarpNative.unmapRegion(addr, length);
            if (rc != 0) {
                LOG.warn("munmap of a region whose registration failed: errno {}", rc);
            }
            throw new RdmaException("ibv_reg_mr of " + length + " bytes at 0x" + Long.toHexString(addr) + " failed: "
                    + e.getMessage() + " (is the memlock limit high enough? ulimit -l)", e);
        }
        WindowedMemory memory = new WindowedMemory(addr, length, JwarpNative::window, JwarpNative::unmapRegion,
                JwarpNative::discardRegion);
        return track(new DisniMr(this, addr, length, keys.getInt(0), keys.getInt(4), access, memory, () -> {
            int rc = JwarpNative.deregMr(mrPtr);
            if (rc != 0) {
                LOG.warn("ibv_dereg_mr of a region of {} bytes returned {}; its memory stays mapped (leaked)", length, rc);
                return;
            }
            memory.close(); // unmapped now, or once its last window is unreachable
        }));
    }

    /** Called under the read side of {@link #life} with the domain open: close() will see it. */
    private DisniMr track(DisniMr r) {
        regions.add(r);
        return r;
    }

    /**
     * A registered region (RFC 5040 section 2.1 STag) backed by {@code ibv_mr}: a caller's direct
     * buffer registered through DiSNI, or memory of {@link #allocate} registered by the native library.
     */
    static final class DisniMr implements MemoryRegion {
        private final long address;
        private final long length;
        private final int lkey;
        private final int rkey;
        /** The caller's buffer, or null for memory this region owns (reached through windows). */
        private final ByteBuffer buffer;
        /** The memory this region owns, or null for a caller's buffer. */
        private final WindowedMemory memory;
        private final Set<Access> access;
        private final Runnable release;
        private volatile boolean open = true;

        /** The protection domain the region was registered in. */
        final DisniPd pd;

        DisniMr(DisniPd pd, long address, long length, int lkey, int rkey, Set<Access> access, ByteBuffer buffer,
                Runnable release) {
            this(pd, address, length, lkey, rkey, access, buffer, null, release);
        }

        DisniMr(DisniPd pd, long address, long length, int lkey, int rkey, Set<Access> access, WindowedMemory memory,
                Runnable release) {
            this(pd, address, length, lkey, rkey, access, null, memory, release);
        }

        private DisniMr(DisniPd pd, long address, long length, int lkey, int rkey, Set<Access> access, ByteBuffer buffer,
                WindowedMemory memory, Runnable release) {
            this.memory = memory;
            this.pd = pd;
            this.address = address;
            this.length = length;
            this.lkey = lkey;
            this.rkey = rkey;
            this.buffer = buffer;
            this.access = access.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(access);
            this.release = release;
        }

        @Override
        public ByteBuffer buffer() {
            if (buffer != null) {
                return buffer.duplicate().clear();
            }
            if (length > Integer.MAX_VALUE) {
                throw new IllegalStateException("region of " + length + " bytes is longer than a ByteBuffer; "
                        + "use buffer(offset, length) windows");
            }
            return window(0, (int) length);
        }

        @Override
        public ByteBuffer buffer(long offset, int len) {
            if (offset < 0 || len < 0 || offset > length - len) {
                throw new IndexOutOfBoundsException("window [" + offset + ", +" + len + ") outside the region of "
                        + length + " bytes");
            }
            if (buffer != null) {
                return buffer.duplicate().clear().slice((int) offset, len);
            }
            return window(offset, len);
        }

        private ByteBuffer window(long offset, int len) {
            if (!open) {
                throw new IllegalStateException("region closed: no windows on its memory");
            }
            return memory.window(offset, len); // refused there too if close() won the race

        }

        @Override
        public long address() {
            return address;
        }

        @Override
        public long length() {
            return length;
        }

        @Override
        public int lkey() {
            return lkey;
        }

        @Override
        public int rkey() {
            return rkey;
        }

        @Override
        public Set<Access> access() {
            return access;
        }

        boolean isOpen() {
            return open;
        }

        @Override
        public synchronized void close() {
            if (!open) {
                return;
            }
            open = false;
            pd.regions.remove(this);
            release.run();
        }
    }
}
