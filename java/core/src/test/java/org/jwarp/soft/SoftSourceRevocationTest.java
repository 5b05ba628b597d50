package org.jwarp.soft;

import org.jwarp.soft.verbs.VerbsProbe;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jwarp.ground.RtrType;
import org.jwarp.soft.verbs.SoftMemoryRegion;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionRequest;
import org.jwarp.verbs.SendRequest;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * RFC 5041 §8.3.1 (6) for the source side of zero-copy transmit: Read Responses, Writes and Sends
 * reference registered memory until the socket takes the bytes ({@link TxGather}). A raw peer
 * asks for far more than the socket buffers hold and does not read, so slices of the source
 * region are still pending when the local application deregisters it. From the moment
 * {@link SoftMemoryRegion#close()} returns, a guard pattern written over the region must never
 * reach the peer, and close must return although the peer reads nothing.
 */
class SoftSourceRevocationTest {
    static final int REGION = 4 << 20;
    static final int OPS = 8;
    static final byte FILL = 0x5A;
    static final byte GUARD = (byte) 0xC3;

    @Test
    @DisplayName("RFC 5041 §8.3.1 (6): no byte of a Read source written after close returns reaches the peer")
    void readResponseRacingDeregistration_neverShowsGuard_5041_8_3_1() throws Exception {
        raceDeregistration(true, true);
    }

    @Test
    @DisplayName("RFC 5041 §8.3.1 (6): a Write source closed while the WR is in flight: no later byte reaches the peer")
    void writeSourceClosedInFlight_neverShowsGuard_5041_8_3_1() throws Exception {
        raceDeregistration(false, true);
    }

    @Test
    @DisplayName("RFC 5041 §8.3.1 (6): a peer that stops reading does not make deregistration of a Read source hang")
    void peerThatStopsReading_doesNotBlockDeregistration_5041_8_3_1() throws Exception {
        raceDeregistration(true, false);
    }

    /**
     * A raw initiator asks for {@link #OPS} x 4 MiB Read Responses from (or, with {@code read}
     * false, the soft responder posts as many Writes of) one 4 MiB region and reads nothing; the
     * region is closed (within 5 s, the peer still not reading), a guard written over it, and then,
     * with {@code drain}, the peer reads every FPDU and no tagged payload byte may be the guard.
     */
    private static void raceDeregistration(boolean read, boolean drain) throws Exception {
        try (SoftFixture f = new SoftFixture()) {
            f.listen(2);
            CompletableFuture<Connection> acc = CompletableFuture.supplyAsync(() -> {
                try {
                    ConnectionRequest r = f.listener.next(Duration.ofSeconds(5));
                    return r.accept(f.responderQp(), SoftFixture.p2p().ird(OPS)
                            .rtrTypes(RtrType.WRITE, RtrType.READ, RtrType.SEND).build());
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            try (RawInitiator raw = RawInitiator.connect(f.address(), false, true, false, OPS, OPS)) {
                Connection c = acc.get(5, TimeUnit.SECONDS);
                SoftMemoryRegion src = f.region(f.pd2, REGION, Access.LOCAL_WRITE, Access.REMOTE_READ);
                for (int i = 0; i < REGION; i += 8) {
                    VerbsProbe.raw(src).putLong(i, 0x0101_0101_0101_0101L * (FILL & 0xFF));
                }
                raw.writeRtr();
                if (read) {
                    for (int i = 0; i < OPS; i++) {
                        raw.readRequest(0x5500, 0, REGION, src.rkey(), src.address());
                    }
                }
                raw.flush();
                if (!read) {
                    SendRequest wr = new SendRequest();
                    for (int i = 0; i < OPS; i++) {
                        c.queuePair().postSend(wr.write(i, src, 0, REGION, 0, 0x5500));
                    }
                }
                Thread.sleep(300); // the socket buffers fill; slices of src wait in the transmit path
                CompletableFuture<Void> closed = CompletableFuture.runAsync(src::close);
                try {
                    closed.get(5, TimeUnit.SECONDS);
                } catch (java.util.concurrent.TimeoutException e) {
                    throw new AssertionError("deregistration hangs while the peer does not read");
                }
                long guard = 0x0101_0101_0101_0101L * (GUARD & 0xFF);
                for (int i = REGION - 8; i >= 0; i -= 8) {
                    VerbsProbe.raw(src).putLong(i, guard);
                }
                if (!drain) {
                    return;
                }
                long payload = raw.drainTaggedWithout(GUARD, "close returned");
                assertTrue(payload > 0, "the peer received source bytes before the close");
            }
        }
    }
}
