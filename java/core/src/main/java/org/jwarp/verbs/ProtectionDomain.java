package org.jwarp.verbs;

import java.nio.ByteBuffer;
import java.util.Set;

/**
 * A protection domain (RFC 5041 §8.2, RFC 5040 §8): memory regions and queue pairs of the same PD
 * may be used together; an STag is only valid on streams of its PD.
 *
 * <p>Thread-safety: {@link #register} may run from several threads at once, on both providers.
 * {@link #close()} releases what the domain still holds, on both providers: it closes the domain's
 * shared receive queues, then deregisters its regions (where {@code ibv_dealloc_pd} would fail with
 * EBUSY while they exist, this API releases them, as {@link Device#close()} releases its children).
 * Every one is released even when one fails; the first failure is then thrown, the others
 * suppressed. A registration racing the close either finishes first and is deregistered by it, or
 * is refused with an {@link RdmaException}: once {@code close()} returns, no STag of the domain is
 * valid (RFC 5041 §8.3.1 (6)), and {@link #register}, {@link #allocate} and
 * {@link #createSharedReceiveQueue} throw {@link RdmaException}. Call it after no queue pair of the
 * domain is in use (close those first).
 */
public interface ProtectionDomain extends AutoCloseable {
    /**
     * Registers {@code buffer}'s whole [0, capacity) range. The buffer must be direct; the
     * registration does not copy it: from now on the region's rules on who may touch the memory
     * apply ({@link MemoryRegion}). The buffer's position, limit and mark are left alone.
     *
     * @param buffer a direct buffer
     * @param access the rights; {@link Access#REMOTE_WRITE} needs {@link Access#LOCAL_WRITE} too
     * @return the registered region
     * @throws IllegalArgumentException for a heap buffer or an empty access set with remote rights
     * @throws RdmaException            when the domain is closed or the device refuses the
     *                                  registration (memlock limit, {@link DeviceInfo#maxMrSize()})
     */
    MemoryRegion register(ByteBuffer buffer, Set<Access> access) throws RdmaException;

    /**
     * Allocates {@code length} bytes of zeroed memory that the region owns, and registers them: the
     * way to regions over 2 GiB, which no single {@link ByteBuffer} can hold. The memory is
     * addressed by tagged offsets {@code [address(), address() + length)} (64-bit, RFC 5041 §4.1,
     * §7.1) and reached from Java through {@link MemoryRegion#buffer(long, int)} windows; closing
     * the region deregisters it and frees the memory.
     *
     * @param length bytes to allocate
     * @param access the rights of the region
     * @return the registered region owning the memory
     * @throws RegionSizeException      when {@code length} exceeds what the provider can register
     *                                  ({@link DeviceInfo#maxMrSize()}); nothing is allocated
     * @throws IllegalArgumentException when {@code length} is not positive
     * @throws RdmaException            when the memory cannot be allocated or registered (memlock limit)
     */
    MemoryRegion allocate(long length, Set<Access> access) throws RdmaException;

    /**
     * A shared receive queue ({@code ibv_create_srq}) of up to {@code maxWr} buffers of up to
     * {@code maxSge} SGEs each; the provider may grant more ({@link SharedReceiveQueue#capacity()}).
     *
     * @param maxWr  buffers the queue holds at most
     * @param maxSge SGEs per receive request
     * @return the shared receive queue
     * @throws RdmaException when the device offers fewer (max_srq_wr, max_srq_sge) or cannot create it
     */
    SharedReceiveQueue createSharedReceiveQueue(int maxWr, int maxSge) throws RdmaException;

    /**
     * Deallocates the domain ({@code ibv_dealloc_pd}), closing its shared receive queues and
     * deregistering its regions first (see the class comment). Close the domain's connections before.
     */
    @Override
    void close();
}
