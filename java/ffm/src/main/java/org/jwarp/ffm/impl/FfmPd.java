package org.jwarp.ffm.impl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.ProtectionDomain;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RegionSizeException;
import org.jwarp.verbs.SharedReceiveQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A protection domain (RFC 5041 section 8.2) from {@code ibv_alloc_pd}. Regions are registered
 * with the exported {@code ibv_reg_mr}; {@link #close()} destroys the shared receive queues still
 * open, deregisters the regions still open, then frees the domain.
 */
public final class FfmPd implements ProtectionDomain {
    private static final Logger LOG = LoggerFactory.getLogger(FfmPd.class);
    /** Pages of an allocated region are aligned to this (the largest base page Linux uses on x86-64 and arm64). */
    private static final long ALLOCATION_ALIGNMENT = 64 * 1024;

    final FfmContext device;
    final MemorySegment pd;
    private final List<FfmMr> regions = new ArrayList<>();
    private final List<FfmSrq> srqs = new ArrayList<>();
    /** The open QPs made in this domain: a domain's close destroys them (but abandoned ones) before its SRQs and regions. */
    private final List<FfmQp> qps = new ArrayList<>();
    private boolean open = true;

    private FfmPd(FfmContext device, MemorySegment pd) {
        this.device = device;
        this.pd = pd;
    }

    static FfmPd allocate(FfmContext device) throws RdmaException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Ibv.CALL_STATE);
            MemorySegment pd = (MemorySegment) Ibv.ALLOC_PD.invokeExact(state, device.ctx);
            if (pd.equals(MemorySegment.NULL)) {
                throw new RdmaException("ibv_alloc_pd on " + device.name + " failed with " + Ibv.describe(Ibv.errno(state)));
            }
            pd = pd.reinterpret(IbvLayouts.PD.byteSize());
            MemorySegment ctx = pd.get(ADDRESS, IbvLayouts.PD_CONTEXT);
            if (!ctx.equals(device.ctx)) {
                int rc = (int) Ibv.DEALLOC_PD.invokeExact(pd);
                FfmContext.layoutCheck("ibv_pd", List.of("ibv_pd.context is " + FfmContext.hex(ctx) + ", not the context "
                        + FfmContext.hex(device.ctx) + (rc == 0 ? "" : " (and ibv_dealloc_pd: " + Ibv.describe(rc) + ")")));
            }
            return new FfmPd(device, pd);
        } catch (RdmaException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Ibv.downcallFailed("ibv_alloc_pd", t);
        }
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, Set<Access> access) throws RdmaException {
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException("buffer: only direct buffers can be registered (RFC 5040 section 8 STag)");
        }
        if (buffer.capacity() == 0) {
            throw new IllegalArgumentException("buffer: an empty buffer cannot be registered");
        }
        MemorySegment memory = MemorySegment.ofBuffer(buffer.duplicate().clear());
        return register(memory, buffer, null, access);
    }

    @Override
    public MemoryRegion allocate(long length, Set<Access> access) throws RdmaException {
        if (length <= 0) {
            throw new IllegalArgumentException("length: must be positive, got " + length);
        }
        if (length > device.maxMrSize) {
            throw new RegionSizeException(length, device.maxMrSize, "device " + device.name);
        }
        Arena arena = Arena.ofShared();
        MemorySegment memory;
        try {
            memory = arena.allocate(length, ALLOCATION_ALIGNMENT);
        } catch (OutOfMemoryError e) {
            arena.close();
            throw new RdmaException("allocating a region of " + length + " bytes failed: " + e.getMessage(), e);
        }
        try {
            return register(memory, null, arena, access);
        } catch (RdmaException | RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    private synchronized FfmMr register(MemorySegment memory, ByteBuffer buffer, Arena owned, Set<Access> access)
            throws RdmaException {
        if (!open) {
            throw new RdmaException("protection domain is closed: no new regions in it");
        }
        int flags = 0;
        for (Access a : access) {
            flags |= a.ibvFlag;
        }
        if ((flags & Access.REMOTE_WRITE.ibvFlag) != 0) {
            flags |= Access.LOCAL_WRITE.ibvFlag; // ibv_reg_mr requires LOCAL_WRITE with REMOTE_WRITE
        }
        long length = memory.byteSize();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Ibv.CALL_STATE);
            MemorySegment mr = (MemorySegment) Ibv.REG_MR.invokeExact(state, pd, memory, length, flags);
            if (mr.equals(MemorySegment.NULL)) {
                int errno = Ibv.errno(state);
                throw new RdmaException("ibv_reg_mr of " + length + " bytes at " + FfmContext.hex(memory) + " on "
                        + device.name + " failed with " + Ibv.describe(errno)
                        + (errno == 12 || errno == 1 ? " (is the memlock limit high enough? ulimit -l)" : ""));
            }
            mr = mr.reinterpret(IbvLayouts.MR.byteSize());
            List<String> wrong = new ArrayList<>();
            if (!mr.get(ADDRESS, IbvLayouts.MR_PD).equals(pd)) {
                wrong.add("ibv_mr.pd is " + FfmContext.hex(mr.get(ADDRESS, IbvLayouts.MR_PD)) + ", not " + FfmContext.hex(pd));
            }
            if (mr.get(JAVA_LONG, IbvLayouts.MR_ADDR) != memory.address() || mr.get(JAVA_LONG, IbvLayouts.MR_LENGTH) != length) {
                wrong.add("ibv_mr.addr/length are 0x" + Long.toHexString(mr.get(JAVA_LONG, IbvLayouts.MR_ADDR)) + "/"
                        + mr.get(JAVA_LONG, IbvLayouts.MR_LENGTH) + ", not " + FfmContext.hex(memory) + "/" + length);
            }
            if (!wrong.isEmpty()) {
                int rc = (int) Ibv.DEREG_MR.invokeExact(mr);
                if (rc != 0) {
                    wrong.add("ibv_dereg_mr: " + Ibv.describe(rc));
                }
                FfmContext.layoutCheck("ibv_mr", wrong);
            }
            FfmMr r = new FfmMr(this, mr, memory, buffer, owned, mr.get(JAVA_INT, IbvLayouts.MR_LKEY),
                    mr.get(JAVA_INT, IbvLayouts.MR_RKEY), access.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(access));
            regions.add(r);
            return r;
        } catch (RdmaException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Ibv.downcallFailed("ibv_reg_mr", t);
        }
    }

    /** Deregisters {@code mr}: 0 or the errno {@code ibv_dereg_mr} returned. */
    synchronized int deregister(FfmMr mr) {
        regions.remove(mr);
        try {
            return (int) Ibv.DEREG_MR.invokeExact(mr.mr);
        } catch (Throwable t) {
            throw Ibv.downcallFailed("ibv_dereg_mr", t);
        }
    }

    @Override
    public synchronized SharedReceiveQueue createSharedReceiveQueue(int maxWr, int maxSge) throws RdmaException {
        if (maxWr < 1 || maxSge < 1) {
            throw new RdmaException("create SRQ: max_wr " + maxWr + " and max_sge " + maxSge + " must be >= 1");
        }
        if (!open) {
            throw new RdmaException("protection domain is closed: no new shared receive queues in it");
        }
        FfmSrq s = FfmSrq.create(this, maxWr, maxSge);
        srqs.add(s);
        return s;
    }

    synchronized void forget(FfmSrq s) {
        srqs.remove(s);
    }

    synchronized void attach(FfmQp q) {
        qps.add(q);
    }

    synchronized void forget(FfmQp q) {
        qps.remove(q);
    }

    /** This domain's open SRQ whose {@code struct ibv_srq} is at {@code address}, or null. */
    synchronized FfmSrq srqAt(long address) {
        for (FfmSrq s : srqs) {
            if (s.srq.address() == address) {
                return s;
            }
        }
        return null;
    }

    @Override
    public void close() {
        List<FfmMr> left;
        List<FfmSrq> queues;
        List<FfmQp> pairs;
        synchronized (this) {
            if (!open) {
                return;
            }
            open = false;
            left = new ArrayList<>(regions);
            queues = new ArrayList<>(srqs);
            pairs = new ArrayList<>(qps);
        }
        for (FfmQp q : pairs) {
            // ibv_destroy_srq refuses (EBUSY) while a QP receives from the SRQ, ibv_dealloc_pd while a QP uses the PD;
            // an abandoned connection's QP is left to its rdma_connect helper, which destroys it when the call returns
            if (!q.isAbandoned()) {
                q.close();
            }
        }
        for (FfmSrq s : queues) {
            s.close();
        }
        for (FfmMr r : left) {
            r.close();
        }
        device.forget(this);
        try {
            int rc = (int) Ibv.DEALLOC_PD.invokeExact(pd);
            if (rc != 0) {
                LOG.warn("ibv_dealloc_pd on {} failed with {} (a queue pair still uses it?)", device.name, Ibv.describe(rc));
            }
        } catch (Throwable t) {
            throw Ibv.downcallFailed("ibv_dealloc_pd", t);
        }
    }
}
