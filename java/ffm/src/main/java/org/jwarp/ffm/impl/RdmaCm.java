package org.jwarp.ffm.impl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.NoSuchElementException;
import org.jwarp.verbs.RdmaException;

/**
 * librdmacm ({@code librdmacm.so.1}, rdma-core 44) bound through {@code java.lang.foreign}: the
 * exported connection-manager calls, errno captured at the call for those that return -1 or
 * NULL, and libc's {@code fcntl} to make an event channel non-blocking.
 */
final class RdmaCm {
    private static final Linker LINKER = Linker.nativeLinker();

    /** {@code RDMA_PS_TCP}: reliable connected, the port space of iWARP. */
    static final int PS_TCP = 0x0106;
    static final int ADDR_RESOLVED = 0;
    static final int ROUTE_RESOLVED = 2;
    static final int CONNECT_REQUEST = 4;
    static final int REJECTED = 8;
    static final int ESTABLISHED = 9;
    static final int DISCONNECTED = 10;
    static final int DEVICE_REMOVAL = 11;
    static final int TIMEWAIT_EXIT = 15;
    private static final String[] EVENT_NAMES = {"ADDR_RESOLVED", "ADDR_ERROR", "ROUTE_RESOLVED", "ROUTE_ERROR",
        "CONNECT_REQUEST", "CONNECT_RESPONSE", "CONNECT_ERROR", "UNREACHABLE", "REJECTED", "ESTABLISHED", "DISCONNECTED",
        "DEVICE_REMOVAL", "MULTICAST_JOIN", "MULTICAST_ERROR", "ADDR_CHANGE", "TIMEWAIT_EXIT"};
    /** fcntl(2) {@code F_GETFL}, {@code F_SETFL}, {@code O_NONBLOCK} (Linux, every architecture the JDK runs on). */
    static final int F_GETFL = 3;
    static final int F_SETFL = 4;
    static final int O_NONBLOCK = 04000;
    static final int EAGAIN = 11;

    static final String UNBOUND;
    static final MethodHandle CREATE_EVENT_CHANNEL;
    static final MethodHandle DESTROY_EVENT_CHANNEL;
    static final MethodHandle CREATE_ID;
    static final MethodHandle DESTROY_ID;
    static final MethodHandle BIND_ADDR;
    static final MethodHandle LISTEN;
    static final MethodHandle RESOLVE_ADDR;
    static final MethodHandle RESOLVE_ROUTE;
    static final MethodHandle CREATE_QP;
    static final MethodHandle DESTROY_QP;
    static final MethodHandle CONNECT;
    static final MethodHandle ACCEPT;
    static final MethodHandle REJECT;
    static final MethodHandle DISCONNECT;
    static final MethodHandle GET_CM_EVENT;
    static final MethodHandle ACK_CM_EVENT;
    static final MethodHandle MIGRATE_ID;
    /** {@code int fcntl(int fd, int cmd, ...)} with one int after the variadic mark. */
    static final MethodHandle FCNTL;

    static {
        MethodHandle[] h = new MethodHandle[18];
        String unbound = null;
        try {
            SymbolLookup cm = SymbolLookup.libraryLookup("librdmacm.so.1", Arena.global());
            Linker.Option errno = Linker.Option.captureCallState("errno");
            FunctionDescriptor intOfId = FunctionDescriptor.of(JAVA_INT, ADDRESS);
            h[0] = bind(cm, "rdma_create_event_channel", FunctionDescriptor.of(ADDRESS), errno);
            h[1] = bind(cm, "rdma_destroy_event_channel", FunctionDescriptor.ofVoid(ADDRESS));
            h[2] = bind(cm, "rdma_create_id", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT), errno);
            h[3] = bind(cm, "rdma_destroy_id", intOfId, errno);
            h[4] = bind(cm, "rdma_bind_addr", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), errno);
            h[5] = bind(cm, "rdma_listen", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT), errno);
            h[6] = bind(cm, "rdma_resolve_addr", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT), errno);
            h[7] = bind(cm, "rdma_resolve_route", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT), errno);
            h[8] = bind(cm, "rdma_create_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), errno);
            h[9] = bind(cm, "rdma_destroy_qp", FunctionDescriptor.ofVoid(ADDRESS));
            h[10] = bind(cm, "rdma_connect", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), errno);
            h[11] = bind(cm, "rdma_accept", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), errno);
            h[12] = bind(cm, "rdma_reject", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_BYTE), errno);
            h[13] = bind(cm, "rdma_disconnect", intOfId, errno);
            h[14] = bind(cm, "rdma_get_cm_event", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), errno);
            h[15] = bind(cm, "rdma_ack_cm_event", intOfId, errno);
            h[17] = bind(cm, "rdma_migrate_id", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), errno);
            h[16] = LINKER.downcallHandle(LINKER.defaultLookup().findOrThrow("fcntl"),
                    FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), Linker.Option.firstVariadicArg(2), errno);
        } catch (IllegalArgumentException | NoSuchElementException e) {
            unbound = "librdmacm.so.1 (rdma-core's librdmacm1) could not be bound: " + e.getMessage();
        }
        UNBOUND = unbound;
        CREATE_EVENT_CHANNEL = h[0];
        DESTROY_EVENT_CHANNEL = h[1];
        CREATE_ID = h[2];
        DESTROY_ID = h[3];
        BIND_ADDR = h[4];
        LISTEN = h[5];
        RESOLVE_ADDR = h[6];
        RESOLVE_ROUTE = h[7];
        CREATE_QP = h[8];
        DESTROY_QP = h[9];
        CONNECT = h[10];
        ACCEPT = h[11];
        REJECT = h[12];
        DISCONNECT = h[13];
        GET_CM_EVENT = h[14];
        ACK_CM_EVENT = h[15];
        FCNTL = h[16];
        MIGRATE_ID = h[17];
    }

    private RdmaCm() {
    }

    private static MethodHandle bind(SymbolLookup lib, String name, FunctionDescriptor fd, Linker.Option... options) {
        return LINKER.downcallHandle(lib.findOrThrow(name), fd, options);
    }

    static void requireBound() throws RdmaException {
        Ibv.requireBound();
        if (UNBOUND != null) {
            throw new RdmaException(UNBOUND);
        }
    }

    /** RDMA_CM_EVENT_ADDR_RESOLVED for 0, and so on; the number for one rdma-core 44 does not name. */
    static String eventName(int event) {
        return event >= 0 && event < EVENT_NAMES.length ? EVENT_NAMES[event] : "event " + event;
    }
}
