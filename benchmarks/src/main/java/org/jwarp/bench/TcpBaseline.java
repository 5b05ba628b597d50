package org.jwarp.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * The floor for software iWARP over TCP: a plain Java NIO connection over loopback with
 * TCP_NODELAY and direct buffers, and a peer thread that either echoes fixed-size messages
 * (ping-pong) or sinks a stream and acknowledges every {@code ackEvery} bytes (bandwidth).
 * Nothing is allocated per message.
 */
final class TcpBaseline implements AutoCloseable {
    private final ServerSocketChannel server;
    private final SocketChannel client;
    private final Thread peer;
    private final ByteBuffer tx;
    private final ByteBuffer rx;
    private final int size;
    private volatile boolean running = true;

    enum Mode { ECHO, SINK }

    TcpBaseline(int size, Mode mode) throws IOException {
        this.size = size;
        server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress("127.0.0.1", 0));
        client = SocketChannel.open(server.getLocalAddress());
        client.setOption(StandardSocketOptions.TCP_NODELAY, true);
        SocketChannel accepted = server.accept();
        accepted.setOption(StandardSocketOptions.TCP_NODELAY, true);
        tx = ByteBuffer.allocateDirect(size);
        rx = ByteBuffer.allocateDirect(Math.max(size, 8));
        for (int i = 0; i < size; i++) {
            tx.put(i, (byte) i);
        }
        peer = new Thread(() -> runPeer(accepted, mode), "tcp-baseline-peer");
        peer.setDaemon(true);
        peer.start();
    }

    private void runPeer(SocketChannel ch, Mode mode) {
        ByteBuffer buf = ByteBuffer.allocateDirect(Math.max(size, 8));
        ByteBuffer ack = ByteBuffer.allocateDirect(8);
        try (ch) {
            while (running) {
                buf.clear().limit(size);
                while (buf.hasRemaining()) {
                    if (ch.read(buf) < 0) {
                        return;
                    }
                }
                if (mode == Mode.ECHO) {
                    buf.flip();
                    while (buf.hasRemaining()) {
                        ch.write(buf);
                    }
                } else {
                    ack.clear().putLong(0, size);
                    while (ack.hasRemaining()) {
                        ch.write(ack);
                    }
                }
            }
        } catch (IOException e) {
            // peer side ends when the benchmark closes the client
        }
    }

    /** One round trip of {@code size} bytes (echo mode). */
    int pingPong() throws IOException {
        tx.clear();
        while (tx.hasRemaining()) {
            client.write(tx);
        }
        rx.clear().limit(size);
        while (rx.hasRemaining()) {
            if (client.read(rx) < 0) {
                throw new IOException("peer closed");
            }
        }
        return rx.get(0);
    }

    /** Sends {@code size} bytes and waits for the 8-byte acknowledgement (sink mode). */
    long sendAndAck() throws IOException {
        tx.clear();
        while (tx.hasRemaining()) {
            client.write(tx);
        }
        rx.clear().limit(8);
        while (rx.hasRemaining()) {
            if (client.read(rx) < 0) {
                throw new IOException("peer closed");
            }
        }
        return rx.getLong(0);
    }

    @Override
    public void close() throws IOException {
        running = false;
        client.close();
        server.close();
        try {
            peer.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
