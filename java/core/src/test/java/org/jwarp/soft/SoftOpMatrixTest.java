package org.jwarp.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.jwarp.soft.cq.SoftCompletionQueue;
import org.jwarp.soft.verbs.SoftMemoryRegion;
import org.jwarp.soft.verbs.SoftProtectionDomain;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.ground.RtrType;
import org.jwarp.verbs.SendOpcode;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every operation (Send, RDMA Write, RDMA Read; RFC 5040 §5) in every setup model (peer-to-peer
 * with each RTR type, RFC 6581 §9.2, and client-server, RFC 5044 §7.1.2), with either side
 * issuing the first operation. Payloads span several FPDUs so segmentation is exercised.
 */
class SoftOpMatrixTest {
    private static final int SIZE = 40_000;

    static Stream<Arguments> matrix() {
        List<Arguments> out = new ArrayList<>();
        RtrType[] modes = {RtrType.WRITE, RtrType.READ, RtrType.SEND, null};
        for (RtrType mode : modes) {
            for (SendOpcode op : new SendOpcode[] {SendOpcode.SEND, SendOpcode.RDMA_WRITE, SendOpcode.RDMA_READ}) {
                for (boolean responderFirst : new boolean[] {false, true}) {
                    out.add(Arguments.of(mode == null ? "client-server" : "p2p-" + mode.name().toLowerCase(), mode, op,
                            responderFirst));
                }
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "RFC 6581 §9.2 {0}: {2}, responder first = {3}")
    @MethodSource("matrix")
    void opWorksInEveryModel_6581_9_2(String name, RtrType mode, SendOpcode op, boolean responderFirst) throws Exception {
        ConnectionParameters ip = mode == null ? SoftFixture.clientServer().build()
                : SoftFixture.p2p().rtrTypes(mode).build();
        ConnectionParameters rp = mode == null ? SoftFixture.clientServer().build()
                : SoftFixture.p2p().rtrTypes(RtrType.SEND, RtrType.WRITE, RtrType.READ).build();
        STASH.clear();
        try (SoftFixture f = new SoftFixture(); SoftFixture.Pair p = f.connect(ip, rp)) {
            assertEquals(mode, p.initiator().info().rtr());
            assertEquals(mode, p.responder().info().rtr());
            End ini = new End(f, p.initiator(), f.pd, f.cq);
            End res = new End(f, p.responder(), f.pd2, f.cq2);
            if (responderFirst && mode == null) {
                // RFC 5044 §7.1.2: the responder's first FPDU waits for the initiator's first FPDU
                Pending held = start(res, ini, op, 1);
                transfer(ini, res, op, 2);
                held.finish();
            } else if (responderFirst) {
                transfer(res, ini, op, 1);
                transfer(ini, res, op, 2);
            } else {
                transfer(ini, res, op, 1);
                transfer(res, ini, op, 2);
            }
            assertTrue(STASH.values().stream().allMatch(List::isEmpty), "no unexpected completions: " + STASH);
            assertEquals(0, f.cq.poll(SoftFixture.wcs(4), 4) + f.cq2.poll(SoftFixture.wcs(4), 4), "no extra completions");
        }
    }

    /** One side of the connection with a source and a target region. */
    static final class End {
        final Connection c;
        final SoftCompletionQueue cq;
        final SoftMemoryRegion local;
        final SoftMemoryRegion exposed;
        final SoftMemoryRegion inbox;

        End(SoftFixture f, Connection c, SoftProtectionDomain pd, SoftCompletionQueue cq) throws Exception {
            this.c = c;
            this.cq = cq;
            local = f.region(pd, SIZE, Access.LOCAL_WRITE);
            exposed = f.region(pd, SIZE, Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);
            inbox = f.region(pd, SIZE, Access.LOCAL_WRITE);
        }
    }

    static void fill(SoftMemoryRegion r, int seed) {
        ByteBuffer b = r.buffer();
        for (int i = 0; i < b.capacity(); i++) {
            b.put(i, (byte) (i * 31 + seed));
        }
    }

    static void check(SoftMemoryRegion r, int seed, int len) {
        ByteBuffer b = r.buffer();
        for (int i = 0; i < len; i++) {
            if (b.get(i) != (byte) (i * 31 + seed)) {
                throw new AssertionError("byte " + i + " differs: " + b.get(i) + " != " + (byte) (i * 31 + seed));
            }
        }
    }

    /** Posted work whose completions are still to be checked. */
    interface Pending {
        void finish() throws Exception;
    }

    /** {@code a} performs {@code op} towards {@code b}; data and completions are checked. */
    static void transfer(End a, End b, SendOpcode op, int seed) throws Exception {
        start(a, b, op, seed).finish();
    }

    /** Posts {@code op} from {@code a} towards {@code b}; {@link Pending#finish()} checks the outcome. */
    static Pending start(End a, End b, SendOpcode op, int seed) throws Exception {
        SendRequest wr = new SendRequest();
        switch (op) {
            case SEND -> {
                fill(a.local, seed);
                b.c.queuePair().postRecv(100 + seed, b.inbox, 0, SIZE);
                a.c.queuePair().postSend(wr.send(seed, a.local, 0, SIZE));
                return () -> {
                    expect(a.cq, seed, WcOpcode.SEND, SIZE);
                    expect(b.cq, 100 + seed, WcOpcode.RECV, SIZE);
                    check(b.inbox, seed, SIZE);
                };
            }
            case RDMA_WRITE -> {
                fill(a.local, seed);
                // a Write has no remote completion: a Send follows it and is delivered after it
                b.c.queuePair().postRecv(200 + seed, b.inbox, 0, 16);
                a.c.queuePair().postSend(wr.write(seed, a.local, 0, SIZE, b.exposed.address(), b.exposed.rkey()));
                a.c.queuePair().postSend(wr.send(300 + seed, null, 0, 0));
                return () -> {
                    expect(a.cq, seed, WcOpcode.RDMA_WRITE, SIZE);
                    expect(a.cq, 300 + seed, WcOpcode.SEND, 0);
                    expect(b.cq, 200 + seed, WcOpcode.RECV, 0);
                    check(b.exposed, seed, SIZE);
                };
            }
            case RDMA_READ -> {
                fill(b.exposed, seed);
                a.c.queuePair().postSend(wr.read(seed, a.local, 0, SIZE, b.exposed.address(), b.exposed.rkey()));
                return () -> {
                    expect(a.cq, seed, WcOpcode.RDMA_READ, SIZE);
                    check(a.local, seed, SIZE);
                };
            }
            default -> throw new IllegalArgumentException(op.name());
        }
    }

    /** Completions reaped while looking for another one (the interleaved case shares CQs). */
    private static final java.util.Map<SoftCompletionQueue, List<WorkCompletion>> STASH = new java.util.HashMap<>();

    static void expect(SoftCompletionQueue cq, long wrId, WcOpcode op, int len) throws InterruptedException {
        List<WorkCompletion> stash = STASH.computeIfAbsent(cq, k -> new ArrayList<>());
        WorkCompletion wc = null;
        for (WorkCompletion w : stash) {
            if (w.wrId == wrId) {
                wc = w;
            }
        }
        if (wc != null) {
            stash.remove(wc);
        }
        while (wc == null) {
            WorkCompletion w = SoftFixture.one(cq);
            if (w.wrId == wrId) {
                wc = w;
            } else {
                stash.add(w);
            }
        }
        assertEquals(WcStatus.SUCCESS, wc.status, wc.toString());
        assertEquals(wrId, wc.wrId, wc.toString());
        assertEquals(op, wc.opcode, wc.toString());
        assertEquals(len, wc.byteLength, wc.toString());
        assertTrue(wc.qpNum > 0);
    }
}
