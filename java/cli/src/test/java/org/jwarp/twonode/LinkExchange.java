package org.jwarp.twonode;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
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
import org.jwarp.verbs.QueuePair;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.Rdma;
import org.jwarp.verbs.RdmaProvider;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;

/**
 * One bulk exchange across the two-node link through the public verbs API, on either provider:
 * a Send of {@code area} bytes each way, then RDMA Read and RDMA Write of {@code area} bytes
 * (RFC 5040 §5.1/§5.2: untagged Send, tagged Write, Read Request/Response), every byte verified.
 * It speaks the protocol of {@code native/interop/siw_peer.c}'s "basic" script with {@code -B}, so
 * it runs against the kernel's siw through that peer, or against itself on the other node.
 *
 * <p>Buffer: 6 areas, [0] read area (the peer reads it), [1] write area (the peer writes it),
 * [2] read sink, [3] write source, [4] bulk Send sink, [5] bulk Send source. {@link Role#MIRROR}
 * is the Java half siw_peer expects (patterns 3, 2, 6 out; 1, 4, 5 expected);
 * {@link Role#PEER} plays siw_peer itself (1, 4, 5 out; 3, 2, 6 expected), for Java against Java.
 */
final class LinkExchange {
    static final Duration TIMEOUT = Duration.ofSeconds(120);
    static final int MSG = 32;
    static final int MAGIC = 0x4a574950;
    static final int INFO = 1;
    static final int WROTE = 2;
    static final int CHECK = 3;
    static final int RESULT = 4;
    static final long BULK_RECV = 60;
    static final long BULK_SEND = 5;
    /**
     * Test-only fault injection, never set by CI ({@code scripts/two-node-tests --inject-link-stall
     * PROVIDER}): the first bulk Send posted on PROVIDER in this JVM takes this node's link down right
     * after the post (the kernel has usually sent the whole Send by then), so the node goes silent on
     * that link in the middle of the exchange, as node 2 did on 2026-12-07.
     */
    static final String INJECT_LINK_STALL = System.getProperty("jwarp.twonode.injectLinkStall", "");
    private static final AtomicBoolean INJECTED = new AtomicBoolean();
    /** Set by {@link LinkWatch} once the link is dead: the waits of a running exchange end with it. */
    static volatile String abort;

    /** Which half of siw_peer's script this side plays. */
    enum Role {
        /** The Java half: sends CHECK after its Write and Read, waits for WROTE; RESULT last. */
        MIRROR(3, 2, 6, 1, 4, 5),
        /** siw_peer's own half: sends WROTE after its Write, waits for CHECK; RESULT first. */
        PEER(1, 4, 5, 3, 2, 6);

        final int readArea;
        final int writeSource;
        final int bulkSource;
        final int expectRead;
        final int expectWrite;
        final int expectBulk;

        Role(int readArea, int writeSource, int bulkSource, int expectRead, int expectWrite, int expectBulk) {
            this.readArea = readArea;
            this.writeSource = writeSource;
            this.bulkSource = bulkSource;
            this.expectRead = expectRead;
            this.expectWrite = expectWrite;
            this.expectBulk = expectBulk;
        }
    }

    /** What one exchange verified. */
    record Result(String info, int sendBytes, int readBytes, int writeBytes, int peerStatus, long millis) {
        @Override
        public String toString() {
            return "send=" + sendBytes + "B read=" + readBytes + "B write=" + writeBytes + "B verified, peer status "
                    + peerStatus + ", " + millis + " ms; " + info;
        }
    }

    private final RdmaProvider provider;
    private final ProtectionDomain pd;
    private final CompletionQueue cq;
    private final MemoryRegion mr;
    private final MemoryRegion msgs;
    private final Device device;
    private final int area;
    private final Role role;
    private final Consumer<String> log;
    private final String providerName;
    private final String localIp;

    private LinkExchange(String providerName, String localIp, int area, Role role, Consumer<String> log)
            throws Exception {
        this.providerName = providerName;
        this.localIp = localIp;
        this.provider = Rdma.open(providerName);
        try {
            this.device = provider.open(InetAddress.getByName(localIp));
            this.pd = device.allocateProtectionDomain();
            this.cq = device.createCompletionQueue(64);
            Set<Access> all = EnumSet.allOf(Access.class);
            this.mr = pd.register(ByteBuffer.allocateDirect(6 * area), all);
            this.msgs = pd.register(ByteBuffer.allocateDirect(12 * MSG), all);
        } catch (Exception e) {
            provider.close();
            throw e;
        }
        this.area = area;
        this.role = role;
        this.log = log;
        fill(mr.buffer(), 0, role.readArea, area);
        fill(mr.buffer(), 3 * area, role.writeSource, area);
        fill(mr.buffer(), 5 * area, role.bulkSource, area);
    }

    /** Connects from {@code localIp} to {@code remote} and runs the exchange; the initiator sends first. */
    static Result connect(String providerName, String localIp, InetSocketAddress remote, Role role, int area,
            Consumer<String> log) throws Exception {
        LinkExchange x = new LinkExchange(providerName, localIp, area, role, log);
        try {
            long t0 = System.nanoTime();
            ConnectionParameters params = ConnectionParameters.builder().ird(4).ord(4).peerToPeer(true)
                    .rtrTypes(EnumSet.of(RtrType.WRITE, RtrType.READ)).crc(true).build();
            Connection c = x.device.connectionManager().connect(remote, x.qpConfig(), params, TIMEOUT);
            try {
                log.accept("connected " + providerName + ": " + describe(c.info()));
                return x.run(c, true, t0);
            } finally {
                c.close();
            }
        } finally {
            x.provider.close();
        }
    }

    /**
     * Listens on {@code localIp:port}, says {@code listening} through {@code log}, accepts one
     * connection and runs the exchange; as client-server responder it never sends first (RFC 5044 §7.1.2).
     */
    static Result accept(String providerName, String localIp, int port, Role role, int area, Consumer<String> log)
            throws Exception {
        LinkExchange x = new LinkExchange(providerName, localIp, area, role, log);
        try (Listener l = x.device.connectionManager().listen(new InetSocketAddress(localIp, port), 2)) {
            log.accept("listening " + providerName + " " + l.localAddress());
            ConnectionRequest r = l.next(TIMEOUT);
            if (r == null) {
                throw new AssertionError("no connection request within " + TIMEOUT);
            }
            long t0 = System.nanoTime();
            Connection c = r.accept(x.qpConfig(), ConnectionParameters.builder().ird(4).ord(4).crc(true).build());
            try {
                log.accept("accepted " + providerName + ": " + describe(c.info()));
                return x.run(c, false, t0);
            } finally {
                c.close();
            }
        } finally {
            x.provider.close();
        }
    }

    /** The bulk receive first (the peer's first Send is the bulk one), then the message receives. */
    private QueuePairConfig qpConfig() {
        return QueuePairConfig.of(pd, cq, 32).withBeforeConnect(qp -> {
            qp.postRecv(BULK_RECV, mr, 4L * area, area);
            for (int i = 0; i < 8; i++) {
                qp.postRecv(i, msgs, (long) i * MSG, MSG);
            }
        });
    }

    private Result run(Connection c, boolean sendFirst, long t0) throws Exception {
        QueuePair qp = c.queuePair();
        ByteBuffer buf = mr.buffer();
        Completions comp = new Completions();
        // 0. One Send of the whole area each way.
        if (sendFirst) {
            bulkSend(qp, comp);
        }
        int bulkLen = comp.bulk();
        if (!sendFirst) {
            bulkSend(qp, comp);
        }
        check(bulkLen == area, "bulk Send length " + bulkLen + " != " + area);
        checkPattern(buf, 4 * area, role.expectBulk, "Send from the peer");
        log.accept("check=send_from_peer bytes=" + bulkLen + " ok");
        // 1. INFO both ways.
        int slot = 8;
        if (sendFirst) {
            message(qp, comp, slot++, INFO, 0);
        }
        int off = comp.message(INFO);
        if (!sendFirst) {
            message(qp, comp, slot++, INFO, 0);
        }
        int peerRkey = msgs.buffer().getInt(off + 8);
        int peerLen = msgs.buffer().getInt(off + 12);
        long peerAddr = msgs.buffer().getLong(off + 16);
        check(peerLen == area, "peer area " + peerLen + " != " + area);
        int peerStatus;
        if (role == Role.MIRROR) {
            qp.postSend(new SendRequest().write(50, mr, 3L * area, area, peerAddr + area, peerRkey));
            qp.postSend(new SendRequest().read(51, mr, 2L * area, area, peerAddr, peerRkey));
            comp.awaitSend(51);
            checkPattern(buf, 2 * area, role.expectRead, "RDMA Read from the peer");
            log.accept("check=rdma_read_from_peer bytes=" + area + " ok");
            message(qp, comp, slot++, CHECK, 0);
            comp.message(WROTE);
            checkPattern(buf, area, role.expectWrite, "RDMA Write from the peer");
            log.accept("check=rdma_write_from_peer bytes=" + area + " ok");
            int res = comp.message(RESULT);
            peerStatus = msgs.buffer().getInt(res + 24);
            // The peer disconnects once it has our RESULT: flushed receives are the orderly end then.
            comp.peerMayClose = true;
            message(qp, comp, slot, RESULT, 0);
            // The last sender closes last: a Send completion only says the FPDU reached our socket, and a
            // close while it is still queued there can reset the stream before the peer has read it.
            comp.pollUntil("the peer's disconnect after our RESULT", () -> comp.flushed || !c.isOpen());
        } else {
            qp.postSend(new SendRequest().read(51, mr, 2L * area, area, peerAddr, peerRkey));
            comp.awaitSend(51);
            checkPattern(buf, 2 * area, role.expectRead, "RDMA Read from the peer");
            log.accept("check=rdma_read_from_peer bytes=" + area + " ok");
            qp.postSend(new SendRequest().write(50, mr, 3L * area, area, peerAddr + area, peerRkey));
            comp.awaitSend(50);
            message(qp, comp, slot++, WROTE, 0);
            comp.message(CHECK);
            checkPattern(buf, area, role.expectWrite, "RDMA Write from the peer");
            log.accept("check=rdma_write_from_peer bytes=" + area + " ok");
            message(qp, comp, slot, RESULT, 0);
            int res = comp.message(RESULT);
            peerStatus = msgs.buffer().getInt(res + 24);
        }
        check(peerStatus == 0, "the peer's verification of our Send/Write and its Read failed: status " + peerStatus);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        return new Result(describe(c.info()), bulkLen, area, area, peerStatus, ms);
    }

    /**
     * One role from its words, as {@link Node2Agent}'s {@code JAVA} command and {@link #main} take them:
     * {@code accept provider localIp port role area} or {@code connect provider localIp remoteIp port role area}.
     */
    static Result role(String[] a, Consumer<String> log) throws Exception {
        return switch (a[0]) {
            case "accept" -> accept(a[1], a[2], Integer.parseInt(a[3]), Role.valueOf(a[4]), Integer.parseInt(a[5]), log);
            case "connect" -> connect(a[1], a[2], new InetSocketAddress(a[3], Integer.parseInt(a[4])),
                    Role.valueOf(a[5]), Integer.parseInt(a[6]), log);
            default -> throw new IllegalArgumentException("unknown role " + a[0]);
        };
    }

    /**
     * One role in a JVM of its own (the {@code ffm} provider's ends run on a JDK 25, the suite's JVMs
     * on 17): prints every log line, then {@code result ...} and exits 0, or {@code error ...} and exits 1.
     */
    public static void main(String[] args) {
        int rc = 0;
        try {
            System.out.println("result " + role(args, System.out::println));
        } catch (Throwable e) {
            System.out.println("error " + e);
            e.printStackTrace(System.out);
            rc = 1;
        }
        System.out.flush();
        System.exit(rc);
    }

    /** The negotiated settings, for the report. */
    static String describe(ConnectionInfo i) {
        return i.local() + " <-> " + i.remote() + " mpa rev " + i.mpaRevision() + (i.peerToPeer() ? ", p2p rtr " + i.rtr()
                : ", client-server") + ", crc " + (i.crc() ? "on" : "off") + ", ird " + i.ird() + " ord " + i.ord()
                + " (peer ird " + i.peerIrd() + " ord " + i.peerOrd() + ")";
    }

    private void bulkSend(QueuePair qp, Completions comp) throws Exception {
        qp.postSend(new SendRequest().send(BULK_SEND, mr, 5L * area, area));
        if (INJECT_LINK_STALL.equals(providerName) && INJECTED.compareAndSet(false, true)) {
            String dev = NetworkInterface.getByInetAddress(InetAddress.getByName(localIp)).getName();
            System.out.println("INJECTED FAULT (test only, jwarp.twonode.injectLinkStall): ip link set dev " + dev
                    + " down after posting the bulk Send");
            int rc = new ProcessBuilder("ip", "link", "set", "dev", dev, "down").inheritIO().start().waitFor();
            check(rc == 0, "the injected fault failed: ip link set dev " + dev + " down exited " + rc);
        }
        comp.awaitSend(BULK_SEND);
    }

    private void message(QueuePair qp, Completions comp, int slot, int type, int status) throws Exception {
        int off = slot * MSG;
        msgs.buffer().putInt(off, MAGIC).putInt(off + 4, type).putInt(off + 8, mr.rkey()).putInt(off + 12, area)
                .putLong(off + 16, mr.address()).putInt(off + 24, status).putInt(off + 28, 0);
        long id = 100 + type;
        qp.postSend(new SendRequest().send(id, msgs, off, MSG));
        comp.awaitSend(id);
    }

    /** siw_peer's pattern: byte i of pattern k. */
    static byte pattern(int k, long i) {
        return (byte) (i * 31 + k * 17L + 7);
    }

    static void fill(ByteBuffer b, int off, int k, int n) {
        for (int i = 0; i < n; i++) {
            b.put(off + i, pattern(k, i));
        }
    }

    /** Fails naming the first byte of {@code area} bytes at {@code off} that is not pattern {@code k}. */
    private void checkPattern(ByteBuffer b, int off, int k, String what) {
        for (int i = 0; i < area; i++) {
            if (b.get(off + i) != pattern(k, i)) {
                throw new AssertionError(what + ": first wrong byte at offset " + i + " of " + area + " (got "
                        + b.get(off + i) + ", want " + pattern(k, i) + ")");
            }
        }
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    /** Sorts completions: bulk and message receives, send-queue completions by wrId; errors fail. */
    private final class Completions {
        final WorkCompletion[] wcs = new WorkCompletion[8];
        final Deque<long[]> recvs = new ArrayDeque<>();
        final Set<Long> sends = new HashSet<>();
        int bulkLen = -1;
        boolean peerMayClose;
        boolean flushed;

        Completions() {
            for (int i = 0; i < wcs.length; i++) {
                wcs[i] = new WorkCompletion();
            }
        }

        void pollUntil(String what, java.util.function.BooleanSupplier done) throws InterruptedException {
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (!done.getAsBoolean()) {
                if (abort != null) {
                    throw new AssertionError(abort + " (while waiting for " + what + ")");
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("timed out after " + TIMEOUT + " waiting for " + what);
                }
                int n = cq.await(wcs, wcs.length, 100, TimeUnit.MILLISECONDS);
                for (int i = 0; i < n; i++) {
                    WorkCompletion wc = wcs[i];
                    if (!wc.isSuccess()) {
                        if (peerMayClose && wc.opcode == WcOpcode.RECV && wc.status == WcStatus.WR_FLUSH_ERR) {
                            flushed = true;
                            continue;
                        }
                        throw new AssertionError("completion error while waiting for " + what + ": " + wc);
                    }
                    if (wc.opcode == WcOpcode.RECV && wc.wrId == BULK_RECV) {
                        bulkLen = wc.byteLength;
                    } else if (wc.opcode == WcOpcode.RECV) {
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

        int bulk() throws InterruptedException {
            pollUntil("the peer's bulk Send", () -> bulkLen >= 0);
            return bulkLen;
        }

        int message(int type) throws InterruptedException {
            pollUntil("message type " + type, () -> !recvs.isEmpty());
            long[] r = recvs.poll();
            check(r[1] == MSG, "message length " + r[1] + " != " + MSG);
            int off = (int) r[0] * MSG;
            check(msgs.buffer().getInt(off) == MAGIC, "message magic");
            check(msgs.buffer().getInt(off + 4) == type,
                    "message type " + msgs.buffer().getInt(off + 4) + ", expected " + type);
            return off;
        }
    }
}
