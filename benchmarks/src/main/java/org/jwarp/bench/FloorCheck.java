package org.jwarp.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.Locale;

/**
 * The plainest TCP floor, as a check on {@link TcpBaseline}'s: a blocking Java NIO ping-pong
 * (TCP_NODELAY, direct buffers) between two JVMs that run nothing else, timed with
 * {@code System.nanoTime} into a preallocated array. No picocli, no HdrHistogram, no provider.
 * It speaks {@link BenchPeer}'s TCP header (mode, size, spin: three big-endian ints) so that each
 * half can face the bench's own other half: {@code client} against a {@code BenchPeer} and
 * {@code BenchMain --peer HOST:0:PORT} against a {@code server} ({@code scripts/bench --floor-check}).
 *
 * <pre>
 * java -cp benchmarks.jar org.jwarp.bench.FloorCheck server [PORT]        prints "floor-check-server tcp=PORT"
 * java -cp benchmarks.jar org.jwarp.bench.FloorCheck client HOST:PORT [SIZE [N [WARMUP]]]
 * </pre>
 *
 * The client prints one JSON line: the round trip's min, p50, p90, p99 in µs over N trips after
 * WARMUP trips (defaults 64 B, 10,000, 10,000).
 */
public final class FloorCheck {
    private FloorCheck() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length >= 1 && args[0].equals("server")) {
            server(args.length > 1 ? Integer.parseInt(args[1]) : 0);
        } else if (args.length >= 2 && args[0].equals("client")) {
            int size = args.length > 2 ? Integer.parseInt(args[2]) : 64;
            int n = args.length > 3 ? Integer.parseInt(args[3]) : 10_000;
            int warm = args.length > 4 ? Integer.parseInt(args[4]) : 10_000;
            String[] hp = args[1].split(":");
            System.out.println(client(new InetSocketAddress(hp[0], Integer.parseInt(hp[1])), size, n, warm));
        } else {
            System.err.println("usage: FloorCheck server [PORT] | client HOST:PORT [SIZE [N [WARMUP]]]");
            System.exit(2);
        }
    }

    /** Accepts connections one after another and echoes each (its header first) until it closes. */
    static void server(int port) throws IOException {
        try (ServerSocketChannel s = ServerSocketChannel.open()) {
            s.bind(new InetSocketAddress("127.0.0.1", port));
            System.out.println("floor-check-server tcp=" + ((InetSocketAddress) s.getLocalAddress()).getPort());
            System.out.flush();
            ByteBuffer hdr = ByteBuffer.allocateDirect(12);
            while (true) {
                try (SocketChannel ch = s.accept()) {
                    ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
                    hdr.clear();
                    if (!fill(ch, hdr)) {
                        continue;
                    }
                    ByteBuffer buf = ByteBuffer.allocateDirect(Math.max(8, hdr.getInt(4)));
                    buf.limit(hdr.getInt(4));
                    while (true) {
                        buf.rewind();
                        if (!fill(ch, buf)) {
                            break;
                        }
                        buf.flip();
                        while (buf.hasRemaining()) {
                            ch.write(buf);
                        }
                    }
                } catch (IOException e) {
                    // the client went away: serve the next
                }
            }
        }
    }

    /** Fills {@code b} from {@code ch} (blocking); false at end of stream. */
    private static boolean fill(SocketChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (ch.read(b) < 0) {
                return false;
            }
        }
        return true;
    }

    /** {@code warm} then {@code n} timed round trips of {@code size} bytes; one JSON line. */
    static String client(InetSocketAddress peer, int size, int n, int warm) throws IOException {
        long[] t = new long[n];
        try (SocketChannel ch = SocketChannel.open(peer)) {
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            ByteBuffer hdr = ByteBuffer.allocateDirect(12).putInt(0).putInt(size).putInt(0).flip(); // ECHO, blocking
            while (hdr.hasRemaining()) {
                ch.write(hdr);
            }
            ByteBuffer tx = ByteBuffer.allocateDirect(size);
            ByteBuffer rx = ByteBuffer.allocateDirect(size);
            for (int i = -warm; i < n; i++) {
                long s = System.nanoTime();
                tx.clear();
                while (tx.hasRemaining()) {
                    ch.write(tx);
                }
                rx.clear();
                if (!fill(ch, rx)) {
                    throw new IOException("peer closed");
                }
                if (i >= 0) {
                    t[i] = System.nanoTime() - s;
                }
            }
        }
        Arrays.sort(t);
        return String.format(Locale.ROOT, "{\"transport\":\"plain-nio\",\"op\":\"pingpong\",\"size\":%d,\"n\":%d,"
                + "\"warmup_ops\":%d,\"rtt_min_us\":%.3f,\"rtt_p50_us\":%.3f,\"rtt_p90_us\":%.3f,\"rtt_p99_us\":%.3f}",
                size, n, warm, t[0] / 1e3, t[n / 2] / 1e3, t[(int) (n * 0.9)] / 1e3, t[(int) (n * 0.99)] / 1e3);
    }
}
