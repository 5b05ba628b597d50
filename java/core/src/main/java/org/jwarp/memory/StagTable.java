package org.jwarp.memory;

import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * STag allocation and validation, RFC 5041 §7.1 (tagged checks), §8.2 (PD association) and §8.3
 * (revocation), RFC 5040 §8.1.
 *
 * <p>An STag is {@code index << 8 | key}: the 24-bit index selects a slot, the 8-bit key changes on
 * every reuse of the slot so a stale STag never validates. Index 0 is never allocated, so STags
 * 0x00–0xFF (including the zero-length RTR STag 1 siw uses) are always invalid. STags are not
 * predictable from one another (RFC 5042's threat of a peer guessing Steering Tags): each table
 * starts its index search at a random slot and every registration draws a random key (never the
 * slot's previous one), so knowing one advertised STag tells a peer neither its neighbours' keys
 * nor which indices are in use.
 *
 * <p>A peer's Send with Invalidate ({@link #invalidateRemote}) may only invalidate what it could
 * legitimately use: a region of the stream's protection domain that grants a remote access right
 * and, where the region is bound to a stream, on that stream. Local-only regions (receive buffers,
 * Read sinks, send sources) cannot be invalidated remotely (java/CONFORMANCE.md, "Remote
 * invalidation").
 *
 * <p>Registration and revocation may run on any thread; lookups on the data path read an
 * {@link AtomicReferenceArray} and a volatile flag and allocate nothing.
 */
public final class StagTable {
    /** Result of {@link #check}: access allowed. */
    public static final int OK = 0;
    /** STag unknown, stale key or revoked (RFC 5041 §7.1 tagged check 1). */
    public static final int INVALID_STAG = 1;
    /** STag belongs to another protection domain (RFC 5041 §8.2, §7.1 check 2). */
    public static final int NOT_ASSOCIATED = 2;
    /** Required access right missing (RFC 5040 §4.8 access rights violation). */
    public static final int ACCESS_VIOLATION = 3;
    /** TO or TO + length outside the registered range (RFC 5041 §7.1 checks 3 and 4). */
    public static final int BASE_BOUNDS = 4;
    /** 64-bit unsigned TO + length wraps (RFC 5041 §7.1 check 5). */
    public static final int TO_WRAP = 5;

    /**
     * Told of every region {@link #deregister} revokes (RFC 5041 §8.3.1 (6) for the local source
     * side): a transmit path that still references the region's bytes (zero-copy Read Responses,
     * Writes, Sends waiting for the socket) must stop reading them before it returns.
     */
    public interface RevocationListener {
        /**
         * {@code region} was revoked and no placement into it is in progress; called on the
         * deregistering thread, which must not hold a lock the listener takes.
         */
        void revoked(StagRegion region);

        /**
         * {@code fence.region()} was invalidated by a remote Send with Invalidate (RFC 5040 §5.3):
         * stop reading it as {@link #revoked} does. Called on a thread that holds the invalidating
         * stream's I/O lock, so it must not block on another lock: what cannot be done now is
         * {@linkplain SourceFence#defer deferred} to the lock's holder, which
         * {@linkplain SourceFence#arrive arrives} once done.
         */
        void invalidated(SourceFence fence);

        /**
         * Called repeatedly while an invalidating thread waits for deferred fences: runs those handed
         * to locks this thread holds (two streams invalidating each other's regions both progress).
         */
        default void helpFences() {
        }
    }

    private final CopyOnWriteArrayList<RevocationListener> revocationListeners = new CopyOnWriteArrayList<>();
    private final AtomicReferenceArray<StagRegion> slots;
    private final int[] keys;
    /** Cold path only (registration): random start index and per-registration keys. */
    private final Random random;
    private int searchFrom;

    /** A table with room for {@code capacity - 1} live registrations (slot 0 is reserved). */
    public StagTable(int capacity) {
        if (capacity < 2 || capacity > (1 << 24)) {
            throw new IllegalArgumentException("STag table capacity must be 2.." + (1 << 24) + ": " + capacity);
        }
        slots = new AtomicReferenceArray<>(capacity);
        keys = new int[capacity];
        random = new SecureRandom();
        searchFrom = 1 + random.nextInt(capacity - 1);
    }

    /**
     * Registers {@code length} bytes of the direct buffer {@code buffer} from index {@code offset},
     * addressed by tagged offsets starting at {@code baseTo}.
     */
    public synchronized StagRegion register(StagDomain pd, ByteBuffer buffer, int offset, int length,
            long baseTo, int access) {
        if (pd == null) {
            throw new IllegalArgumentException("protection domain must not be null (RFC 5041 §8.2)");
        }
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException("registered memory must be a direct buffer");
        }
        if (offset < 0 || length < 0 || offset > buffer.capacity() - length) {
            throw new IllegalArgumentException("region [" + offset + ", +" + length + ") outside buffer of capacity "
                    + buffer.capacity());
        }
        if (length > 0 && Long.compareUnsigned(baseTo + length - 1, baseTo) < 0) {
            throw new IllegalArgumentException("region base TO 0x" + Long.toHexString(baseTo) + " + length " + length
                    + " wraps 64 bits (RFC 5041 §7.1)");
        }
        if ((access & ~StagAccess.ALL) != 0) {
            throw new IllegalArgumentException("unknown access bits: " + access);
        }
        int n = slots.length();
        for (int i = 0; i < n - 1; i++) {
            int idx = searchFrom + i;
            if (idx >= n) {
                idx -= n - 1;
            }
            if (slots.get(idx) == null) {
                keys[idx] = (keys[idx] + 1 + random.nextInt(255)) & 0xFF; // random, never the previous key
                int stag = (idx << 8) | keys[idx];
                StagRegion mr = new StagRegion(stag, pd, buffer, offset, length, baseTo, access);
                slots.set(idx, mr);
                searchFrom = idx + 1 >= n ? 1 : idx + 1;
                return mr;
            }
        }
        throw new IllegalStateException("STag table full (" + (n - 1) + " regions)");
    }

    /** The live region named by {@code stag}, or null if unknown, stale or revoked. */
    public StagRegion lookup(int stag) {
        int idx = stag >>> 8;
        if (idx == 0 || idx >= slots.length()) {
            return null;
        }
        StagRegion mr = slots.get(idx);
        if (mr == null || mr.stag() != stag || !mr.isValid()) {
            return null;
        }
        return mr;
    }

    /**
     * Validates an access of {@code length} bytes at tagged offset {@code to} in the order of RFC
     * 5041 §7.1: STag valid, associated with {@code pd}, access right, base, 64-bit wrap, bound.
     * Returns {@link #OK} or one of the error constants; allocates nothing.
     */
    public int check(int stag, StagDomain pd, long to, int length, int requiredAccess) {
        StagRegion mr = lookup(stag);
        return check(mr, pd, to, length, requiredAccess);
    }

    /** As {@link #check(int, StagDomain, long, int, int)} against an already looked-up region. */
    public static int check(StagRegion mr, StagDomain pd, long to, int length, int requiredAccess) {
        if (mr == null || !mr.isValid()) {
            return INVALID_STAG;
        }
        if (mr.pd() != pd) {
            return NOT_ASSOCIATED;
        }
        return checkRange(mr, to, length, requiredAccess);
    }

    /**
     * What a live region answers about an access of {@code length} bytes at {@code to}: the access
     * right, then base, 64-bit wrap and bound (RFC 5041 §7.1's checks after the STag and its
     * association, which the caller asks first). {@link #OK} or the first that fails.
     */
    public static int checkRange(StagRegion mr, long to, int length, int requiredAccess) {
        if (!StagAccess.grants(mr.access(), requiredAccess)) {
            return ACCESS_VIOLATION;
        }
        long base = mr.baseTo();
        if (Long.compareUnsigned(to, base) < 0) {
            return BASE_BOUNDS;
        }
        // all unsigned 64-bit: TOs near and beyond 2^63 are legal offsets (RFC 5041 §4.1)
        long end = to + length;
        if (Long.compareUnsigned(end, to) < 0) {
            return TO_WRAP;
        }
        if (Long.compareUnsigned(end - base, mr.length()) > 0) {
            return BASE_BOUNDS;
        }
        return OK;
    }

    /**
     * Invalidates {@code stag} on behalf of its owner in {@code pd} (a local invalidation; no remote
     * access check). Returns false if the STag is not live or belongs to another protection domain.
     * As {@link #invalidateRemote} once the checks passed.
     */
    public boolean invalidate(int stag, StagDomain pd) {
        StagRegion mr = lookup(stag);
        if (mr == null || mr.pd() != pd) {
            return false;
        }
        revokeAndFence(mr);
        return true;
    }

    /**
     * A peer's Send with Invalidate (RFC 5040 §5.3) arriving on DDP stream {@code stream} names
     * {@code stag}: invalidates it only if the peer could legitimately use it (java/CONFORMANCE.md,
     * "Remote invalidation"): live ({@link #INVALID_STAG}), of {@code pd} and, when bound, of
     * {@code stream} ({@link #NOT_ASSOCIATED}, RFC 5041 §8.2, §8.3.1 (1) and (2)), and granting a
     * remote access right ({@link #ACCESS_VIOLATION}: a local-only region was never advertised).
     * Anything but {@link #OK} changes nothing. With {@link #OK}, the slot stays reserved until
     * {@link #deregister}; no placement into the region is in progress and none will start (RFC 5041
     * §8.3.1 (6), see {@link StagRegion}), and no transmit path reads its bytes any more
     * ({@link RevocationListener#invalidated}): the caller may then report the invalidation to the
     * application in the receive completion.
     */
    public int invalidateRemote(int stag, StagDomain pd, Object stream) {
        StagRegion mr = lookup(stag);
        if (mr == null) {
            return INVALID_STAG;
        }
        Object bound = mr.stream();
        if (mr.pd() != pd || (bound != null && bound != stream)) {
            return NOT_ASSOCIATED;
        }
        if ((mr.access() & (StagAccess.REMOTE_READ | StagAccess.REMOTE_WRITE)) == 0) {
            return ACCESS_VIOLATION;
        }
        revokeAndFence(mr);
        return OK;
    }

    private void revokeAndFence(StagRegion mr) {
        mr.revoke();
        mr.awaitPlacements();
        fenceSources(mr);
    }

    /**
     * RFC 5041 §8.3.1 (6) for the source side of a remote invalidation: returns once every
     * {@link RevocationListener} stopped reading {@code mr}'s bytes, so the receive completion that
     * reports the invalidation (RFC 5040 §5.3) never precedes a transmit read of the region. Listeners
     * that cannot fence at once defer; meanwhile this thread runs the fences handed to the locks it
     * holds, so a cycle of streams invalidating each other's regions cannot deadlock. Cold path.
     */
    private void fenceSources(StagRegion mr) {
        if (revocationListeners.isEmpty()) {
            return;
        }
        SourceFence fence = new SourceFence(mr);
        for (RevocationListener l : revocationListeners) {
            l.invalidated(fence);
        }
        while (!fence.done()) {
            for (RevocationListener l : revocationListeners) {
                l.helpFences();
            }
            Thread.yield(); // a holder finishes a bounded engine step and lets go
        }
    }

    /** Adds a listener told of every {@link #deregister} (cold path). */
    public void addRevocationListener(RevocationListener l) {
        revocationListeners.add(l);
    }

    /** Removes a listener added by {@link #addRevocationListener}. */
    public void removeRevocationListener(RevocationListener l) {
        revocationListeners.remove(l);
    }

    /** Listeners registered now (tests, leak checks: a closed stream leaves none). */
    public int revocationListeners() {
        return revocationListeners.size();
    }

    /**
     * Revokes {@code stag} immediately and frees its slot for reuse under a new key. When it returns
     * true, no placement into the region is in progress and none will start (RFC 5041 §8.3.1 (6)),
     * and every {@link RevocationListener} has been told, so no transmit path reads the region's
     * bytes any more. (A remote {@link #invalidate} fences them too, without blocking on a lock:
     * {@link RevocationListener#invalidated}.)
     */
    public boolean deregister(int stag) {
        StagRegion mr;
        synchronized (this) {
            int idx = stag >>> 8;
            if (idx == 0 || idx >= slots.length()) {
                return false;
            }
            mr = slots.get(idx);
            if (mr == null || mr.stag() != stag) {
                return false;
            }
            mr.revoke();
            slots.set(idx, null);
        }
        mr.awaitPlacements(); // outside the table lock: registrations go on meanwhile
        for (RevocationListener l : revocationListeners) {
            l.revoked(mr); // the transmit paths stop reading the region's bytes
        }
        return true;
    }
}
