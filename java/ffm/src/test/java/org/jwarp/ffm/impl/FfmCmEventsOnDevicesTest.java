package org.jwarp.ffm.impl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jwarp.verbs.AsyncEvent;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.QueuePairConfig;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The device's reader of its connections' rdma_cm events on siw0 and rxe0 (guest only, JDK 25):
 * it sleeps while no connection has an event, answers a peer's disconnect, and ends a connection
 * whose channel cannot be read with CLOSED instead of retrying it.
 */
@Tag("device")
class FfmCmEventsOnDevicesTest {
    private static final Duration SETUP = Duration.ofSeconds(20);
    private static final long WAIT_MS = 20_000;

    /** Two devices on one address, connected once (more on request); the server's events are queued. */
    private static final class Pair implements AutoCloseable {
        final InetAddress at;
        final FfmDevice server;
        final FfmDevice client;
        final LinkedBlockingQueue<AsyncEvent> serverEvents = new LinkedBlockingQueue<>();
        final FfmConnection sc;
        final Connection cc;
        /** Connections made by {@link #connectAgain}, closed with the pair: server's, client's. */
        final java.util.List<Connection> more = new java.util.ArrayList<>();

        Pair(String address, int port) throws Exception {
            at = InetAddress.ofLiteral(address);
            server = FfmDevice.open(at);
            client = FfmDevice.open(at);
            server.setEventListener(serverEvents::add, Runnable::run);
            Connection[] c = connect(port);
            sc = (FfmConnection) c[0];
            cc = c[1];
        }

        /** One more connection between the two devices, on {@code port}: the server's end. */
        FfmConnection connectAgain(int port) throws Exception {
            Connection[] c = connect(port);
            more.add(c[0]);
            more.add(c[1]);
            return (FfmConnection) c[0];
        }

        private Connection[] connect(int port) throws Exception {
            try (Listener l = server.connectionManager().listen(new InetSocketAddress(at, port), 4)) {
                QueuePairConfig sq = QueuePairConfig.of(server.allocateProtectionDomain(), server.createCompletionQueue(16), 8);
                CompletableFuture<Connection> accepted = CompletableFuture.supplyAsync(() -> {
                    try {
                        return l.next(SETUP).accept(sq, ConnectionParameters.builder().build());
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                QueuePairConfig cq = QueuePairConfig.of(client.allocateProtectionDomain(), client.createCompletionQueue(16), 8);
                Connection c = client.connectionManager().connect(l.localAddress(), cq, ConnectionParameters.builder().build(), SETUP);
                return new Connection[] {accepted.get(WAIT_MS, TimeUnit.MILLISECONDS), c};
            }
        }

        AsyncEvent next(AsyncEvent.Type type) throws InterruptedException {
            while (true) {
                AsyncEvent e = serverEvents.poll(WAIT_MS, TimeUnit.MILLISECONDS);
                assertTrue(e != null, "no " + type + " within " + WAIT_MS + " ms");
                if (e.type() == type) {
                    return e;
                }
            }
        }

        @Override
        public void close() {
            try {
                sc.close(); // first: a server whose channel failed still disconnects, which the client answers
                cc.close();
                for (Connection c : more) {
                    c.close();
                }
            } finally {
                client.close();
                server.close();
            }
        }
    }

    /**
     * With established connections and no event, the reader's poll(2) does not return (the old
     * reader read every channel every 10 ms); the peer's close then wakes it, and the connection
     * reports PEER_DISCONNECTED (RFC 5040 §5.3: the stream ended from the peer's side).
     */
    @ParameterizedTest
    @CsvSource({"10.77.0.1, 7491", "10.78.0.1, 7492"})
    void anIdleDeviceSleepsAndAPeerDisconnectWakesIt_5040_5_3(String address, int port) throws Exception {
        try (Pair p = new Pair(address, port)) {
            assertEquals(1, p.server.cmEvents.watching());
            long before = p.server.cmEvents.wakeUps();
            Thread.sleep(300);
            assertEquals(before, p.server.cmEvents.wakeUps(), "the reader woke with no event waiting");
            assertTrue(p.sc.isOpen());
            p.cc.close();
            p.next(AsyncEvent.Type.PEER_DISCONNECTED);
            assertFalse(p.sc.isOpen());
            assertEquals(0, p.server.cmEvents.watching());
        }
    }

    /**
     * A channel whose read fails (here its fd number, for a while, names /dev/null opened read-only:
     * poll(2) finds it readable and rdma_get_cm_event's write of its command fails with EBADF) is not
     * read again: the connection is no longer open and raises CLOSED naming why.
     */
    @ParameterizedTest
    @CsvSource({"10.77.0.1, 7493", "10.78.0.1, 7494"})
    void aChannelThatFailsToReadEndsTheConnectionWithClosed(String address, int port) throws Throwable {
        Linker linker = Linker.nativeLinker();
        MethodHandle open = linker.downcallHandle(linker.defaultLookup().findOrThrow("open"),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        MethodHandle dup = linker.downcallHandle(linker.defaultLookup().findOrThrow("dup"), FunctionDescriptor.of(JAVA_INT, JAVA_INT));
        MethodHandle dup2 = linker.downcallHandle(linker.defaultLookup().findOrThrow("dup2"),
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
        MethodHandle close = linker.downcallHandle(linker.defaultLookup().findOrThrow("close"), FunctionDescriptor.of(JAVA_INT, JAVA_INT));
        try (Pair p = new Pair(address, port); Arena arena = Arena.ofConfined()) {
            int fd = p.sc.channelFd();
            int saved = (int) dup.invokeExact(fd);
            int devNull = (int) open.invokeExact(arena.allocateFrom("/dev/null"), 0); // O_RDONLY
            assertTrue(saved >= 0 && devNull >= 0, "dup/open");
            try {
                assertEquals(fd, (int) dup2.invokeExact(devNull, fd));
                p.server.cmEvents.wake(); // poll(2) again, now on /dev/null
                AsyncEvent closed = p.next(AsyncEvent.Type.CLOSED);
                assertTrue(closed.detail().contains("rdma_cm channel failed"), closed.detail());
                assertFalse(p.sc.isOpen());
                assertEquals(0, p.server.cmEvents.watching());
            } finally {
                assertEquals(fd, (int) dup2.invokeExact(saved, fd)); // the real channel back, for the close
                assertEquals(0, (int) close.invokeExact(saved));
                assertEquals(0, (int) close.invokeExact(devNull));
            }
        }
    }

    /**
     * When the device's rdma_cm reader stops on a failure (here the number of its wake-up eventfd
     * names /dev/null opened read-only: once the reader wakes, by the second connection's watch or
     * by a peer's disconnect, poll(2) finds that fd readable and the 8-byte read returns 0), the
     * connections it still watched would never learn of a disconnect: each ends as a failed
     * connection, no longer open, raising CLOSED that names the reader; one established afterwards
     * ends so at once.
     */
    @ParameterizedTest
    @CsvSource({"10.77.0.1, 7487, 7488, 7496", "10.78.0.1, 7489, 7490, 7497"})
    void aStoppedReaderEndsItsConnectionsWithClosed(String address, int port, int second, int third) throws Throwable {
        Linker linker = Linker.nativeLinker();
        MethodHandle open = linker.downcallHandle(linker.defaultLookup().findOrThrow("open"),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        MethodHandle dup = linker.downcallHandle(linker.defaultLookup().findOrThrow("dup"), FunctionDescriptor.of(JAVA_INT, JAVA_INT));
        MethodHandle dup2 = linker.downcallHandle(linker.defaultLookup().findOrThrow("dup2"),
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
        MethodHandle close = linker.downcallHandle(linker.defaultLookup().findOrThrow("close"), FunctionDescriptor.of(JAVA_INT, JAVA_INT));
        try (Pair p = new Pair(address, port); Arena arena = Arena.ofConfined()) {
            FfmConnection watched = p.connectAgain(second);
            int fd = p.server.cmEvents.wakeFd();
            int saved = (int) dup.invokeExact(fd);
            int devNull = (int) open.invokeExact(arena.allocateFrom("/dev/null"), 0); // O_RDONLY
            assertTrue(saved >= 0 && devNull >= 0, "dup/open");
            try {
                assertEquals(fd, (int) dup2.invokeExact(devNull, fd));
                p.cc.close(); // wakes the reader (if the second connection's watch did not), which then reads /dev/null
                AsyncEvent closed = p.next(AsyncEvent.Type.CLOSED);
                while (closed.connection() != watched) {
                    closed = p.next(AsyncEvent.Type.CLOSED);
                }
                assertTrue(closed.detail().contains("rdma_cm event reader stopped"), closed.detail());
                assertFalse(watched.isOpen());
                FfmConnection later = p.connectAgain(third);
                closed = p.next(AsyncEvent.Type.CLOSED);
                while (closed.connection() != later) {
                    closed = p.next(AsyncEvent.Type.CLOSED);
                }
                assertTrue(closed.detail().contains("rdma_cm event reader stopped"), closed.detail());
                assertFalse(later.isOpen());
            } finally {
                assertEquals(0, (int) close.invokeExact(saved));
                assertEquals(0, (int) close.invokeExact(devNull));
            }
        }
    }
}
