package org.jwarp.ffm.impl;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Collections;
import java.util.Set;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.MemoryRegion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A registered region ({@code struct ibv_mr}): the caller's direct buffer, or memory the
 * provider allocated (any length up to {@code max_mr_size}, also over 2 GiB), freed when the
 * region closes.
 */
final class FfmMr implements MemoryRegion {
    private static final Logger LOG = LoggerFactory.getLogger(FfmMr.class);

    final FfmPd pd;
    final MemorySegment mr;
    private final MemorySegment memory;
    private final ByteBuffer buffer;
    /** The arena of provider-allocated memory, closed with the region; null for a caller's buffer. */
    private final Arena owned;
    private final int lkey;
    private final int rkey;
    private final Set<Access> access;
    private volatile boolean open = true;

    FfmMr(FfmPd pd, MemorySegment mr, MemorySegment memory, ByteBuffer buffer, Arena owned, int lkey, int rkey,
            Set<Access> access) {
        this.pd = pd;
        this.mr = mr;
        this.memory = memory;
        this.buffer = buffer;
        this.owned = owned;
        this.lkey = lkey;
        this.rkey = rkey;
        this.access = Collections.unmodifiableSet(access);
    }

    @Override
    public ByteBuffer buffer() {
        if (buffer != null) {
            return buffer.duplicate().clear();
        }
        if (memory.byteSize() > Integer.MAX_VALUE) {
            throw new IllegalStateException("a region of " + memory.byteSize() + " bytes is longer than a ByteBuffer can be: "
                    + "use buffer(offset, length) windows");
        }
        return memory.asByteBuffer();
    }

    @Override
    public ByteBuffer buffer(long offset, int length) {
        if (offset < 0 || length < 0 || offset > memory.byteSize() - length) {
            throw new IndexOutOfBoundsException("window [" + offset + ", +" + length + ") outside the region of "
                    + memory.byteSize() + " bytes");
        }
        return memory.asSlice(offset, length).asByteBuffer();
    }

    @Override
    public long address() {
        return memory.address();
    }

    @Override
    public long length() {
        return memory.byteSize();
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

    @Override
    public void close() {
        synchronized (this) {
            if (!open) {
                return;
            }
            open = false;
        }
        int rc = pd.deregister(this);
        if (rc != 0) {
            // still registered: the memory stays mapped rather than freed under the device
            LOG.warn("ibv_dereg_mr of {} bytes at 0x{} failed with {}; its memory is kept", length(),
                    Long.toHexString(address()), Ibv.describe(rc));
        } else if (owned != null) {
            owned.close();
        }
    }

    @Override
    public String toString() {
        return "FfmMr{0x" + Long.toHexString(address()) + "+" + length() + ", lkey=0x" + Integer.toHexString(lkey) + "}";
    }
}
