package org.jwarp.interop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.jwarp.ground.RtrType;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.CompletionQueue;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionInfo;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.ConnectionRequest;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.ProtectionDomain;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.Rdma;
import org.jwarp.verbs.RdmaProvider;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Interop through the public {@code org.jwarp.verbs} API: the embedded soft provider ("soft") in
 * both roles against the kernel's siw and the C peer's "basic" script (Send/Recv, RDMA Write and
 * RDMA Read, RFC 5040 §5; connection setup per RFC 5044 §7.1 / RFC 6581).
 */
@Tag("guest")
@Tag("device")
class SoftProviderSiwTest {
    static final Duration TIMEOUT = Duration.ofSeconds(60);
    static final int AREA = 8192;
    static final int MSG = BasicExchange.MSG_LEN;

    RdmaProvider provider;
    Device device;
    ProtectionDomain pd;
    CompletionQueue cq;

    @BeforeAll
    static void guest() {
        Guest.require();
    }

    @BeforeEach
    void open() throws Exception {
        provider = Rdma.open("soft");
        device = provider.open(InetAddress.getByName(Guest.siwIp()));
        pd = device.allocateProtectionDomain();
        cq = device.createCompletionQueue(64);
    }

    @AfterEach
    void close() {
        if (provider != null) {
            provider.close();
        }
    }

    @Test
    @DisplayName("soft provider initiator -> siw responder: connect (Write RTR), send/recv, RDMA Write, RDMA Read, "
            + "CRC requested (RFC 5040 §5, RFC 6581 §9)")
    void softInitiator_siwResponder() throws Exception {
        int port = Guest.port();
        byte[] pdata = "soft-initiator".getBytes();
        try (SiwPeer siw = SiwPeer.start("server", "-a", Guest.siwIp(), "-p", "" + port, "-s", "basic", "-W", "-t", "50")) {
            siw.awaitLine("listening", TIMEOUT);
            ConnectionParameters params = ConnectionParameters.builder().ird(4).ord(4).peerToPeer(true)
                    .rtrTypes(EnumSet.of(RtrType.WRITE, RtrType.READ)).crc(true).privateData(pdata).build();
            Buffers b = new Buffers();
            Connection c = device.connectionManager().connect(new InetSocketAddress(Guest.siwIp(), port),
                    QueuePairConfig.of(pd, cq, 32).withBeforeConnect(b::postReceives), params, TIMEOUT);
            ConnectionInfo info = c.info();
            System.out.println("interop: soft provider connected to siw: " + info);
            assertEquals(2, info.mpaRevision(), "MPA Rev 2 (RFC 6581)");
            assertTrue(info.peerToPeer(), "P2P echoed by siw");
            assertEquals(RtrType.WRITE, info.rtr(), "siw picks the Write RTR");
            assertTrue(info.crc(), "siw echoes C=1, so CRC is on");
            assertTrue(info.ord() <= info.peerIrd(), "our ORD ≤ siw's IRD (RFC 6581 §9.1)");
            String req = siw.awaitLine("event=RDMA_CM_EVENT_CONNECT_REQUEST", TIMEOUT);
            assertEquals(HexFormat.of().formatHex(pdata), SiwPeer.fields(req).get("private_data"), "private data at siw");
            runBasic(siw, c, true, b);
            assertEquals(0, siw.waitExit(TIMEOUT), siw::transcript);
            assertNotNull(siw.line("check=rdma_read_from_peer bytes=8192 ok"), siw::transcript);
            assertNotNull(siw.line("check=rdma_write_from_peer bytes=8192 ok"), siw::transcript);
            c.close();
        }
    }

    @Test
    @DisplayName("siw initiator -> soft provider listener: accept (client-server, siw sends first), send/recv, "
            + "RDMA Write, RDMA Read (RFC 5040 §5, RFC 5044 §7.1.2)")
    void siwInitiator_softResponder() throws Exception {
        int port = Guest.port();
        byte[] siwPd = "siw-initiator".getBytes();
        try (Listener l = device.connectionManager().listen(new InetSocketAddress(Guest.siwIp(), port), 4);
                SiwPeer siw = SiwPeer.start("client", "-a", Guest.siwIp(), "-p", "" + port, "-s", "basic", "-r", "5",
                        "-i", "3", "-d", HexFormat.of().formatHex(siwPd), "-t", "50")) {
            ConnectionRequest r = l.next(TIMEOUT);
            assertNotNull(r, "siw's connection request reached the soft listener");
            System.out.println("interop: soft provider got siw's request: peerIrd=" + r.peerIrd() + " peerOrd="
                    + r.peerOrd() + " p2p=" + r.peerToPeer() + " rtr=" + r.offeredRtrTypes());
            assertEquals(5, r.peerIrd(), "siw's IRD = rdma_connect responder_resources");
            assertEquals(3, r.peerOrd(), "siw's ORD = rdma_connect initiator_depth");
            assertArrayEquals(siwPd, r.privateData(), "siw's private data");
            // siw sends its INFO as soon as it sees ESTABLISHED: the receives must be posted before our
            // Reply goes out (QueuePairConfig.beforeConnect), or the Send finds no buffer (RFC 5041 §7.2).
            Buffers b = new Buffers();
            Connection c = r.accept(QueuePairConfig.of(pd, cq, 32).withBeforeConnect(b::postReceives),
                    ConnectionParameters.builder().ird(4).ord(2).crc(false).privateData("soft-accept".getBytes()).build());
            System.out.println("interop: soft provider accepted siw: " + c.info());
            runBasic(siw, c, false, b);
            assertEquals(0, siw.waitExit(TIMEOUT), siw::transcript);
            String est = siw.line("event=RDMA_CM_EVENT_ESTABLISHED");
            assertEquals(HexFormat.of().formatHex("soft-accept".getBytes()), SiwPeer.fields(est).get("private_data"));
            c.close();
        }
    }

    /** The Java half of siw_peer's "basic" script over the verbs API (mirror of {@link BasicExchange}). */
    /** The registered areas of one exchange; receives are posted by the QP's beforeConnect hook. */
    private final class Buffers {
        final MemoryRegion mr;
        final MemoryRegion msgs;

        Buffers() throws Exception {
            Set<Access> all = EnumSet.allOf(Access.class);
            mr = pd.register(ByteBuffer.allocateDirect(4 * AREA), all);
            msgs = pd.register(ByteBuffer.allocateDirect(12 * MSG), all);
            BasicExchange.fill(mr.buffer(), 0, 3, AREA);
            BasicExchange.fill(mr.buffer(), 3 * AREA, 2, AREA);
        }

        void postReceives(org.jwarp.verbs.QueuePair qp) throws org.jwarp.verbs.RdmaException {
            for (int i = 0; i < 8; i++) {
                qp.postRecv(i, msgs, i * MSG, MSG);
            }
        }
    }

    /** Runs the exchange; a failure carries siw's transcript, so the other side's view is in the report. */
    private void runBasic(SiwPeer siw, Connection c, boolean sendFirst, Buffers b) throws Exception {
        try {
            exchange(c, sendFirst, b);
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "\n--- siw_peer transcript ---\n" + siw.transcript(), e);
        }
    }

    private void exchange(Connection c, boolean sendFirst, Buffers b) throws Exception {
        var qp = c.queuePair();
        MemoryRegion mr = b.mr;
        MemoryRegion msgs = b.msgs;
        ByteBuffer buf = mr.buffer();
        Completions comp = new Completions(cq);
        // Receives were posted before this side's MPA frame went out, so a peer that sends on
        // ESTABLISHED finds them. As client-server responder (siw's request has no A) we must not
        // send first (RFC 5044 §7.1.2).
        int slot = 8;
        if (sendFirst) {
            send(qp, comp, msgs, mr, slot++, BasicExchange.INFO, 0);
        }
        int off = comp.message(msgs, BasicExchange.INFO);
        if (!sendFirst) {
            send(qp, comp, msgs, mr, slot++, BasicExchange.INFO, 0);
        }
        int peerRkey = msgs.buffer().getInt(off + 8);
        long peerAddr = msgs.buffer().getLong(off + 16);
        SendRequest w = new SendRequest().write(50, mr, 3 * AREA, AREA, peerAddr + AREA, peerRkey);
        qp.postSend(w);
        qp.postSend(new SendRequest().read(51, mr, 2 * AREA, AREA, peerAddr, peerRkey));
        comp.awaitSend(51);
        int readBad = BasicExchange.verify(buf, 2 * AREA, 1, AREA);
        send(qp, comp, msgs, mr, slot++, BasicExchange.CHECK, 0);
        comp.message(msgs, BasicExchange.WROTE);
        int writeBad = BasicExchange.verify(buf, AREA, 4, AREA);
        int res = comp.message(msgs, BasicExchange.RESULT);
        int siwStatus = msgs.buffer().getInt(res + 24);
        // siw disconnects as soon as it has our RESULT, so the remaining receives may flush in the
        // same poll batch as this Send's completion: that is the expected end, not an error.
        comp.peerMayClose = true;
        send(qp, comp, msgs, mr, slot, BasicExchange.RESULT, (readBad >= 0 ? 1 : 0) + (writeBad >= 0 ? 1 : 0));
        assertEquals(-1, readBad, "RDMA Read from siw: first mismatching byte");
        assertEquals(-1, writeBad, "RDMA Write from siw: first mismatching byte");
        assertEquals(0, siwStatus, "siw's verification of our Write and its Read");
    }

    private static void send(org.jwarp.verbs.QueuePair qp, Completions comp, MemoryRegion msgs, MemoryRegion mr,
            int slot, int type, int status) throws Exception {
        int off = slot * MSG;
        msgs.buffer().putInt(off, BasicExchange.MAGIC).putInt(off + 4, type).putInt(off + 8, mr.rkey())
                .putInt(off + 12, AREA).putLong(off + 16, mr.address()).putInt(off + 24, status).putInt(off + 28, 0);
        long id = 100 + type;
        qp.postSend(new SendRequest().send(id, msgs, off, MSG));
        comp.awaitSend(id);
    }

    /** Sorts completions: receives in order, send-queue completions by wrId; any error fails. */
    private static final class Completions {
        final CompletionQueue cq;
        final WorkCompletion[] wcs = new WorkCompletion[8];
        final Deque<long[]> recvs = new ArrayDeque<>();
        final Set<Long> sends = new HashSet<>();
        /** Set for the last exchange: flushed receives are then the peer's orderly disconnect. */
        boolean peerMayClose;

        Completions(CompletionQueue cq) {
            this.cq = cq;
            for (int i = 0; i < wcs.length; i++) {
                wcs[i] = new WorkCompletion();
            }
        }

        void pollUntil(String what, java.util.function.BooleanSupplier done) throws InterruptedException {
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (!done.getAsBoolean()) {
                if (System.nanoTime() > deadline) {
                    fail("timed out waiting for " + what);
                }
                int n = cq.await(wcs, wcs.length, 100, TimeUnit.MILLISECONDS);
                for (int i = 0; i < n; i++) {
                    WorkCompletion wc = wcs[i];
                    if (!wc.isSuccess()) {
                        if (peerMayClose && wc.opcode == WcOpcode.RECV && wc.status == WcStatus.WR_FLUSH_ERR) {
                            continue;
                        }
                        fail("completion error while waiting for " + what + ": " + wc);
                    }
                    if (wc.opcode == WcOpcode.RECV) {
                        recvs.add(new long[] {wc.wrId, wc.byteLength});
                    } else {
                        sends.add(wc.wrId);
                    }
                }
            }
        }

        void awaitSend(long wrId) throws InterruptedException {
            pollUntil("send completion " + wrId, () -> sends.remove(wrId));
        }

        int message(MemoryRegion msgs, int type) throws InterruptedException {
            pollUntil("message type " + type, () -> !recvs.isEmpty());
            long[] r = recvs.poll();
            assertEquals(MSG, (int) r[1], "Send length");
            int off = (int) r[0] * MSG;
            assertEquals(BasicExchange.MAGIC, msgs.buffer().getInt(off), "magic");
            assertEquals(type, msgs.buffer().getInt(off + 4), "message type");
            return off;
        }
    }
}
