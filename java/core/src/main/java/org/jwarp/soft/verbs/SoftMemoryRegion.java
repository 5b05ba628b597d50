package org.jwarp.soft.verbs;

import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.Set;

import org.jwarp.provider.WorkRequestChecks;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.QueuePair;

/**
 * A registered region of the embedded provider (RFC 5040 §2.1 STag, RFC 5041 §8.3): the engine's
 * {@link org.jwarp.memory.StagRegion} over the caller's direct buffer, addressed by tagged
 * offsets {@code [address(), address() + length())}. lkey and rkey are the same STag.
 */
public final class SoftMemoryRegion implements MemoryRegion {
    private final SoftProtectionDomain pd;
    private final org.jwarp.memory.StagRegion mr;
    private final ByteBuffer buffer;
    private final Set<Access> access;
    private final boolean localWrite;

    SoftMemoryRegion(SoftProtectionDomain pd, org.jwarp.memory.StagRegion mr, ByteBuffer buffer, Set<Access> access) {
        this.pd = pd;
        this.mr = mr;
        this.buffer = buffer;
        this.access = access.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(access);
        this.localWrite = access.contains(Access.LOCAL_WRITE);
    }

    /** LOCAL_WRITE granted (checked on the posting path without copying the access set). */
    boolean localWrite() {
        return localWrite;
    }

    org.jwarp.memory.StagRegion engineRegion() {
        return mr;
    }

    SoftProtectionDomain pd() {
        return pd;
    }

    /**
     * The provider's view of the registered memory (no duplicate), for the data path: shared by
     * every stream of the PD, so it is read and written by absolute index only; its position and
     * limit never move (it is not the application's buffer).
     */
    ByteBuffer raw() {
        return buffer;
    }

    boolean isValid() {
        return mr.isValid();
    }

    /**
     * What {@code region} is to a work queue of {@code pd} ({@link WorkRequestChecks.Regions}): the
     * embedded provider owns its STags, so another domain's or a deregistered region is refused at
     * post time (RFC 5041 §8.2).
     */
    static int verdict(SoftProtectionDomain pd, MemoryRegion region) {
        if (!(region instanceof SoftMemoryRegion m)) {
            return WorkRequestChecks.OTHER_PROVIDER;
        }
        if (m.pd != pd) {
            return WorkRequestChecks.OTHER_DOMAIN;
        }
        if (!m.isValid()) {
            return WorkRequestChecks.DEREGISTERED;
        }
        return m.localWrite ? WorkRequestChecks.WRITABLE : WorkRequestChecks.READ_ONLY;
    }

    /** RFC 5041 §8.2 DDP Stream association: remote access only over {@code qp}'s connection. */
    @Override
    public void bindTo(QueuePair qp) {
        if (qp == null) {
            mr.bindStream(null);
            return;
        }
        if (!(qp instanceof SoftQueuePair q) || q.pd() != pd) {
            throw new IllegalArgumentException("bindTo: " + qp + " is not a soft QP of this region's protection "
                    + "domain (RFC 5041 §8.2)");
        }
        mr.bindStream(q);
    }

    @Override
    public ByteBuffer buffer() {
        return buffer.duplicate().clear();
    }

    @Override
    public long address() {
        return mr.baseTo();
    }

    @Override
    public long length() {
        return mr.length();
    }

    @Override
    public int lkey() {
        return mr.stag();
    }

    @Override
    public int rkey() {
        return mr.stag();
    }

    @Override
    public Set<Access> access() {
        return EnumSet.copyOf(access.isEmpty() ? EnumSet.noneOf(Access.class) : access);
    }

    /**
     * Deregisters the region (RFC 5041 §8.3.1 (6)): when this returns, no byte from the peer is
     * being placed into it or will be (a Write or Read Response segment validated just before is
     * waited for; a later one is a TERM 1/0, invalid STag).
     */
    @Override
    public void close() {
        if (pd.device().stags().deregister(mr.stag())) {
            pd.forget(this);
        }
    }

    @Override
    public String toString() {
        return "SoftMemoryRegion[" + mr + "]";
    }
}
