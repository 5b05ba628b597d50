package org.jwarp.ffm.impl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;

/**
 * The RDMA devices rdma-core sees, through {@code java.lang.foreign} alone: {@code
 * ibv_get_device_list}, {@code ibv_get_device_name}, {@code ibv_free_device_list} of
 * {@code libibverbs.so.1} (exported since IBVERBS_1.0/1.1; checked against rdma-core 44). errno of
 * a failed {@code ibv_get_device_list} is captured at the call
 * ({@link Linker.Option#captureCallState}), not read afterwards.
 */
public final class FfmDevices {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final MethodHandle GET_DEVICE_LIST;
    private static final MethodHandle GET_DEVICE_NAME;
    private static final MethodHandle FREE_DEVICE_LIST;
    /** Why libibverbs could not be bound, or null. */
    private static final String UNBOUND;

    static {
        MethodHandle list = null;
        MethodHandle name = null;
        MethodHandle free = null;
        String unbound = null;
        try {
            SymbolLookup ibv = SymbolLookup.libraryLookup("libibverbs.so.1", Arena.global());
            list = LINKER.downcallHandle(ibv.findOrThrow("ibv_get_device_list"), FunctionDescriptor.of(ADDRESS, ADDRESS),
                    Linker.Option.captureCallState("errno"));
            name = LINKER.downcallHandle(ibv.findOrThrow("ibv_get_device_name"), FunctionDescriptor.of(ADDRESS, ADDRESS));
            free = LINKER.downcallHandle(ibv.findOrThrow("ibv_free_device_list"), FunctionDescriptor.ofVoid(ADDRESS));
        } catch (IllegalArgumentException | java.util.NoSuchElementException e) {
            unbound = "libibverbs.so.1 (rdma-core's libibverbs1) could not be bound: " + e.getMessage();
        }
        GET_DEVICE_LIST = list;
        GET_DEVICE_NAME = name;
        FREE_DEVICE_LIST = free;
        UNBOUND = unbound;
    }

    private FfmDevices() {
    }

    /**
     * The names of the devices rdma-core lists, in its order.
     *
     * @throws UncheckedIOException when libibverbs is missing or {@code ibv_get_device_list} fails
     *                              (the message carries its errno, e.g. 38 ENOSYS without RDMA kernel support)
     */
    public static List<String> deviceNames() {
        if (UNBOUND != null) {
            throw new UncheckedIOException(new IOException(UNBOUND));
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CALL_STATE);
            MemorySegment num = arena.allocate(JAVA_INT);
            MemorySegment list = (MemorySegment) GET_DEVICE_LIST.invokeExact(state, num);
            if (list.equals(MemorySegment.NULL)) {
                int errno = (int) ERRNO.get(state, 0L);
                throw new UncheckedIOException(new IOException("ibv_get_device_list failed with errno " + errno
                        + (errno == 38 ? " (ENOSYS: no RDMA support in this kernel, /sys/class/infiniband_verbs)" : "")));
            }
            try {
                int n = num.get(JAVA_INT, 0);
                MemorySegment devices = list.reinterpret(ADDRESS.byteSize() * n);
                List<String> names = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    MemorySegment dev = devices.getAtIndex(ADDRESS, i);
                    MemorySegment s = (MemorySegment) GET_DEVICE_NAME.invokeExact(dev);
                    names.add(s.reinterpret(64).getString(0)); // IBV_SYSFS_NAME_MAX
                }
                return names;
            } finally {
                FREE_DEVICE_LIST.invokeExact(list);
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("downcall failed", t);
        }
    }
}
