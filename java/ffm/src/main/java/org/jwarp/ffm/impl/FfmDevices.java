package org.jwarp.ffm.impl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * The RDMA devices rdma-core sees, through {@code java.lang.foreign} alone: {@code
 * ibv_get_device_list}, {@code ibv_get_device_name}, {@code ibv_free_device_list} of
 * {@code libibverbs.so.1} (exported since IBVERBS_1.0/1.1; checked against rdma-core 44). errno of
 * a failed {@code ibv_get_device_list} is captured at the call
 * ({@link java.lang.foreign.Linker.Option#captureCallState}), not read afterwards. The bindings are {@link Ibv}'s.
 */
public final class FfmDevices {
    private FfmDevices() {
    }

    /**
     * The names of the devices rdma-core lists, in its order.
     *
     * @throws UncheckedIOException when libibverbs is missing or {@code ibv_get_device_list} fails
     *                              (the message carries its errno, e.g. 38 ENOSYS without RDMA kernel support)
     */
    public static List<String> deviceNames() {
        if (Ibv.UNBOUND != null) {
            throw new UncheckedIOException(new IOException(Ibv.UNBOUND));
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Ibv.CALL_STATE);
            MemorySegment num = arena.allocate(JAVA_INT);
            MemorySegment list = (MemorySegment) Ibv.GET_DEVICE_LIST.invokeExact(state, num);
            if (list.equals(MemorySegment.NULL)) {
                int errno = Ibv.errno(state);
                throw new UncheckedIOException(new IOException("ibv_get_device_list failed with errno " + errno
                        + (errno == 38 ? " (ENOSYS: no RDMA support in this kernel, /sys/class/infiniband_verbs)" : "")));
            }
            try {
                int n = num.get(JAVA_INT, 0);
                MemorySegment devices = list.reinterpret(ADDRESS.byteSize() * n);
                List<String> names = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    MemorySegment dev = devices.getAtIndex(ADDRESS, i);
                    MemorySegment s = (MemorySegment) Ibv.GET_DEVICE_NAME.invokeExact(dev);
                    names.add(s.reinterpret(64).getString(0)); // IBV_SYSFS_NAME_MAX
                }
                return names;
            } finally {
                Ibv.FREE_DEVICE_LIST.invokeExact(list);
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("downcall failed", t);
        }
    }
}
