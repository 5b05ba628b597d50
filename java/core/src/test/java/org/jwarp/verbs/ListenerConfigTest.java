package org.jwarp.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.time.Duration;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** {@link ListenerConfig}: checked values, idle timeout off by default, refused by providers without one. */
class ListenerConfigTest {
    @Test
    @DisplayName("Idle timeout off by default; negative, sub-millisecond and zero-backlog values are refused")
    void values() {
        ListenerConfig c = ListenerConfig.of(4);
        assertEquals(4, c.backlog());
        assertFalse(c.idleCheck());
        assertTrue(c.withIdleTimeout(Duration.ofSeconds(30)).idleCheck());
        assertFalse(c.withIdleTimeout(Duration.ofSeconds(30)).withIdleTimeout(Duration.ZERO).idleCheck());
        assertThrows(IllegalArgumentException.class, () -> ListenerConfig.of(0));
        assertThrows(IllegalArgumentException.class, () -> c.withIdleTimeout(Duration.ofMillis(-1)));
        assertThrows(IllegalArgumentException.class, () -> c.withIdleTimeout(Duration.ofNanos(999_999)));
        assertThrows(NullPointerException.class, () -> c.withIdleTimeout(null));
    }

    @Test
    @DisplayName("A provider without an idle check (the interface's default) listens without one and refuses one")
    void defaultMethodRefusesIdleTimeout() throws Exception {
        Listener stub = new Listener() {
            @Override
            public InetSocketAddress localAddress() {
                return null;
            }

            @Override
            public ConnectionRequest next(Duration timeout) {
                return null;
            }

            @Override
            public void close() {
            }
        };
        int[] backlog = new int[1];
        ConnectionManager cm = new ConnectionManager() {
            @Override
            public Listener listen(InetSocketAddress address, int b) {
                backlog[0] = b;
                return stub;
            }

            @Override
            public Connection connect(InetSocketAddress remote, QueuePairConfig qp, ConnectionParameters params,
                                      Duration timeout) {
                throw new UnsupportedOperationException();
            }
        };
        InetSocketAddress any = new InetSocketAddress(0);
        assertSame(stub, cm.listen(any, ListenerConfig.of(5)));
        assertEquals(5, backlog[0]);
        RdmaException e = assertThrows(RdmaException.class,
                () -> cm.listen(any, ListenerConfig.of(5).withIdleTimeout(Duration.ofSeconds(1))));
        assertTrue(e.getMessage().contains("idle timeout"), e.getMessage());
    }
}
