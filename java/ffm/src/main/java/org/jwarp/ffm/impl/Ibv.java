package org.jwarp.ffm.impl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.NoSuchElementException;
import org.jwarp.verbs.RdmaException;

/**
 * libibverbs bound through {@code java.lang.foreign}: the exported verbs as direct downcall
 * handles (errno captured at the call, {@link Linker.Option#captureCallState}, for those that
 * return NULL), and the hot verbs that {@code <infiniband/verbs.h>} declares static inline
 * ({@code ibv_poll_cq}, {@code ibv_req_notify_cq}, {@code ibv_post_send}, {@code ibv_post_recv},
 * {@code ibv_post_srq_recv})
 * as address-less handles: the caller passes the function pointer it read once from the
 * context's {@code ops} as the first argument, the indirect call a C program makes. Four of them
 * are critical downcalls ({@link Linker.Option#critical}, no heap segments): they are short and
 * never block (a user-space ring, at most a doorbell system call), so the call skips the JVM's
 * thread-state transition, and with it a safepoint poll, on the way in and out. Not
 * {@code ibv_post_send}: on siw the doorbell's system call transmits the send queue itself (TCP
 * sends that may sleep on the socket) and rxe runs its requester in the caller's context, and a
 * thread in a critical downcall stays in Java state, holding up every safepoint (GC) that long.
 * {@code ibv_reg_mr} is a macro in the header; the exported {@code ibv_reg_mr} (IBVERBS_1.1) is
 * the function it ends in for a plain registration.
 */
final class Ibv {
    private static final Linker LINKER = Linker.nativeLinker();
    static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    /** The hot verbs' option: short, non-blocking, never calls back into Java, native segments only. */
    private static final Linker.Option CRITICAL = Linker.Option.critical(false);

    /** Why libibverbs could not be bound, or null. */
    static final String UNBOUND;
    static final MethodHandle GET_DEVICE_LIST;
    static final MethodHandle FREE_DEVICE_LIST;
    static final MethodHandle GET_DEVICE_NAME;
    static final MethodHandle OPEN_DEVICE;
    static final MethodHandle CLOSE_DEVICE;
    static final MethodHandle QUERY_DEVICE;
    static final MethodHandle ALLOC_PD;
    static final MethodHandle DEALLOC_PD;
    static final MethodHandle REG_MR;
    static final MethodHandle DEREG_MR;
    static final MethodHandle CREATE_CQ;
    static final MethodHandle DESTROY_CQ;
    static final MethodHandle QUERY_QP;
    /** {@code ibv_create_qp} / {@code ibv_destroy_qp}: only the inline probe uses them (connections go through rdma_cm). */
    static final MethodHandle CREATE_QP;
    static final MethodHandle DESTROY_QP;
    static final MethodHandle CREATE_SRQ;
    static final MethodHandle MODIFY_SRQ;
    static final MethodHandle DESTROY_SRQ;

    /** {@code int (*poll_cq)(struct ibv_cq *, int num_entries, struct ibv_wc *)}, target first. */
    static final MethodHandle POLL_CQ = LINKER.downcallHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS), CRITICAL);
    /** {@code int (*req_notify_cq)(struct ibv_cq *, int solicited_only)}, target first. */
    static final MethodHandle REQ_NOTIFY_CQ = LINKER.downcallHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT), CRITICAL);

    /**
     * {@code int (*post_send)(struct ibv_qp *, struct ibv_send_wr *, struct ibv_send_wr **bad_wr)}, target first.
     * Not critical: the post may transmit in the kernel (see above).
     */
    static final MethodHandle POST_SEND = LINKER.downcallHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
    /** {@code int (*post_recv)(struct ibv_qp *, struct ibv_recv_wr *, struct ibv_recv_wr **bad_wr)}, target first. */
    static final MethodHandle POST_RECV = LINKER.downcallHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), CRITICAL);
    /** {@code int (*post_srq_recv)(struct ibv_srq *, struct ibv_recv_wr *, struct ibv_recv_wr **bad_wr)}, target first. */
    static final MethodHandle POST_SRQ_RECV = LINKER.downcallHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), CRITICAL);

    static {
        MethodHandle[] h = new MethodHandle[18];
        String unbound = null;
        try {
            SymbolLookup ibv = SymbolLookup.libraryLookup("libibverbs.so.1", Arena.global());
            Linker.Option errno = Linker.Option.captureCallState("errno");
            h[0] = bind(ibv, "ibv_get_device_list", FunctionDescriptor.of(ADDRESS, ADDRESS), errno);
            h[1] = bind(ibv, "ibv_free_device_list", FunctionDescriptor.ofVoid(ADDRESS));
            h[2] = bind(ibv, "ibv_get_device_name", FunctionDescriptor.of(ADDRESS, ADDRESS));
            h[3] = bind(ibv, "ibv_open_device", FunctionDescriptor.of(ADDRESS, ADDRESS), errno);
            h[4] = bind(ibv, "ibv_close_device", FunctionDescriptor.of(JAVA_INT, ADDRESS));
            h[5] = bind(ibv, "ibv_query_device", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
            h[6] = bind(ibv, "ibv_alloc_pd", FunctionDescriptor.of(ADDRESS, ADDRESS), errno);
            h[7] = bind(ibv, "ibv_dealloc_pd", FunctionDescriptor.of(JAVA_INT, ADDRESS));
            h[8] = bind(ibv, "ibv_reg_mr", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT), errno);
            h[9] = bind(ibv, "ibv_dereg_mr", FunctionDescriptor.of(JAVA_INT, ADDRESS));
            h[10] = bind(ibv, "ibv_create_cq",
                    FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT), errno);
            h[11] = bind(ibv, "ibv_destroy_cq", FunctionDescriptor.of(JAVA_INT, ADDRESS));
            h[12] = bind(ibv, "ibv_query_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, ADDRESS));
            h[13] = bind(ibv, "ibv_create_qp", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS), errno);
            h[14] = bind(ibv, "ibv_destroy_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS));
            h[15] = bind(ibv, "ibv_create_srq", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS), errno);
            h[16] = bind(ibv, "ibv_modify_srq", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
            h[17] = bind(ibv, "ibv_destroy_srq", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        } catch (IllegalArgumentException | NoSuchElementException e) {
            unbound = "libibverbs.so.1 (rdma-core's libibverbs1) could not be bound: " + e.getMessage();
        }
        UNBOUND = unbound;
        GET_DEVICE_LIST = h[0];
        FREE_DEVICE_LIST = h[1];
        GET_DEVICE_NAME = h[2];
        OPEN_DEVICE = h[3];
        CLOSE_DEVICE = h[4];
        QUERY_DEVICE = h[5];
        ALLOC_PD = h[6];
        DEALLOC_PD = h[7];
        REG_MR = h[8];
        DEREG_MR = h[9];
        CREATE_CQ = h[10];
        DESTROY_CQ = h[11];
        QUERY_QP = h[12];
        CREATE_QP = h[13];
        DESTROY_QP = h[14];
        CREATE_SRQ = h[15];
        MODIFY_SRQ = h[16];
        DESTROY_SRQ = h[17];
    }

    private Ibv() {
    }

    private static MethodHandle bind(SymbolLookup lib, String name, FunctionDescriptor fd, Linker.Option... options) {
        return LINKER.downcallHandle(lib.findOrThrow(name), fd, options);
    }

    /** Throws when libibverbs is not bound in this process. */
    static void requireBound() throws RdmaException {
        if (UNBOUND != null) {
            throw new RdmaException(UNBOUND);
        }
    }

    /** The errno a captured call left in {@code state}. */
    static int errno(MemorySegment state) {
        return (int) ERRNO.get(state, 0L);
    }

    /** "errno 12 (ENOMEM)": the number and, for the common ones, its name. */
    static String describe(int errno) {
        String name = switch (errno) {
            case 1 -> "EPERM";
            case 2 -> "ENOENT";
            case 11 -> "EAGAIN";
            case 12 -> "ENOMEM";
            case 13 -> "EACCES";
            case 14 -> "EFAULT";
            case 16 -> "EBUSY";
            case 19 -> "ENODEV";
            case 22 -> "EINVAL";
            case 38 -> "ENOSYS";
            case 95 -> "EOPNOTSUPP";
            case 98 -> "EADDRINUSE";
            case 110 -> "ETIMEDOUT";
            case 111 -> "ECONNREFUSED";
            default -> null;
        };
        return "errno " + errno + (name == null ? "" : " (" + name + ")");
    }

    /** A downcall's checked Throwable as what it is: a bug in a binding, never an expected failure. */
    static IllegalStateException downcallFailed(String call, Throwable t) {
        return new IllegalStateException("downcall " + call + " failed", t);
    }
}
