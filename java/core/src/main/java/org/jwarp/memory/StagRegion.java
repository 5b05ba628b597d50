package org.jwarp.memory;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.concurrent.locks.LockSupport;

/**
 * A registered, off-heap byte range addressable by an STag, RFC 5041 §3.2 and §8.2 (Tagged Buffer
 * Model): tagged offsets {@code [baseTo, baseTo + length)} map onto bytes
 * {@code [offset, offset + length)} of a direct {@link ByteBuffer}.
 *
 * <p>Validity and placement leases share one state word (the revocation fence, RFC 5041 §8.3.1
 * (6): once the ULP revokes remote access, the network can no longer modify the buffer). A
 * placement that writes peer bytes into the region first takes a lease ({@link #acquirePlacement},
 * one CAS, no allocation, no lock) and drops it when the bytes are in ({@link #releasePlacement});
 * revocation sets the revoked bit and then waits until no lease is held. So once {@link
 * StagTable#invalidate} or {@link StagTable#deregister} returns, no later validation succeeds
 * (RFC 5041 §8.3, revocation takes effect immediately) and no placement validated before it is still
 * writing: the region's bytes no longer change on behalf of the peer. A placement holds its lease
 * only while it copies bytes it already has or reads them from a non-blocking socket, never across
 * a callback, so revocation waits microseconds at most. Revoking from inside a placement (the thread
 * that holds a lease) would wait for itself; the engine never does.
 *
 * <p>Association (RFC 5041 §8.2): every region belongs to its protection domain; {@link #bindStream}
 * further limits remote access to one DDP stream (the DDP Stream association of §8.2, §8.3 (3),
 * §8.3.1 (2)). The stream is an opaque key the transport chooses (the soft provider uses its QP).
 */
public final class StagRegion {
    private final int stag;
    private final StagDomain pd;
    private final ByteBuffer buffer;
    private final int offset;
    private final long length;
    private final long baseTo;
    private final int access;
    /** {@link #REVOKED} bit | number of placements in progress. */
    private volatile int state;
    private volatile Object stream;

    private static final int REVOKED = 1 << 31;
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(StagRegion.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    StagRegion(int stag, StagDomain pd, ByteBuffer buffer, int offset, int length, long baseTo, int access) {
        this.stag = stag;
        this.pd = pd;
        this.buffer = buffer;
        this.offset = offset;
        this.length = length;
        this.baseTo = baseTo;
        this.access = access;
    }

    public int stag() {
        return stag;
    }

    public StagDomain pd() {
        return pd;
    }

    /** The backing direct buffer; index arithmetic only, its position and limit are never used. */
    public ByteBuffer buffer() {
        return buffer;
    }

    /** Index in {@link #buffer()} of the byte at tagged offset {@link #baseTo()}. */
    public int offset() {
        return offset;
    }

    /** Bytes addressable by tagged offsets from {@link #baseTo()}; a long, as TOs are 64-bit (RFC 5041 §4.1). */
    public long length() {
        return length;
    }

    public long baseTo() {
        return baseTo;
    }

    public int access() {
        return access;
    }

    public boolean isValid() {
        return (state & REVOKED) == 0;
    }

    /**
     * Takes a placement lease (RFC 5041 §8.3.1 (6)): true when the region is still valid, and then
     * revocation waits until {@link #releasePlacement} before it returns; false once revoked (the
     * placement must not touch the region: RFC 5041 §7.1 invalid STag). Lock-free, allocates nothing.
     */
    public boolean acquirePlacement() {
        while (true) {
            int s = state;
            if ((s & REVOKED) != 0) {
                return false;
            }
            if (STATE.compareAndSet(this, s, s + 1)) {
                return true;
            }
        }
    }

    /** Drops a lease taken by a successful {@link #acquirePlacement}. */
    public void releasePlacement() {
        STATE.getAndAdd(this, -1);
    }

    /** Placements holding a lease right now (tests, diagnostics). */
    public int placementsInProgress() {
        return state & ~REVOKED;
    }

    /**
     * Limits remote access to the DDP stream identified by {@code streamKey} (RFC 5041 §8.2 DDP Stream
     * association); {@code null} returns the region to its whole protection domain.
     */
    public void bindStream(Object streamKey) {
        stream = streamKey;
    }

    /** The DDP stream this region is limited to, or null for every stream of its protection domain. */
    public Object stream() {
        return stream;
    }

    /** Sets the revoked bit: no lease is granted from now on. */
    void revoke() {
        STATE.getAndBitwiseOr(this, REVOKED);
    }

    /**
     * Waits until every placement lease taken before {@link #revoke} is dropped (each is a bounded
     * copy): spins briefly, then yields, then parks for microseconds.
     */
    void awaitPlacements() {
        for (int i = 0; (state & ~REVOKED) != 0; i++) {
            if (i < 100) {
                Thread.onSpinWait();
            } else if (i < 200) {
                Thread.yield();
            } else {
                LockSupport.parkNanos(10_000);
            }
        }
    }

    /** Buffer index of tagged offset {@code to}; only meaningful after a successful check. */
    public int indexOf(long to) {
        return offset + (int) (to - baseTo);
    }

    @Override
    public String toString() {
        return String.format("MR[stag=0x%08x %s to=0x%x len=%d access=%d valid=%b]", stag, pd, baseTo, length,
                access, isValid());
    }
}
