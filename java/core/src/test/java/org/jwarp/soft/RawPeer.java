package org.jwarp.soft;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionRequest;

/**
 * A soft responder accepted in client-server mode (no RTR, RFC 6581 §9.1) on a {@link SoftFixture}
 * ({@code pd2}/{@code cq2}), connected to a hand-driven {@link RawInitiator} (MPA with CRC, IRD and
 * ORD 8): the set-up of the adversarial-peer tests. Closing it closes the raw peer's socket.
 */
record RawPeer(RawInitiator raw, Connection conn) implements AutoCloseable {

    /** The fixture's configuration with an FPDU stall timeout of {@code stall}. */
    static SoftConfig stallConfig(Duration stall) {
        return SoftFixture.defaultConfig().withFpduStallTimeout(stall);
    }

    /** Listens on {@code f} (backlog 4), connects a raw initiator and accepts it. */
    static RawPeer connect(SoftFixture f) throws Exception {
        f.listen(4);
        CompletableFuture<Connection> acc = acceptClientServer(f);
        RawInitiator raw = RawInitiator.connect(f.address(), false, false, false, 8, 8);
        try {
            return new RawPeer(raw, acc.get(5, TimeUnit.SECONDS));
        } catch (Exception e) {
            raw.close();
            throw e;
        }
    }

    /** Accepts the fixture listener's next request in client-server mode. */
    static CompletableFuture<Connection> acceptClientServer(SoftFixture f) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                ConnectionRequest r = f.listener.next(Duration.ofSeconds(5));
                return r.accept(f.responderQp(), SoftFixture.clientServer().build());
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
    }

    @Override
    public void close() throws IOException {
        raw.close();
    }
}
