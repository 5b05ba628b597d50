package org.jwarp.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jwarp.ground.TermCode;
import org.jwarp.soft.verbs.SoftMemoryRegion;
import org.jwarp.verbs.Connection;
import org.junit.jupiter.api.Test;

/**
 * Review finding: while a thread keeps waiting on the CQ, the CQ poller holds the stream
 * (present, so the reactor's lease never runs), and the FPDU stall timer is armed only by the
 * reactor (after its own reads, or when it takes the stream back): a partial FPDU from a hostile
 * peer is then never timed out (RFC 6581 §9.3).
 */
class PolledStallTimerTest {

    @Test
    void stallTimerRunsWhileAThreadAwaitsTheCq_6581_9_3() throws Exception {
        try (SoftFixture f = new SoftFixture(RawPeer.stallConfig(Duration.ofMillis(300)))) {
            try (RawPeer p = RawPeer.connect(f)) {
                RawInitiator raw = p.raw();
                Connection c = p.conn();
                SoftMemoryRegion rb = f.region(f.pd2, 64, org.jwarp.verbs.Access.LOCAL_WRITE);
                c.queuePair().postRecv(1, rb, 0, 64);
                AtomicBoolean stop = new AtomicBoolean();
                org.jwarp.verbs.WorkCompletion[] out = {new org.jwarp.verbs.WorkCompletion()};
                Thread waiter = new Thread(() -> {
                    try {
                        while (!stop.get()) {
                            if (f.cq2.await(out, 1, 30, TimeUnit.SECONDS) > 0) {
                                return; // the flush completion: the stream ended
                            }
                        }
                    } catch (InterruptedException e) {
                        // done
                    }
                });
                waiter.start();
                SoftStream st = ((SoftConnection) c).stream();
                for (int i = 0; i < 200 && !st.receiver.isPolled(); i++) {
                    Thread.sleep(5);
                }
                assertTrue(st.receiver.isPolled(), "the waiting thread's poller holds the stream");
                byte[] partial = new byte[12];
                partial[0] = (byte) 0xFF; // ULPDU length 65535: the rest never comes
                partial[1] = (byte) 0xFF;
                raw.peer.socket.setSoTimeout(4000);
                raw.peer.send(partial);
                try {
                    assertEquals(TermCode.MPA_LOCAL_CATASTROPHIC, raw.peer.readTerm(),
                            "TERM 2/0/5 within 4 s of a 300 ms stall timeout");
                } catch (java.net.SocketTimeoutException e) {
                    throw new AssertionError("no TERM 2/0/5 within 4 s although the stall timeout is 300 ms; "
                            + "stream polled=" + st.receiver.isPolled() + " reads=" + st.receiver.pollReads, e);
                } finally {
                    stop.set(true);
                    waiter.interrupt();
                    waiter.join(2000);
                }
            }
        }
    }
}
