package org.jwarp.disni.impl;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.function.Supplier;
import org.jwarp.disni.natives.JwarpNative;

/**
 * Test helper defined by the DiSNI loader (child-first package): maps region memory through the
 * native library as {@link DisniPd#allocate} does, fills it, closes it while a window is still
 * reachable, and reports its resident size (from /proc/self/pagemap) before and after.
 */
public final class RegionPagesProbe implements Supplier<Object[]> {
    static final long LENGTH = 8L << 20;
    private static final long PAGE = 4096;

    @Override
    public Object[] get() {
        try {
            long addr = JwarpNative.mapRegion(LENGTH);
            WindowedMemory m = new WindowedMemory(addr, LENGTH, JwarpNative::window, JwarpNative::unmapRegion,
                    JwarpNative::discardRegion);
            ByteBuffer w = m.window(0, (int) LENGTH);
            for (int i = 0; i < LENGTH; i += 4096) {
                w.put(i, (byte) 0x5a);
            }
            long before = rssKib(addr);
            m.close();
            long after = rssKib(addr);
            byte seen = w.get(4096);
            return new Object[] {before, after, seen, m.discarded(), m.discardErrno(), m.unmapped()};
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Resident KiB of the pages in [{@code addr}, {@code addr + LENGTH}), from /proc/self/pagemap
     * (bit 63 of each page's entry: present). Counted per page rather than per mapping, because the
     * kernel may merge the region's mapping with a neighbour of the same flags, whose pages smaps
     * would then add to the region's.
     */
    static long rssKib(long addr) throws IOException {
        int pages = (int) (LENGTH / PAGE);
        ByteBuffer entries = ByteBuffer.allocate(pages * 8).order(ByteOrder.nativeOrder());
        try (FileChannel ch = FileChannel.open(Paths.get("/proc/self/pagemap"), StandardOpenOption.READ)) {
            long pos = (addr / PAGE) * 8;
            while (entries.hasRemaining()) {
                if (ch.read(entries, pos + entries.position()) < 0) {
                    throw new IOException("short read of /proc/self/pagemap at 0x" + Long.toHexString(addr));
                }
            }
        }
        long present = 0;
        for (int i = 0; i < pages; i++) {
            if (entries.getLong(i * 8) < 0) { // bit 63: page present
                present++;
            }
        }
        return present * (PAGE / 1024);
    }
}
