package org.jwarp.mpa;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Where a gathering transmitter takes an FPDU's payload by reference instead of by copy (zero-copy
 * transmit of RFC 5044 §4 FPDUs): the FPDU's MPA length field and DDP/RDMAP header are written
 * into the staging buffer, the payload stays in the caller's (registered) memory, and the pad and
 * CRC follow the header in the staging buffer; the transport splices the payload in between when
 * the bytes are written to the socket ({@link FpduEncoder#finishGathered}).
 *
 * <p>This is the slice table itself, not a callback: the engine hands each referenced payload down
 * into it, and the transport below reads the pending slices in order ({@link #at}, {@link #view}),
 * lays them out between its staging runs, and after each write {@linkplain #settle settles} and
 * {@linkplain #pop pops} those the socket took. The ring's arrays are a {@link SliceTable} bound
 * while the transport holds a staging area ({@link #bind}); the payload views come from a pool per
 * source buffer (a region's buffer): a pending slice borrows one and returns it once written, so a
 * duplicate is made only when more slices of one region are pending at once than ever before,
 * never per FPDU, however regions rotate. Pools of regions no longer referenced are evicted when
 * more than {@link #POOLS} exist, and a deregistered region's pool goes at once ({@link #revoked}).
 * No allocation per FPDU. One owner at a time (the stream, under its I/O lock).
 */
public final class FpduSink {
    /** Payload slices one write may carry (2 iovecs each, well below IOV_MAX 1024). */
    public static final int SLICES = 128;

    /** Source buffers whose view pools are kept; beyond this, idle pools are dropped. */
    public static final int POOLS = 64;

    /** View pools by source buffer (at most {@link #POOLS} idle ones kept). */
    private final PayloadViewPools pools = new PayloadViewPools();
    /**
     * Payload bytes referenced at once beyond which no slice is added (one may exceed it alone);
     * the transmitter moves it between its write-through and stage-ahead budgets ({@link #budget(int)}).
     */
    private int budget;
    /** The bound table's arrays (null while none is bound): a ring of [head, head + count). */
    private int[] at;
    private ByteBuffer[] view;
    private PayloadViewPool[] viewOf;
    private int[] rem;
    private int head;
    private int count;
    /** Sum of the pending slices' bytes not written yet. */
    private long bytes;

    public FpduSink(int budget) {
        this.budget = budget;
    }

    /**
     * Sets the payload bytes referenced at once beyond which no slice is added: slices already
     * pending stay (a lower budget only stops new ones until writes bring the count under it).
     */
    public void budget(int bytes) {
        budget = bytes;
    }

    /** The current budget ({@link #budget(int)}). */
    public int budget() {
        return budget;
    }

    /** Binds the slice table of the staging area the owner borrowed; the ring starts empty. */
    public void bind(SliceTable t) {
        if (count > 0) {
            throw new IllegalStateException("rebinding the slice table with slices pending");
        }
        at = t.at;
        view = t.view;
        viewOf = t.viewOf;
        rem = t.rem;
        head = 0;
    }

    /** Forgets the bound table (empty, its entries null): nothing of it is read after this. */
    public void unbind() {
        at = null;
        view = null;
        viewOf = null;
        rem = null;
        head = 0;
    }

    /** Whether a payload of {@code length} bytes can be referenced now (false: flush first). */
    public boolean canReference(int length) {
        return count < SLICES && (bytes == 0 || bytes + length <= budget);
    }

    /** Room for another slice: a free entry and the byte budget not reached. */
    public boolean room() {
        return count < SLICES && bytes < budget;
    }

    /**
     * References {@code length} bytes of {@code src} from absolute index {@code index}, to be written
     * just before staging-buffer index {@code stagingIndex}; returns a view of exactly those bytes
     * ({@code position}..{@code limit}) private to this sink. {@code src} may be shared with other
     * threads: it is read by absolute index only. Called once the room for the FPDU's staging bytes
     * was checked ({@link #canReference}, {@link FpduEncoder#gatheredStagingLength}); the caller then
     * completes them with {@link FpduEncoder#finishGathered(java.nio.ByteBuffer, int, ByteBuffer)}
     * over the returned view, which cannot fail then, so a reference is never left without its FPDU.
     */
    public ByteBuffer reference(int stagingIndex, ByteBuffer src, int index, int length) {
        int k = (head + count) % SLICES;
        PayloadViewPool pool = pools.of(src);
        ByteBuffer v = pool.borrow();
        view[k] = v;
        viewOf[k] = pool;
        v.limit(index + length).position(index);
        at[k] = stagingIndex;
        rem[k] = length;
        count++;
        bytes += length;
        return v;
    }

    /** Pending slices. */
    public int count() {
        return count;
    }

    /** Bytes of the pending slices not written yet. */
    public long bytes() {
        return bytes;
    }

    /** Ring position just past the last slice: it changes exactly when a slice is added. */
    public int tail() {
        return (head + count) % SLICES;
    }

    /** The staging index pending slice {@code j} (0 the oldest) is spliced in before. */
    public int at(int j) {
        return at[(head + j) % SLICES];
    }

    /** Pending slice {@code j}'s view: a write advances its position by what it took. */
    public ByteBuffer view(int j) {
        return view[(head + j) % SLICES];
    }

    /**
     * After a write: takes what the socket took of pending slice {@code j} off the byte count;
     * returns whether the slice is written whole, its view then given back (pop it).
     */
    public boolean settle(int j) {
        int k = (head + j) % SLICES;
        int left = view[k].remaining();
        bytes -= rem[k] - left;
        rem[k] = left;
        if (left > 0) {
            return false;
        }
        if (viewOf[k] != null) { // null: a snapshot taken at revocation
            viewOf[k].giveBack(view[k]);
        }
        view[k] = null;
        viewOf[k] = null;
        return true;
    }

    /** Drops the {@code n} oldest slices, each {@linkplain #settle settled} whole. */
    public void pop(int n) {
        head = (head + n) % SLICES;
        count -= n;
    }

    /** The staging buffer dropped its first {@code by} bytes: every slice's place moves with them. */
    public void shift(int by) {
        for (int j = 0; j < count; j++) {
            at[(head + j) % SLICES] -= by;
        }
    }

    /**
     * Copy-on-revoke, RFC 5041 §8.3.1 (6) for the source side: bytes [{@code from}, {@code to}) of
     * {@code src} belong to a region being deregistered. Every pending slice overlapping them is
     * replaced by a snapshot of its bytes not yet written, so nothing is read from the region once
     * deregistration returns; the FPDUs stay intact (their CRC was computed over these bytes when
     * they were referenced). The caller holds the lock its writes hold. Cold path: allocates the
     * snapshots. Returns the bytes copied (the caller's write layout is stale when not 0).
     */
    public long revoked(ByteBuffer src, int from, int to) {
        PayloadViewPool p = pools.revoked(src); // its idle views go: nothing keeps the region reachable
        long copied = 0;
        if (p == null || p.lent == 0 || view == null) {
            pools.retire(p);
            return 0;
        }
        for (int j = 0; j < count; j++) {
            int k = (head + j) % SLICES;
            ByteBuffer v = view[k];
            int a = v.position();
            int b = v.limit();
            if (viewOf[k] != p || a >= to || b <= from || a == b) {
                continue;
            }
            ByteBuffer copy = ByteBuffer.allocate(b - a);
            copy.put(0, v, a, b - a);
            p.giveBack(v);
            view[k] = copy;
            viewOf[k] = null;
            copied += b - a;
        }
        pools.retire(p);
        return copied;
    }

    /** Source buffers with a view pool kept (bounded by {@link #POOLS} plus those in use). */
    public int pooledSources() {
        return pools.size();
    }

    /** The stream closed: no slice, no pool, no view; the bound table (if any) is left empty. */
    public void clear() {
        if (view != null) {
            Arrays.fill(view, null);
            Arrays.fill(viewOf, null);
        }
        pools.clear();
        head = 0;
        count = 0;
        bytes = 0;
    }
}
