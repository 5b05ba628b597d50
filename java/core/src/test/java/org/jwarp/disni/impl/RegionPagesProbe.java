package org.jwarp.disni.impl;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;
import java.util.function.Supplier;
import org.jwarp.disni.natives.JwarpNative;

/**
 * Test helper defined by the DiSNI loader (child-first package): maps region memory through the
 * native library as {@link DisniPd#allocate} does, fills it, closes it while a window is still
 * reachable, and reports the mapping's resident size (from /proc/self/smaps) before and after.
 */
public final class RegionPagesProbe implements Supplier<Object[]> {
    static final long LENGTH = 8L << 20;

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

    /** Rss of the mapping that starts at {@code addr}, in KiB. */
    static long rssKib(long addr) throws IOException {
        List<String> lines = Files.readAllLines(Paths.get("/proc/self/smaps"));
        String start = Long.toHexString(addr) + "-";
        for (int i = 0; i < lines.size(); i++) {
            String l = lines.get(i);
            if (l.startsWith(start) || l.startsWith(String.format("%012x-", addr))) {
                for (int j = i + 1; j < lines.size(); j++) {
                    if (lines.get(j).startsWith("Rss:")) {
                        return Long.parseLong(lines.get(j).replaceAll("[^0-9]", ""));
                    }
                }
            }
        }
        throw new IllegalStateException("no mapping at 0x" + Long.toHexString(addr) + " in /proc/self/smaps");
    }
}
