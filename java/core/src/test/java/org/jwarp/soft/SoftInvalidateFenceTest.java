package org.jwarp.soft;

import org.jwarp.soft.verbs.VerbsProbe;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jwarp.ground.RtrType;
import org.jwarp.soft.verbs.SoftMemoryRegion;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionRequest;
import org.jwarp.verbs.WorkCompletion;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * RFC 5040 §5.3 and RFC 5041 §8.3.1 (6) for a remote invalidation: once the application sees the
 * receive completion of a Send with Invalidate, no byte of the invalidated region may be read by a
 * zero-copy transmit path any more, on the receiving stream or on any other stream sharing the
 * region, just as after a local deregistration ({@link SoftSourceRevocationTest}). A raw peer asks
 * for far more Read Responses from the region than the socket buffers hold and does not read, then
 * (itself or a second peer) sends a Send with Invalidate naming it; after the completion a guard
 * pattern is written over the region, and no tagged byte the first peer reads may be the guard.
 */
class SoftInvalidateFenceTest {
    static final int REGION = 4 << 20;
    static final int OPS = 8;
    static final byte FILL = 0x5A;
    static final byte GUARD = (byte) 0xC3;

    @Test
    @DisplayName("RFC 5040 §5.3 / RFC 5041 §8.3.1 (6): after a Send with Invalidate completes, no byte of the "
            + "region written later reaches the peer")
    void sendWithInvalidateFencesQueuedReadResponses_Rfc5040_6_10_Rfc5041_8_3_1_6() throws Exception {
        invalidateWhileReadResponsesPend(false);
    }

    @Test
    @DisplayName("RFC 5040 §5.3 / RFC 5041 §8.3.1 (6): a Send with Invalidate on one stream fences another "
            + "stream's queued Read Responses from the shared region")
    void sendWithInvalidateFencesOtherStreamOfSharedRegion_Rfc5040_6_10_Rfc5041_8_3_1_6() throws Exception {
        invalidateWhileReadResponsesPend(true);
    }

    private static Connection accept(SoftFixture f) throws Exception {
        ConnectionRequest r = f.listener.next(Duration.ofSeconds(SoftFixture.SETUP_SECONDS));
        return r.accept(f.responderQp(), SoftFixture.p2p().ird(OPS)
                .rtrTypes(RtrType.WRITE, RtrType.READ, RtrType.SEND).build());
    }

    /**
     * Raw initiator 1 asks for {@link #OPS} x 4 MiB Read Responses from one region of the soft
     * responder and reads nothing; the Send with Invalidate naming the region comes on the same
     * stream or, with {@code otherStream}, from raw initiator 2 on a second stream of the same
     * protection domain. After its receive completion the guard is written, then peer 1 drains.
     */
    private static void invalidateWhileReadResponsesPend(boolean otherStream) throws Exception {
        try (SoftFixture f = new SoftFixture()) {
            f.listen(4);
            CompletableFuture<Connection> acc1 = CompletableFuture.supplyAsync(() -> acceptOrThrow(f));
            try (RawInitiator raw = RawInitiator.connect(f.address(), false, true, false, OPS, OPS)) {
                Connection c1 = acc1.get(SoftFixture.SETUP_SECONDS, TimeUnit.SECONDS);
                RawInitiator inv = raw;
                Connection cInv = c1;
                if (otherStream) {
                    CompletableFuture<Connection> acc2 = CompletableFuture.supplyAsync(() -> acceptOrThrow(f));
                    inv = RawInitiator.connect(f.address(), false, true, false, OPS, OPS);
                    cInv = acc2.get(SoftFixture.SETUP_SECONDS, TimeUnit.SECONDS);
                    inv.writeRtr().flush();
                }
                try {
                    SoftMemoryRegion src = f.region(f.pd2, REGION, Access.LOCAL_WRITE, Access.REMOTE_READ);
                    SoftMemoryRegion rb = f.region(f.pd2, 64, Access.LOCAL_WRITE);
                    for (int i = 0; i < REGION; i += 8) {
                        VerbsProbe.raw(src).putLong(i, 0x0101_0101_0101_0101L * (FILL & 0xFF));
                    }
                    cInv.queuePair().postRecv(7, rb, 0, 64);
                    raw.writeRtr();
                    for (int i = 0; i < OPS; i++) {
                        raw.readRequest(0x5500, 0, REGION, src.rkey(), src.address());
                    }
                    raw.flush();
                    Thread.sleep(300); // the socket buffers fill; slices of src wait in the transmit path
                    inv.sendInvalidate(src.rkey(), new byte[8]).flush();
                    WorkCompletion rc = SoftFixture.one(f.cq2);
                    assertTrue(rc.isSuccess(), rc::toString);
                    assertTrue(rc.withInvalidate, rc::toString);
                    assertEquals(src.rkey(), rc.invalidatedRkey);
                    long guard = 0x0101_0101_0101_0101L * (GUARD & 0xFF);
                    for (int i = REGION - 8; i >= 0; i -= 8) {
                        VerbsProbe.raw(src).putLong(i, guard); // the application reuses memory it was told is fenced
                    }
                    assertTrue(raw.drainTaggedWithout(GUARD, "the invalidation completed") > 0, "the peer received source bytes before the invalidation");
                } finally {
                    if (otherStream) {
                        inv.close();
                    }
                }
            }
        }
    }

    private static Connection acceptOrThrow(SoftFixture f) {
        try {
            return accept(f);
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }
}
