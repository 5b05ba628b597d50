package org.jwarp.soft;

import org.jwarp.soft.verbs.VerbsProbe;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;

import org.jwarp.ground.TermCode;
import org.jwarp.soft.cq.SoftCompletionQueue;
import org.jwarp.soft.verbs.SoftMemoryRegion;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.ConnectionTerminatedException;
import org.jwarp.verbs.Rdma;
import org.jwarp.verbs.RdmaProvider;
import org.jwarp.verbs.SendOpcode;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.jwarp.verbs.WorkRequestException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Verbs semantics of the embedded provider beyond plain data movement. */
class SoftVerbsSemanticsTest {

    @Test
    @DisplayName("ServiceLoader: 'soft' is registered and is the default provider")
    void serviceLoaderFindsSoft() throws Exception {
        assertTrue(Rdma.factories().stream().anyMatch(f -> f.name().equals("soft") && f.unavailableReason() == null));
        try (RdmaProvider p = Rdma.openDefault()) {
            assertEquals("soft", p.name());
            assertEquals(1, p.devices().size());
            assertEquals(SoftProvider.MAX_IRD_ORD, p.devices().get(0).maxQpRdAtom());
        }
    }

    @Test
    @DisplayName("RFC 5040 §5.1: zero-length Send, Write and Read complete (one segment each, RFC 5041 §5.2)")
    void zeroLengthOperations_5041_5_2() throws Exception {
        try (SoftFixture f = new SoftFixture();
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
            SoftMemoryRegion rb = f.region(f.pd2, 64, Access.LOCAL_WRITE);
            p.responder().queuePair().postRecv(1, rb, 0, 64);
            SendRequest wr = new SendRequest();
            p.initiator().queuePair().postSend(wr.send(10, null, 0, 0));
            p.initiator().queuePair().postSend(wr.write(11, null, 0, 0, 0, 0));
            p.initiator().queuePair().postSend(wr.read(12, null, 0, 0, 0, 0));
            WorkCompletion rc = SoftFixture.one(f.cq2);
            assertEquals(0, rc.byteLength);
            assertEquals(WcOpcode.RECV, rc.opcode);
            for (long id = 10; id <= 12; id++) {
                WorkCompletion wc = SoftFixture.one(f.cq);
                assertEquals(id, wc.wrId, "in posting order");
                assertEquals(WcStatus.SUCCESS, wc.status);
            }
        }
    }

    @Test
    @DisplayName("Unsignalled WRs produce no completion; a later signalled one does")
    void unsignalledWrsAreSilent() throws Exception {
        try (SoftFixture f = new SoftFixture();
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
            SoftMemoryRegion src = f.region(f.pd, 64, Access.LOCAL_WRITE);
            SoftMemoryRegion dst = f.region(f.pd2, 64, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
            SendRequest wr = new SendRequest();
            for (int i = 0; i < 5; i++) {
                wr.write(i, src, 0, 8, dst.address(), dst.rkey());
                wr.signaled = false;
                p.initiator().queuePair().postSend(wr);
            }
            p.initiator().queuePair().postSend(wr.write(99, src, 0, 8, dst.address(), dst.rkey()));
            WorkCompletion wc = SoftFixture.one(f.cq);
            assertEquals(99, wc.wrId);
            assertEquals(0, f.cq.await(SoftFixture.wcs(1), 1, 100, TimeUnit.MILLISECONDS));
        }
    }

    @Test
    @DisplayName("RFC 5040 §6.9: a Send with Solicited Event is flagged on the receive completion")
    void solicitedEventFlagged_5040_6_9() throws Exception {
        try (SoftFixture f = new SoftFixture();
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
            SoftMemoryRegion src = f.region(f.pd, 64, Access.LOCAL_WRITE);
            SoftMemoryRegion rb = f.region(f.pd2, 128, Access.LOCAL_WRITE);
            p.responder().queuePair().postRecv(1, rb, 0, 64);
            p.responder().queuePair().postRecv(2, rb, 64, 64);
            SendRequest wr = new SendRequest().send(5, src, 0, 16);
            wr.solicited = true;
            p.initiator().queuePair().postSend(wr);
            p.initiator().queuePair().postSend(new SendRequest().send(6, src, 0, 16));
            WorkCompletion a = SoftFixture.one(f.cq2);
            WorkCompletion b = SoftFixture.one(f.cq2);
            assertTrue(a.solicited);
            assertFalse(b.solicited);
        }
    }

    @Test
    @DisplayName("RFC 5040 §5.3: Send with Invalidate revokes the named STag; a later Write to it gets TERM 1/1/0")
    void sendWithInvalidate_5040_6_10() throws Exception {
        try (SoftFixture f = new SoftFixture();
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
            SoftMemoryRegion src = f.region(f.pd, 64, Access.LOCAL_WRITE);
            SoftMemoryRegion rb = f.region(f.pd2, 64, Access.LOCAL_WRITE);
            SoftMemoryRegion target = f.region(f.pd2, 64, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
            p.responder().queuePair().postRecv(1, rb, 0, 64);
            SendRequest wr = new SendRequest().send(5, src, 0, 8);
            wr.opcode = SendOpcode.SEND_WITH_INVALIDATE;
            wr.invalidateRkey = target.rkey();
            p.initiator().queuePair().postSend(wr);
            WorkCompletion rc = SoftFixture.one(f.cq2);
            assertTrue(rc.withInvalidate);
            assertEquals(target.rkey(), rc.invalidatedRkey);
            assertFalse(VerbsProbe.isValid(target));
            assertEquals(WcStatus.SUCCESS, SoftFixture.one(f.cq).status);
            p.initiator().queuePair().postSend(new SendRequest().write(6, src, 0, 8, target.address(), target.rkey()));
            for (int i = 0; i < 300 && p.initiator().isOpen(); i++) {
                Thread.sleep(10);
            }
            ConnectionTerminatedException t = assertInstanceOf(ConnectionTerminatedException.class,
                    p.initiator().failure());
            assertEquals(TermCode.DDP_TAGGED_INVALID_STAG, t.term());
        }
    }

    @Test
    @DisplayName("RFC 5041 §8.3: a deregistered region is unreachable at once")
    void deregistrationTakesEffectImmediately_5041_8_3() throws Exception {
        try (SoftFixture f = new SoftFixture();
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
            SoftMemoryRegion sink = f.region(f.pd, 64, Access.LOCAL_WRITE);
            SoftMemoryRegion src = f.region(f.pd2, 64, Access.LOCAL_WRITE, Access.REMOTE_READ);
            long addr = src.address();
            int rkey = src.rkey();
            src.close();
            p.initiator().queuePair().postSend(new SendRequest().read(1, sink, 0, 16, addr, rkey));
            WorkCompletion wc = SoftFixture.one(f.cq);
            assertEquals(WcStatus.REM_ACCESS_ERR, wc.status);
        }
    }

    @Test
    @DisplayName("Post-time checks: other PD, local bounds, read sink without LOCAL_WRITE, heap buffers")
    void postTimeChecks() throws Exception {
        try (SoftFixture f = new SoftFixture();
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
            SoftMemoryRegion other = f.region(f.pd2, 64, Access.LOCAL_WRITE);
            SoftMemoryRegion mine = f.region(f.pd, 64, Access.LOCAL_WRITE);
            SoftMemoryRegion ro = f.pd.register(ByteBuffer.allocateDirect(64), EnumSet.of(Access.REMOTE_READ));
            var qp = p.initiator().queuePair();
            assertThrows(WorkRequestException.class, () -> qp.postSend(new SendRequest().send(1, other, 0, 8)));
            assertThrows(WorkRequestException.class, () -> qp.postSend(new SendRequest().send(1, mine, 60, 8)));
            assertThrows(WorkRequestException.class, () -> qp.postSend(new SendRequest().read(1, ro, 0, 8, 0, 0)));
            assertThrows(WorkRequestException.class, () -> qp.postRecv(1, ro, 0, 8));
            assertThrows(IllegalArgumentException.class,
                    () -> f.pd.register(ByteBuffer.allocate(64), EnumSet.of(Access.LOCAL_WRITE)));
            assertThrows(IllegalArgumentException.class,
                    () -> f.pd.register(ByteBuffer.allocateDirect(64), EnumSet.of(Access.REMOTE_WRITE)));
            assertTrue(p.initiator().isOpen(), "refused posts do not hurt the connection");
        }
    }

    @Test
    @DisplayName("A full send queue refuses the post at maxSendWr; the queued WRs all complete later (flushed)")
    void sendQueueFull() throws Exception {
        try (SoftFixture f = new SoftFixture()) {
            f.listen(2);
            java.util.concurrent.CompletableFuture<org.jwarp.verbs.Connection> acc =
                    java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                        try {
                            return f.listener.next(java.time.Duration.ofSeconds(5))
                                    .accept(f.responderQp(), SoftFixture.p2p().build());
                        } catch (Exception e) {
                            throw new RuntimeException(e);
                        }
                    });
            // the initiator never sends its RTR, so the responder's posts stay queued (RFC 6581 §9.2)
            try (RawInitiator raw = RawInitiator.connect(f.address(), false, true, false, 8, 8)) {
                org.jwarp.verbs.Connection c = acc.get(5, TimeUnit.SECONDS);
                SoftMemoryRegion src = f.region(f.pd2, 64, Access.LOCAL_WRITE);
                for (int i = 0; i < 32; i++) {
                    c.queuePair().postSend(new SendRequest().send(i, src, 0, 8));
                }
                WorkRequestException e = assertThrows(WorkRequestException.class,
                        () -> c.queuePair().postSend(new SendRequest().send(32, src, 0, 8)));
                assertTrue(e.getMessage().contains("full"), e.getMessage());
                c.close();
                WorkCompletion[] a = SoftFixture.wcs(64);
                int n = 0;
                while (n < 32) {
                    int k = f.cq2.await(a, 64, 5, TimeUnit.SECONDS);
                    assertTrue(k > 0);
                    for (int i = 0; i < k; i++) {
                        assertEquals(n + i, a[i].wrId);
                        assertEquals(WcStatus.WR_FLUSH_ERR, a[i].status);
                    }
                    n += k;
                }
            }
        }
    }

    @Test
    @DisplayName("RFC 6581 §9.2: receives posted in beforeConnect catch a Send the responder issues as soon as it accepts")
    void receivesPostedBeforeConnectCatchImmediateSend_6581_9_2() throws Exception {
        for (int round = 0; round < 20; round++) {
            try (SoftFixture f = new SoftFixture()) {
                f.listen(2);
                SoftMemoryRegion ib = f.region(f.pd, 64, Access.LOCAL_WRITE);
                SoftMemoryRegion src = f.region(f.pd2, 64, Access.LOCAL_WRITE);
                java.util.concurrent.CompletableFuture<org.jwarp.verbs.Connection> acc =
                        java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                            try {
                                org.jwarp.verbs.Connection c = f.listener.next(java.time.Duration.ofSeconds(5))
                                        .accept(f.responderQp(), SoftFixture.p2p().build());
                                // the responder sends first, right away: queued until the RTR arrives
                                c.queuePair().postSend(new SendRequest().send(1, src, 0, 32));
                                return c;
                            } catch (Exception e) {
                                throw new RuntimeException(e);
                            }
                        });
                org.jwarp.verbs.Connection c = f.device.connectionManager().connect(f.address(),
                        f.initiatorQp().withBeforeConnect(qp -> qp.postRecv(9, ib, 0, 64)), SoftFixture.p2p().build(),
                        java.time.Duration.ofSeconds(5));
                WorkCompletion rc = SoftFixture.one(f.cq);
                assertEquals(WcStatus.SUCCESS, rc.status, rc.toString());
                assertEquals(9, rc.wrId);
                assertEquals(32, rc.byteLength);
                assertTrue(c.isOpen());
                acc.get(5, TimeUnit.SECONDS).close();
                c.close();
            }
        }
    }

    @Test
    @DisplayName("beforeConnect may post receives but not sends (the QP is not in RTS yet)")
    void beforeConnectRefusesSends() throws Exception {
        try (SoftFixture f = new SoftFixture()) {
            f.listen(2);
            SoftMemoryRegion src = f.region(f.pd, 64, Access.LOCAL_WRITE);
            assertThrows(WorkRequestException.class, () -> f.device.connectionManager().connect(f.address(),
                    f.initiatorQp().withBeforeConnect(qp -> qp.postSend(new SendRequest().send(1, src, 0, 8))),
                    SoftFixture.p2p().build(), java.time.Duration.ofSeconds(5)));
        }
    }

    @Test
    @DisplayName("Completion queue: poll on empty returns 0, await times out with 0, overruns are counted")
    void completionQueueBasics() throws Exception {
        try (SoftFixture f = new SoftFixture()) {
            SoftCompletionQueue cq = f.device.createCompletionQueue(2);
            WorkCompletion[] a = SoftFixture.wcs(4);
            assertEquals(0, cq.poll(a, 4));
            assertEquals(0, cq.await(a, 4, 10, TimeUnit.MILLISECONDS));
            for (int i = 0; i < 3; i++) {
                cq.complete(i, WcStatus.SUCCESS, WcOpcode.SEND, 1, 7, null, 0, 0, false, false);
            }
            assertEquals(1, cq.overruns());
            assertEquals(2, cq.poll(a, 4));
            assertEquals(0, a[0].wrId);
            assertEquals(1, a[1].wrId);
            assertNotEquals(a[0], a[1]);
        }
    }

    @Test
    @DisplayName("Two reactor threads: connections on either reactor work")
    void twoReactors() throws Exception {
        try (SoftFixture f = new SoftFixture(SoftConfig.defaults().withReactors(2))) {
            for (int i = 0; i < 3; i++) {
                try (SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
                    SoftMemoryRegion src = f.region(f.pd, 64, Access.LOCAL_WRITE);
                    SoftMemoryRegion rb = f.region(f.pd2, 64, Access.LOCAL_WRITE);
                    p.responder().queuePair().postRecv(1, rb, 0, 64);
                    p.initiator().queuePair().postSend(new SendRequest().send(2, src, 0, 32));
                    assertEquals(WcStatus.SUCCESS, SoftFixture.one(f.cq).status);
                    assertEquals(32, SoftFixture.one(f.cq2).byteLength);
                }
            }
        }
    }

    @Test
    @DisplayName("RFC 5041 §6.2.1: after a graceful close, posting returns an error on the closing side and, once "
            + "its stream ended, on the peer (no half-closed streams)")
    void postingAfterGracefulTeardownFails_5041_6_2_1() throws Exception {
        try (SoftFixture f = new SoftFixture();
             SoftFixture.Pair p = f.connect(SoftFixture.p2p().build(), SoftFixture.p2p().build())) {
            SoftMemoryRegion src = f.region(f.pd, 64, Access.LOCAL_WRITE);
            SoftMemoryRegion dst = f.region(f.pd2, 64, Access.LOCAL_WRITE);
            p.initiator().close();
            assertThrows(WorkRequestException.class,
                    () -> p.initiator().queuePair().postSend(new SendRequest().send(1, src, 0, 8)));
            assertThrows(WorkRequestException.class, () -> p.initiator().queuePair().postRecv(2, src, 0, 8));
            for (int i = 0; i < 500 && p.responder().isOpen(); i++) {
                Thread.sleep(10);
            }
            assertFalse(p.responder().isOpen(), "the peer's TCP FIN ends the stream: no half-close (RFC 5041 §6.2.1 SHOULD)");
            assertThrows(WorkRequestException.class,
                    () -> p.responder().queuePair().postSend(new SendRequest().send(3, dst, 0, 8)));
            assertThrows(WorkRequestException.class, () -> p.responder().queuePair().postRecv(4, dst, 0, 8));
        }
    }
}
