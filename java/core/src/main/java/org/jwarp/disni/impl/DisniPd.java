package org.jwarp.disni.impl;

import com.ibm.disni.util.MemoryUtils;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.RdmaVerbs;
import com.ibm.disni.verbs.SVCDeregMr;
import com.ibm.disni.verbs.SVCRegMr;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.Set;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.ProtectionDomain;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.SharedReceiveQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A protection domain (RFC 5041 section 8.2) allocated through DiSNI ({@code ibv_alloc_pd}). */
final class DisniPd implements ProtectionDomain {
    private static final Logger LOG = LoggerFactory.getLogger(DisniPd.class);
    final IbvPd pd;
    private final RdmaVerbs verbs;
    private final DisniDevice device;
    private volatile boolean open = true;

    DisniPd(DisniDevice device, RdmaVerbs verbs, IbvPd pd) {
        this.device = device;
        this.verbs = verbs;
        this.pd = pd;
    }

    @Override
    public SharedReceiveQueue createSharedReceiveQueue(int maxWr, int maxSge) throws RdmaException {
        if (!open) {
            throw new RdmaException("protection domain is closed");
        }
        if (maxWr < 1 || maxSge < 1) {
            throw new RdmaException("create SRQ: max_wr " + maxWr + " and max_sge " + maxSge + " must be >= 1");
        }
        DisniSrq s = new DisniSrq(device, this, maxWr, maxSge);
        device.track(s);
        return s;
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, Set<Access> access) throws RdmaException {
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException("buffer: only direct buffers can be registered (RFC 5040 section 8 STag)");
        }
        if (buffer.capacity() == 0) {
            throw new IllegalArgumentException("buffer: an empty buffer cannot be registered");
        }
        if (!open) {
            throw new RdmaException("protection domain is closed");
        }
        int flags = 0;
        for (Access a : access) {
            flags |= a.ibvFlag;
        }
        if ((flags & Access.REMOTE_WRITE.ibvFlag) != 0) {
            flags |= Access.LOCAL_WRITE.ibvFlag; // ibv_reg_mr requires LOCAL_WRITE with REMOTE_WRITE
        }
        SVCRegMr call = null;
        try {
            call = verbs.regMr(pd, buffer, flags);
            IbvMr mr = call.execute().getMr();
            return new DisniMr(this, verbs, mr, buffer, access.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(access));
        } catch (IOException e) {
            throw new RdmaException("ibv_reg_mr of " + buffer.capacity() + " bytes at 0x"
                    + Long.toHexString(MemoryUtils.getAddress(buffer)) + " failed: " + e.getMessage()
                    + " (is the memlock limit high enough? ulimit -l)", e);
        } finally {
            if (call != null) {
                call.free();
            }
        }
    }

    @Override
    public void close() {
        if (!open) {
            return;
        }
        open = false;
        try {
            int rc = verbs.deallocPd(pd);
            if (rc != 0) {
                LOG.warn("ibv_dealloc_pd returned {} (regions or QPs still use it)", rc);
            }
        } catch (IOException e) {
            LOG.warn("ibv_dealloc_pd: {}", e.toString());
        }
    }

    /** A registered region (RFC 5040 section 2.1 STag) backed by {@code ibv_mr}. */
    static final class DisniMr implements MemoryRegion {
        private final RdmaVerbs verbs;
        final DisniPd pd;
        final IbvMr mr;
        private final ByteBuffer buffer;
        private final Set<Access> access;
        private volatile boolean open = true;

        DisniMr(DisniPd pd, RdmaVerbs verbs, IbvMr mr, ByteBuffer buffer, Set<Access> access) {
            this.pd = pd;
            this.verbs = verbs;
            this.mr = mr;
            this.buffer = buffer;
            this.access = access;
        }

        @Override
        public ByteBuffer buffer() {
            return buffer.duplicate().clear();
        }

        @Override
        public long address() {
            return mr.getAddr();
        }

        @Override
        public int length() {
            return mr.getLength();
        }

        @Override
        public int lkey() {
            return mr.getLkey();
        }

        @Override
        public int rkey() {
            return mr.getRkey();
        }

        @Override
        public Set<Access> access() {
            return access;
        }

        boolean isOpen() {
            return open;
        }

        @Override
        public void close() {
            if (!open) {
                return;
            }
            open = false;
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
    }
}
