package org.jwarp.verbs;

/**
 * A scatter-gather list (an array of {@code ibv_sge}): the local buffers one work request reads
 * from (gather: Send, RDMA Write) or writes into (scatter: a receive, the sink of an RDMA Read).
 * Each entry names a registered region, an offset into it and a length; the message is the
 * entries' bytes in list order (RFC 5040 §5.1-§5.3: one RDMAP message per work request, whatever
 * its local layout; RFC 5041 §5.3: an untagged message is placed into one posted buffer, here
 * the concatenation of the entries).
 *
 * <p>Mutable and reusable, owned by its {@link SendRequest} or {@link RecvRequest}; it holds up to
 * {@link #CAPACITY} entries in preallocated arrays, so filling it allocates nothing. A provider
 * accepts at most its QP's {@link QueuePairCaps#maxSendSge()} / {@link QueuePairCaps#maxRecvSge()}
 * / {@link QueuePairCaps#maxSgeRd()} entries and refuses more at post time with a
 * {@link WorkRequestException} naming {@code num_sge} and the limit. Entries of length 0 are
 * allowed and carry no bytes.
 *
 * <p>Not thread-safe: one thread fills a list and posts it; the provider copies what it needs
 * during the post call, so the list may be refilled as soon as the post returns.
 */
public final class ScatterGatherList {
    /** Entries a list can hold; more than any provider of this project accepts per work request. */
    public static final int CAPACITY = 32;

    private final MemoryRegion[] regions = new MemoryRegion[CAPACITY];
    private final long[] offsets = new long[CAPACITY];
    private final int[] lengths = new int[CAPACITY];
    private int count;

    /**
     * Removes every entry.
     *
     * @return this list
     */
    public ScatterGatherList clear() {
        for (int i = 0; i < count; i++) {
            regions[i] = null;
        }
        count = 0;
        return this;
    }

    /**
     * Appends {@code length} bytes of {@code region} at {@code offset}. Bounds and access are
     * checked at post time, against the region and the QP's limits.
     *
     * @param region the registered region (null only with {@code length} 0)
     * @param offset the entry's offset in {@code region}
     * @param length the entry's length in bytes
     * @return this list
     * @throws IllegalStateException when the list already holds {@link #CAPACITY} entries
     */
    public ScatterGatherList add(MemoryRegion region, long offset, int length) {
        if (count == CAPACITY) {
            throw new IllegalStateException("scatter-gather list full: " + CAPACITY + " entries");
        }
        regions[count] = region;
        offsets[count] = offset;
        lengths[count] = length;
        count++;
        return this;
    }

    /**
     * Replaces the entries by one, or by none when {@code length} is 0 and {@code region} null (a
     * zero-length message).
     *
     * @param region the registered region, or null with {@code length} 0
     * @param offset the entry's offset in {@code region}
     * @param length the entry's length in bytes
     * @return this list
     */
    public ScatterGatherList set(MemoryRegion region, long offset, int length) {
        clear();
        if (region != null || length != 0) {
            add(region, offset, length);
        }
        return this;
    }

    /** {@return the number of entries in the list ({@code num_sge})} */
    public int count() {
        return count;
    }

    /**
     * The region of entry {@code i}.
     *
     * @param i the entry, {@code 0 <= i < count()}
     * @return its region (null for an empty entry)
     * @throws IndexOutOfBoundsException when {@code i} is not an entry
     */
    public MemoryRegion region(int i) {
        check(i);
        return regions[i];
    }

    /**
     * The offset of entry {@code i} in its region.
     *
     * @param i the entry, {@code 0 <= i < count()}
     * @return its offset
     * @throws IndexOutOfBoundsException when {@code i} is not an entry
     */
    public long offset(int i) {
        check(i);
        return offsets[i];
    }

    /**
     * The length of entry {@code i}.
     *
     * @param i the entry, {@code 0 <= i < count()}
     * @return its length in bytes
     * @throws IndexOutOfBoundsException when {@code i} is not an entry
     */
    public int length(int i) {
        check(i);
        return lengths[i];
    }

    /** {@return the sum of the entries' lengths (negative lengths count as written; the post refuses them)} */
    public long totalLength() {
        long t = 0;
        for (int i = 0; i < count; i++) {
            t += lengths[i];
        }
        return t;
    }

    private void check(int i) {
        if (i < 0 || i >= count) {
            throw new IndexOutOfBoundsException("entry " + i + " of " + count);
        }
    }

    /** {@return the entries as lkey+offset/length, for logs; allocates} */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("sgl[");
        for (int i = 0; i < count; i++) {
            b.append(i == 0 ? "" : ", ").append(regions[i] == null ? "null" : "0x" + Integer.toHexString(regions[i].lkey()))
                    .append('+').append(offsets[i]).append('/').append(lengths[i]);
        }
        return b.append(']').toString();
    }
}
