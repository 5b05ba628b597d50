package org.jwarp.disni.impl;

import java.lang.ref.Cleaner;
import java.nio.ByteBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Memory a region owns (mapped by the native library for {@link DisniPd#allocate}) reached from
 * Java only through windows: plain direct {@link ByteBuffer}s over its addresses. Such a buffer
 * does not keep the memory alive, so unmapping while one is reachable would let it fault or, once
 * the addresses are mapped again for another region, read and write that region (maybe one a peer
 * may access: RFC 5040 section 2.1 STag, RFC 5041 section 8.2). So the memory is unmapped only
 * when the region is closed <em>and</em> no window is reachable any more: each window is counted,
 * and a {@link Cleaner} uncounts it when the garbage collector finds it unreachable. Slices,
 * duplicates and views of a window keep the window itself reachable (a direct buffer's derived
 * buffers reference the buffer they come from), so they count as the window.
 *
 * <p>The pages go back to the system at {@link #close()} either way: unmapped at once when no
 * window is reachable, else discarded at once (madvise MADV_DONTNEED: the mapping stays, a kept
 * window then reads zeros, never the region's old bytes) and unmapped once the last window is
 * gone. A region of several GiB therefore does not stay resident until a garbage collection.
 *
 * <p>Making a window after {@link #close()} is refused. Windows are not a hot path: one
 * registration with the cleaner each.
 *
 * <p>Thread-safe: {@link #window}, {@link #close()} and the cleaner's uncounting are serialized
 * on this object.
 */
final class WindowedMemory {
    private static final Logger LOG = LoggerFactory.getLogger(WindowedMemory.class);
    private static final Cleaner CLEANER = Cleaner.create();

    /** Makes a buffer over {@code length} bytes at {@code address} (JwarpNative.window in production). */
    interface WindowMaker {
        ByteBuffer make(long address, int length);
    }

    /** Unmaps the memory, or discards its pages (JwarpNative.unmapRegion, discardRegion); returns 0 or an errno. */
    interface Unmapper {
        int unmap(long address, long length);
    }

    private final long address;
    private final long length;
    private final WindowMaker maker;
    private final Unmapper unmapper;
    private final Unmapper discarder;
    private int windows;
    private boolean closed;
    private boolean unmapped;
    private boolean discarded;
    private int unmapErrno;
    private int discardErrno;

    WindowedMemory(long address, long length, WindowMaker maker, Unmapper unmapper, Unmapper discarder) {
        this.address = address;
        this.length = length;
        this.maker = maker;
        this.unmapper = unmapper;
        this.discarder = discarder;
    }

    /** A counted window of {@code len} bytes at {@code offset} (bounds checked by the caller). */
    synchronized ByteBuffer window(long offset, int len) {
        if (closed) {
            throw new IllegalStateException("region closed: no new windows on its memory");
        }
        ByteBuffer b = maker.make(address + offset, len);
        windows++;
        CLEANER.register(b, this::windowGone);
        return b;
    }

    private synchronized void windowGone() {
        windows--;
        unmapIfIdle();
    }

    /**
     * The region is closed (and deregistered): the memory is unmapped at once when no window is
     * reachable; else its pages are discarded now and the mapping goes with the last window.
     */
    synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        unmapIfIdle();
        if (!unmapped) {
            discarded = true;
            discardErrno = discarder.unmap(address, length);
            if (discardErrno != 0) {
                LOG.warn("madvise(MADV_DONTNEED) of a closed region of {} bytes: errno {}; its pages stay resident "
                        + "until its last window is unreachable", length, discardErrno);
            }
        }
    }

    private void unmapIfIdle() {
        if (closed && windows == 0 && !unmapped) {
            unmapped = true;
            unmapErrno = unmapper.unmap(address, length);
            if (unmapErrno != 0) {
                LOG.warn("munmap of a region of {} bytes: errno {}", length, unmapErrno);
            }
        }
    }

    /** Windows still reachable as far as the cleaner knows (diagnostics, tests). */
    synchronized int windows() {
        return windows;
    }

    /** Whether the memory was unmapped. */
    synchronized boolean unmapped() {
        return unmapped;
    }

    /** Whether the pages were discarded at close (a window was still reachable then). */
    synchronized boolean discarded() {
        return discarded;
    }

    /** The errno of the discard, 0 when it succeeded or has not happened. */
    synchronized int discardErrno() {
        return discardErrno;
    }

    /** The errno of the unmap, 0 when it succeeded or has not happened. */
    synchronized int unmapErrno() {
        return unmapErrno;
    }
}
