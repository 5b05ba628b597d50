package org.jwarp.provider;

import java.util.concurrent.atomic.AtomicInteger;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WorkCompletion;

/**
 * The posted buffers of one shared receive queue, behind the tokens the device sees as wr_ids.
 * Buffers of an SRQ complete out of posting order across its QPs (each QP takes the next buffer
 * when a message starts, and messages of different QPs finish in any order), so unlike a QP's
 * {@link WrRing} each buffer holds a slot of its own, found again from the token: tag {@code 0b11}
 * in the top bits, {@value #GEN_BITS} bits of generation, {@value #SLOT_BITS} bits of slot, then a
 * sequence number that tells a slot's reuses apart. A completion retires exactly its slot. Free
 * slots are an index stack.
 *
 * <p>Preallocated arrays, no allocation per post or completion. Not thread-safe: the owning SRQ
 * guards it. Shared by the providers that post to a device (DiSNI, ffm).
 */
public final class SrqSlots {
    public static final long TAG = 0b11L << 62;
    public static final int GEN_BITS = 12;
    public static final int SLOT_BITS = 20;
    public static final int SEQ_BITS = 62 - GEN_BITS - SLOT_BITS;
    /** The most slots a token can name. */
    public static final int MAX_SLOTS = 1 << SLOT_BITS;
    private static final AtomicInteger GENERATIONS = new AtomicInteger();

    private final long prefix;
    private final long[] tokens;
    private final long[] wrIds;
    private final int[] free;
    private int freeTop;
    /** The slots of the chain being written, by position in the chain. */
    private final int[] chainSlots;
    private long seq;

    /** {@code capacity} slots (at most {@link #MAX_SLOTS}), under a fresh generation. */
    public SrqSlots(int capacity) {
        if (capacity < 1 || capacity > MAX_SLOTS) {
            throw new IllegalArgumentException("capacity " + capacity + " outside 1.." + MAX_SLOTS);
        }
        this.prefix = TAG | ((long) (GENERATIONS.incrementAndGet() & ((1 << GEN_BITS) - 1)) << (SLOT_BITS + SEQ_BITS));
        tokens = new long[capacity];
        wrIds = new long[capacity];
        free = new int[capacity];
        chainSlots = new int[capacity];
        for (int i = 0; i < capacity; i++) {
            free[i] = capacity - 1 - i;
        }
        freeTop = capacity;
    }

    public int capacity() {
        return tokens.length;
    }

    /** Buffers posted whose completion has not been mapped yet. */
    public int posted() {
        return tokens.length - freeTop;
    }

    public boolean full() {
        return freeTop == 0;
    }

    /** Takes a free slot for WR {@code k} of the chain being written; returns the token the device gets. */
    public long take(int k, long wrId) {
        int slot = free[--freeTop];
        long token = prefix | ((long) slot << SEQ_BITS) | (seq++ & ((1L << SEQ_BITS) - 1));
        tokens[slot] = token;
        wrIds[slot] = wrId;
        chainSlots[k] = slot;
        return token;
    }

    /** The device refused WRs {@code from..k-1} of the chain: their slots are free again. */
    public void refused(int from, int k) {
        for (int i = from; i < k; i++) {
            tokens[chainSlots[i]] = 0;
            free[freeTop++] = chainSlots[i];
        }
    }

    /** Whether {@code token} is one of this queue's (by tag and generation). */
    public boolean owns(long token) {
        return (token & ~((1L << (SLOT_BITS + SEQ_BITS)) - 1)) == prefix;
    }

    /**
     * A receive completion (success or error) with one of this queue's tokens: its slot retires and
     * the caller's wrId replaces the token, the opcode is RECV. False for a stale or foreign token.
     */
    public boolean completed(WorkCompletion wc) {
        long token = wc.wrId;
        if (!owns(token)) {
            return false;
        }
        int slot = (int) ((token >>> SEQ_BITS) & (MAX_SLOTS - 1));
        if (slot >= tokens.length || tokens[slot] != token) {
            return false;
        }
        tokens[slot] = 0;
        free[freeTop++] = slot;
        wc.wrId = wrIds[slot];
        wc.opcode = WcOpcode.RECV;
        return true;
    }
}
