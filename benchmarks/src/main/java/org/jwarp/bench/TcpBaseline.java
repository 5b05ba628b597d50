package org.jwarp.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * The floor for software iWARP over TCP: a plain Java NIO connection over loopback with
 * TCP_NODELAY and direct buffers, and a peer thread that answers in one of three ways:
 * <ul>
 *   <li>{@link Mode#ECHO}: echoes {@code size}-byte messages (the floor of Send and Write ping-pong);</li>
 *   <li>{@link Mode#FETCH}: answers an 8-byte request with {@code size} bytes (the floor of an
 *       RDMA Read: a request goes out, the data comes back);</li>
 *   <li>{@link Mode#SINK}: reads a continuous stream (the floor of the bandwidth tests): the
 *       client announces the byte count in an 8-byte header, writes without pause, and the peer
 *       answers once with 8 bytes when all have arrived.</li>
 * </ul>
 * With {@code spin} both ends use non-blocking channels and busy-retry reads and writes (the
 * floor of a busy-polling provider); otherwise they block in the kernel (the floor of
 * {@code CompletionQueue.await}). Nothing is allocated per message.
 */
final class TcpBaseline implements AutoCloseable {
    /** The listening socket of the in-JVM peer, or null when a {@link BenchPeer} JVM answers. */
    private final ServerSocketChannel server;
    private final SocketChannel client;
    private final Thread peer;
    private final ByteBuffer tx;
    private final ByteBuffer rx;
    private final ByteBuffer hdr = ByteBuffer.allocateDirect(8);
    private final int size;
    private final Mode mode;
    private volatile boolean running = true;

    enum Mode { ECHO, FETCH, SINK }

    TcpBaseline(int size, Mode mode, boolean spin) throws IOException {
        this.size = size;
        this.mode = mode;
        server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress("127.0.0.1", 0));
        client = SocketChannel.open(server.getLocalAddress());
        client.setOption(StandardSocketOptions.TCP_NODELAY, true);
        SocketChannel accepted = server.accept();
        accepted.setOption(StandardSocketOptions.TCP_NODELAY, true);
        if (spin) {
            client.configureBlocking(false);
            accepted.configureBlocking(false);
        }
        tx = patterned(size);
        rx = ByteBuffer.allocateDirect(Math.max(size, 8));
        peer = new Thread(() -> serve(accepted, mode, size, () -> running), "tcp-baseline-peer");
        peer.setDaemon(true);
        peer.start();
    }

    /** Connects to a {@link BenchPeer} at {@code peerAddress}, which answers in {@code mode}. */
    TcpBaseline(InetSocketAddress peerAddress, int size, Mode mode, boolean spin) throws IOException {
        this.size = size;
        this.mode = mode;
        server = null;
        peer = null;
        client = SocketChannel.open(peerAddress);
        client.setOption(StandardSocketOptions.TCP_NODELAY, true);
        ByteBuffer h = ByteBuffer.allocate(12).putInt(mode.ordinal()).putInt(size).putInt(spin ? 1 : 0).flip();
        while (h.hasRemaining()) {
            client.write(h);
        }
        if (spin) {
            client.configureBlocking(false);
        }
        tx = patterned(size);
        rx = ByteBuffer.allocateDirect(Math.max(size, 8));
    }

    /** The message this side sends: {@code size} bytes 0, 1, 2, ... (at least 8 bytes of room). */
    private static ByteBuffer patterned(int size) {
        ByteBuffer b = ByteBuffer.allocateDirect(Math.max(size, 8));
        for (int i = 0; i < size; i++) {
            b.put(i, (byte) i);
        }
        return b;
    }

    private static void writeFully(SocketChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (ch.write(b) == 0) {
                Thread.onSpinWait();
            }
        }
    }

    /** Fills {@code b}; false at end of stream. */
    private static boolean readFully(SocketChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            int n = ch.read(b);
            if (n < 0) {
                return false;
            }
            if (n == 0) {
                Thread.onSpinWait();
            }
        }
        return true;
    }

    /** The answering side of {@code mode} on {@code ch} until it closes or {@code running} turns false. */
    static void serve(SocketChannel ch, Mode mode, int size, java.util.function.BooleanSupplier running) {
        ByteBuffer buf = ByteBuffer.allocateDirect(Math.max(size, 8));
        ByteBuffer small = ByteBuffer.allocateDirect(8);
        ByteBuffer chunk = ByteBuffer.allocateDirect(1 << 20);
        try (ch) {
            while (running.getAsBoolean()) {
                switch (mode) {
                    case ECHO -> {
                        buf.clear().limit(size);
                        if (!readFully(ch, buf)) {
                            return;
                        }
                        buf.flip();
                        writeFully(ch, buf);
                    }
                    case FETCH -> {
                        small.clear();
                        if (!readFully(ch, small)) {
                            return;
                        }
                        buf.clear().limit(size);
                        writeFully(ch, buf);
                    }
                    case SINK -> {
                        small.clear();
                        if (!readFully(ch, small)) {
                            return;
                        }
                        long left = small.getLong(0);
                        while (left > 0) {
                            chunk.clear();
                            if (left < chunk.capacity()) {
                                chunk.limit((int) left);
                            }
                            int n = ch.read(chunk);
                            if (n < 0) {
                                return;
                            }
                            if (n == 0) {
                                Thread.onSpinWait();
                            }
                            left -= n;
                        }
                        small.clear();
                        writeFully(ch, small);
                    }
                    default -> throw new IllegalStateException();
                }
            }
        } catch (IOException e) {
            // peer side ends when the benchmark closes the client
        }
    }

    /** One round trip of {@code size} bytes each way (echo mode). */
    int pingPong() throws IOException {
        tx.clear().limit(size);
        writeFully(client, tx);
        rx.clear().limit(size);
        if (!readFully(client, rx)) {
            throw new IOException("peer closed");
        }
        return rx.get(0);
    }

    /** An 8-byte request answered with {@code size} bytes (fetch mode). */
    int fetch() throws IOException {
        tx.clear().limit(8);
        writeFully(client, tx);
        rx.clear().limit(size);
        if (!readFully(client, rx)) {
            throw new IOException("peer closed");
        }
        return rx.get(0);
    }

    /** {@code n} messages of {@code size} bytes as one stream; returns nanoseconds until the peer has them all. */
    long stream(int n) throws IOException {
        long t0 = System.nanoTime();
        hdr.clear().putLong(0, (long) n * size);
        writeFully(client, hdr);
        for (int i = 0; i < n; i++) {
            tx.clear().limit(size);
            writeFully(client, tx);
        }
        hdr.clear();
        if (!readFully(client, hdr)) {
            throw new IOException("peer closed");
        }
        return System.nanoTime() - t0;
    }

    @Override
    public void close() throws IOException {
        running = false;
        client.close();
        if (server == null) {
            return;
        }
        server.close();
        try {
            peer.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
