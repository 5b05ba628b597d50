package org.jwarp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jwarp.verbs.CompletionQueue;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.ProtectionDomain;
import org.junit.jupiter.api.Test;

/**
 * {@link RpingSession#close()} frees every resource of the session even when one close throws:
 * a disconnect that fails must not leave the registrations, the CQ and the PD open. The verbs
 * objects are recording stand-ins whose {@code close()} can be made to fail.
 */
class RpingSessionCloseTest {
    /** Names of the resources closed, in order. */
    final List<String> closed = new ArrayList<>();
    /** Names whose close throws (after being recorded). */
    Set<String> failing = Set.of();
    /** The buffers of the registered regions, by name. */
    final Map<String, ByteBuffer> buffers = new HashMap<>();

    /** A verbs object named {@code name}; close() records, and throws when the name is failing. */
    <T> T fake(Class<T> type, String name) {
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (self, m, args) -> {
            switch (m.getName()) {
                case "close" -> {
                    closed.add(name);
                    if (failing.contains(name)) {
                        throw new IllegalStateException(name + " close failed");
                    }
                    return null;
                }
                case "allocateProtectionDomain" -> {
                    return fake(ProtectionDomain.class, "pd");
                }
                case "createCompletionQueue" -> {
                    return fake(CompletionQueue.class, "cq");
                }
                case "register" -> {
                    // RpingSession.open registers ctl, then data, then (client) sink
                    String region = List.of("ctl", "data", "sink").get(buffers.size());
                    buffers.put(region, (ByteBuffer) args[0]);
                    return fake(MemoryRegion.class, region);
                }
                case "buffer" -> {
                    return buffers.get(name).duplicate();
                }
                case "toString" -> {
                    return name;
                }
                case "hashCode" -> {
                    return System.identityHashCode(self);
                }
                case "equals" -> {
                    return self == args[0];
                }
                default -> {
                    Class<?> r = m.getReturnType();
                    return r == int.class ? 0 : r == long.class ? 0L : r == boolean.class ? Boolean.FALSE : null;
                }
            }
        }));
    }

    RpingSession clientSession() throws Exception {
        Device dev = fake(Device.class, "device");
        RpingSession s = RpingSession.open(dev, false, 64, 1_000_000_000L, false, false, false,
                new PrintWriter(new StringWriter()));
        s.attach(fake(Connection.class, "conn"));
        return s;
    }

    @Test
    void closeFreesRegionsCqAndPdWhenTheDisconnectFails() throws Exception {
        RpingSession s = clientSession();
        failing = Set.of("conn");
        IllegalStateException e = assertThrows(IllegalStateException.class, s::close);
        assertEquals("conn close failed", e.getMessage());
        assertEquals(List.of("conn", "sink", "data", "ctl", "cq", "pd"), closed);
    }

    @Test
    void everyCloseIsTriedAndTheFirstFailureCarriesTheLaterOnes() throws Exception {
        RpingSession s = clientSession();
        failing = Set.of("conn", "data", "cq");
        IllegalStateException e = assertThrows(IllegalStateException.class, s::close);
        assertEquals("conn close failed", e.getMessage());
        assertEquals(2, e.getSuppressed().length);
        assertEquals("data close failed", e.getSuppressed()[0].getMessage());
        assertEquals("cq close failed", e.getSuppressed()[1].getMessage());
        assertEquals(List.of("conn", "sink", "data", "ctl", "cq", "pd"), closed);
    }

    @Test
    void cleanCloseClosesEachOnceInOrder() throws Exception {
        RpingSession s = clientSession();
        s.close();
        assertEquals(List.of("conn", "sink", "data", "ctl", "cq", "pd"), closed);
    }
}
