package org.jwarp.interop;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HexFormat;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.jwarp.memory.StagAccess;
import org.jwarp.memory.StagRegion;
import org.jwarp.memory.StagDomain;
import org.jwarp.memory.StagTable;
import org.jwarp.mpa.MpaFrame;
import org.jwarp.mpa.MpaFrameReader;
import org.jwarp.negotiation.InitiatorConfig;
import org.jwarp.negotiation.InitiatorNegotiator;
import org.jwarp.negotiation.NegotiationAction;
import org.jwarp.negotiation.NegotiationDecision;
import org.jwarp.negotiation.NegotiationOutcome;
import org.jwarp.negotiation.PeerRequest;
import org.jwarp.negotiation.ResponderConfig;
import org.jwarp.negotiation.ResponderNegotiator;
import org.jwarp.ground.RtrType;
import org.jwarp.rdmap.RdmapEndpoint;
import org.jwarp.rdmap.RdmapListener;
import org.jwarp.rdmap.RdmapSettings;
import org.jwarp.ground.TermCode;
import org.jwarp.rdmap.TerminateMessage;

/**
 * One end of an iWARP connection driven straight through the project's wire engine: the RFC 6581
 * negotiators for MPA setup (RFC 5044 §7.1), then an {@link RdmapEndpoint} (RFC 5040/5041) over a
 * TCP {@link SocketChannel}, pumped by the test thread. It records every completion, error and
 * TERM, and the raw MPA frames, so the interop tests can check what the kernel peer put on the wire.
 */
final class WirePeer implements RdmapListener, AutoCloseable {
    /** TCP MSS assumed for FPDU sizing (RFC 5044 §7.1); smaller than lo's, so FPDUs stay small. */
    static final int MSS = 1460;

    final SocketChannel channel;
    final byte[] localFrame;
    final byte[] peerFrameBytes;
    final MpaFrame peerFrame;
    final NegotiationOutcome outcome;
    final PeerRequest peerRequest; // responder side only
    final StagDomain pd = new StagDomain();
    final StagTable stags = new StagTable(64);
    final RdmapEndpoint endpoint;

    private final Selector selector;
    private final ByteBuffer rx = ByteBuffer.allocateDirect(1 << 20);
    private final ByteBuffer tx = ByteBuffer.allocateDirect(1 << 20);

    final List<long[]> sendCompletions = new ArrayList<>();
    final Deque<long[]> receives = new ArrayDeque<>();
    final List<TermCode> localErrors = new ArrayList<>();
    final List<TerminateMessage> peerTerms = new ArrayList<>();
    final List<Long> flushed = new ArrayList<>();
    /** The first MiB of FPDU-mode bytes received, for wire-level diagnostics. */
    final ByteArrayOutputStream received = new ByteArrayOutputStream();
    boolean firstFpdu;
    boolean eof;
    String ioError;

    private WirePeer(SocketChannel channel, byte[] localFrame, byte[] peerFrameBytes, MpaFrame peerFrame,
            NegotiationOutcome outcome, PeerRequest peerRequest, int sqDepth) throws IOException {
        this.channel = channel;
        this.localFrame = localFrame;
        this.peerFrameBytes = peerFrameBytes;
        this.peerFrame = peerFrame;
        this.outcome = outcome;
        this.peerRequest = peerRequest;
        if (outcome != null && outcome.isEstablished()) {
            RdmapSettings s = RdmapSettings.forMss(MSS, outcome.crc(), false, clamp(outcome.ird()), clamp(outcome.ord()),
                    sqDepth, 16);
            endpoint = new RdmapEndpoint(s, pd, stags, this);
        } else {
            endpoint = null;
        }
        channel.configureBlocking(false);
        selector = Selector.open();
        channel.register(selector, SelectionKey.OP_READ);
    }

    private static int clamp(int v) {
        return Math.min(v, RdmapSettings.MAX_IRD_ORD);
    }

    // ------------------------------------------------------------------ setup

    /**
     * Connects to {@code address} and runs the initiator side of MPA setup. When established with
     * an RTR, the RTR is queued as the first FPDU (RFC 6581 §9.2).
     */
    static WirePeer connect(InetSocketAddress address, InitiatorConfig config, Duration timeout) throws IOException {
        // Everything before the Request is built first: siw waits only 5 s for it after accepting
        // TCP, and a cold JVM under emulation can take longer than that to load the classes.
        InitiatorNegotiator neg = new InitiatorNegotiator(config);
        byte[] req = neg.createRequest().toBytes();
        MpaFrameReader reader = neg.newReplyReader();
        SocketChannel ch = SocketChannel.open();
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        ch.socket().connect(address, (int) timeout.toMillis());
        ch.socket().setSoTimeout((int) timeout.toMillis());
        writeFully(ch, req);
        byte[] raw = readFrame(ch, reader, timeout);
        NegotiationDecision d = neg.onReply(reader.frame());
        WirePeer p = new WirePeer(ch, req, raw, reader.frame(), d.outcome(), null, 32);
        if (d.action() == NegotiationAction.ESTABLISH && d.outcome().rtr() != null) {
            if (d.outcome().rtr() == RtrType.WRITE) {
                p.endpoint.postWriteRtr();
            } else if (d.outcome().rtr() == RtrType.READ) {
                p.endpoint.postReadRtr();
            } else {
                throw new IllegalStateException("Send RTR is not used by this test: " + d.outcome());
            }
        }
        return p;
    }

    /** Accepts one connection on {@code server} and runs the responder side of MPA setup. */
    static WirePeer accept(ServerSocketChannel server, ResponderConfig config, Duration timeout) throws IOException {
        return accept(server, config, null, timeout);
    }

    /**
     * Accepts one connection and runs the responder side of MPA setup; with {@code rejectPd}
     * non-null the ULP rejects the request (Reply R=1 carrying it, RFC 5044 §7.1.1).
     */
    static WirePeer accept(ServerSocketChannel server, ResponderConfig config, byte[] rejectPd, Duration timeout)
            throws IOException {
        server.configureBlocking(true);
        server.socket().setSoTimeout((int) timeout.toMillis());
        SocketChannel ch = server.socket().accept().getChannel();
        if (ch == null) {
            throw new IOException("accepted socket has no channel");
        }
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        ResponderNegotiator neg = new ResponderNegotiator(config);
        MpaFrameReader reader = neg.newRequestReader();
        byte[] raw = readFrame(ch, reader, timeout);
        NegotiationDecision d = neg.onRequest(reader.frame());
        if (d.action() == NegotiationAction.AWAIT_ACCEPT) {
            d = rejectPd != null ? neg.reject(rejectPd) : neg.accept();
        }
        byte[] reply = d.frame() != null ? d.frameBytes() : new byte[0];
        if (reply.length > 0) {
            writeFully(ch, reply);
        }
        return new WirePeer(ch, reply, raw, reader.frame(), d.outcome(), neg.peerRequest(), 32);
    }

    /** Reads exactly one MPA frame (byte-exact, so no FPDU byte is consumed with it). */
    private static byte[] readFrame(SocketChannel ch, MpaFrameReader reader, Duration timeout) throws IOException {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        var in = ch.socket().getInputStream();
        while (!reader.isComplete()) {
            byte[] chunk = new byte[Math.max(1, reader.bytesNeeded())];
            int n = in.read(chunk);
            if (n < 0) {
                throw new IOException("peer closed during MPA setup after " + all.size() + " bytes: "
                        + HexFormat.of().formatHex(all.toByteArray()));
            }
            all.write(chunk, 0, n);
            try {
                reader.feed(ByteBuffer.wrap(chunk, 0, n));
            } catch (org.jwarp.mpa.MpaDecodeException e) {
                throw new IOException("undecodable MPA frame " + HexFormat.of().formatHex(all.toByteArray()) + ": "
                        + e.getMessage(), e);
            }
        }
        return all.toByteArray();
    }

    private static void writeFully(SocketChannel ch, byte[] bytes) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }

    // ------------------------------------------------------------------ memory and ops

    StagRegion register(int length, long baseTo) {
        ByteBuffer b = ByteBuffer.allocateDirect(length);
        return stags.register(pd, b, 0, length, baseTo, StagAccess.ALL);
    }

    /** Pumps the stream until {@code done} holds; fails with the peer state after {@code timeout}. */
    void pumpUntil(String what, BooleanSupplier done, Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what + ": " + state());
            }
            boolean progress = pumpOnce();
            if (!progress && !done.getAsBoolean()) {
                if (eof) {
                    throw new AssertionError("peer closed the connection while waiting for " + what + ": " + state());
                }
                selector.select(5);
                selector.selectedKeys().clear();
            }
        }
    }

    /** Moves bytes once in each direction; true when anything moved. */
    boolean pumpOnce() throws IOException {
        boolean progress = false;
        try {
            if (endpoint != null) {
                if (tx.position() == 0) {
                    endpoint.transmit(tx);
                }
                if (tx.position() > 0) {
                    tx.flip();
                    progress |= channel.write(tx) > 0;
                    tx.compact();
                }
            }
            if (!eof) {
                int n = channel.read(rx);
                if (n < 0) {
                    eof = true;
                    progress = true;
                } else if (n > 0) {
                    progress = true;
                    rx.flip();
                    if (received.size() < (1 << 20)) {
                        for (int i = rx.position(); i < rx.limit(); i++) {
                            received.write(rx.get(i));
                        }
                    }
                    if (endpoint != null) {
                        endpoint.receive(rx);
                    }
                    rx.clear();
                }
            }
        } catch (IOException e) {
            ioError = e.toString();
            eof = true;
            return true;
        }
        return progress;
    }

    /** Pumps until the peer closed (or {@code timeout}); returns whether it closed. */
    boolean awaitClose(Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!eof && System.nanoTime() < deadline) {
            if (!pumpOnce()) {
                selector.select(5);
                selector.selectedKeys().clear();
            }
        }
        return eof;
    }

    long[] takeReceive(String what, Duration timeout) throws IOException {
        pumpUntil(what, () -> !receives.isEmpty() || !peerTerms.isEmpty() || !localErrors.isEmpty(), timeout);
        if (receives.isEmpty()) {
            throw new AssertionError("stream died waiting for " + what + ": " + state());
        }
        return receives.poll();
    }

    /**
     * The ULPDUs (DDP segments, RFC 5044 §4) of every FPDU received so far, split by the MPA
     * length field: length(2) ULPDU pad CRC(4). No markers (siw never negotiates them).
     */
    List<byte[]> receivedUlpdus() {
        byte[] all = received.toByteArray();
        List<byte[]> out = new ArrayList<>();
        int i = 0;
        while (i + 2 <= all.length) {
            int len = ((all[i] & 0xFF) << 8) | (all[i + 1] & 0xFF);
            int pad = (4 - (2 + len) % 4) % 4;
            int total = 2 + len + pad + 4;
            if (i + total > all.length) {
                break;
            }
            out.add(java.util.Arrays.copyOfRange(all, i + 2, i + 2 + len));
            i += total;
        }
        return out;
    }

    /** The last {@code n} bytes received in FPDU mode, as hex. */
    String lastReceivedHex(int n) {
        byte[] all = received.toByteArray();
        int from = Math.max(0, all.length - n);
        return HexFormat.of().formatHex(all, from, all.length);
    }

    /** Whether every byte the endpoint produced has been written to the socket. */
    boolean txDrained() {
        return tx.position() == 0;
    }

    boolean sendCompleted(long wrId) {
        for (long[] c : sendCompletions) {
            if (c[0] == wrId) {
                return true;
            }
        }
        return false;
    }

    String state() {
        return "endpoint=" + (endpoint == null ? "none" : endpoint.state()) + " eof=" + eof + " ioError=" + ioError
                + " localErrors=" + localErrors + " peerTerms=" + peerTerms + " sendCompletions="
                + sendCompletions.size() + " receivesQueued=" + receives.size() + " firstFpdu=" + firstFpdu;
    }

    @Override
    public void close() throws IOException {
        selector.close();
        channel.close();
    }

    // ------------------------------------------------------------------ RdmapListener

    @Override
    public void onSendCompletion(long wrId, int opcode, int byteLength) {
        sendCompletions.add(new long[] {wrId, opcode, byteLength});
    }

    @Override
    public void onReceiveCompletion(long wrId, int opcode, int byteLength, int invalidatedStag) {
        receives.add(new long[] {wrId, opcode, byteLength, invalidatedStag});
    }

    @Override
    public void onLocalError(TermCode code, String detail) {
        localErrors.add(code);
        System.out.println("interop: local error " + code + ": " + detail);
    }

    @Override
    public void onPeerTerminate(TerminateMessage term) {
        peerTerms.add(term);
    }

    @Override
    public void onFirstFpdu() {
        firstFpdu = true;
    }

    @Override
    public void onFlushed(long wrId, boolean receiveQueue) {
        flushed.add(wrId);
    }
}
