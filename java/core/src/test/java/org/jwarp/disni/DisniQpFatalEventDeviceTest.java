package org.jwarp.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jwarp.disni.GuestDevices.Side;
import org.jwarp.verbs.AsyncEvent;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.QueuePair;
import org.jwarp.verbs.Rdma;
import org.jwarp.verbs.RdmaException;
import org.jwarp.verbs.RdmaProvider;
import org.jwarp.verbs.SendRequest;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The DiSNI provider's QP-fatal path on the kernel's siw0 (guest, 10.77.0.1; override with
 * {@code -Djwarp.it.siw=ADDR}): an RDMA Write whose tagged offset lies beyond the target region
 * (RFC 5041 §7.1 base and bounds, RFC 5040 §7 error) makes siw terminate the responder's QP and
 * raise {@code IBV_EVENT_QP_ACCESS_ERR}; the provider's async-event pump must report it as
 * {@link AsyncEvent.Type#QP_FATAL} for that QP and its connection and put the QP in ERR. (rxe in
 * Linux 6.1 raises no QP event for a responder's access error, so this runs on siw0 only.)
 */
@Tag("device")
class DisniQpFatalEventDeviceTest {
    static final String SIW = System.getProperty("jwarp.it.siw", "10.77.0.1");

    /**
     * Connects, up to three attempts: a cold JVM under TCG can accept after the kernel's own MPA
     * timeout, and that first connection then fails as unreachable (as the other guest suites' warm-ups
     * note). A failure of the third attempt fails the case.
     */
    static Connection[] connectWarm(Side server, Side client) throws Exception {
        int port = 24000 + (int) (ProcessHandle.current().pid() % 500) * 8;
        for (int attempt = 1; ; attempt++) {
            try {
                return GuestDevices.connect(server, client, new InetSocketAddress(InetAddress.getByName(SIW), port + attempt), 16);
            } catch (RdmaException e) {
                if (attempt == 3) {
                    throw e;
                }
                System.out.println("siw0 connect attempt " + attempt + " (cold JVM): " + e.getMessage());
            }
        }
    }

    @Test
    @DisplayName("RFC 5041 §7.1: a Write beyond the region's bounds on siw0 raises QP_FATAL for the responder's QP "
            + "and connection, and the QP is in ERR")
    void writeBeyondBoundsRaisesQpFatal_5041_7_1() throws Exception {
        try (RdmaProvider provider = Rdma.open("disni");
             Side server = new Side(provider, SIW);
             Side client = new Side(provider, SIW)) {
            LinkedBlockingQueue<AsyncEvent> events = new LinkedBlockingQueue<>();
            server.dev.setEventListener(events::add, Runnable::run);
            Connection[] c = connectWarm(server, client);
            try {
                ByteBuffer peer = ByteBuffer.wrap(c[0].info().peerPrivateData());
                long raddr = peer.getLong(0);
                int rkey = peer.getInt(8);
                // the STag is valid and grants REMOTE_WRITE; the tagged offset is past the region's end
                c[0].queuePair().postSend(new SendRequest().write(1, client.mr, 0, 64, raddr + server.mr.length(), rkey));
                AsyncEvent e = null;
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (e == null && System.nanoTime() < until) {
                    AsyncEvent next = events.poll(1, TimeUnit.SECONDS);
                    if (next != null && next.type() == AsyncEvent.Type.QP_FATAL) {
                        e = next;
                    }
                }
                assertNotNull(e, "no QP_FATAL within 60 s; events seen: " + events);
                System.out.println("siw0 QP fatal event: " + e);
                assertEquals(c[1].queuePair().qpNum(), e.qpNum(), "the responder's QP");
                assertSame(c[1], e.connection(), "the responder's connection");
                assertEquals(QueuePair.QpState.ERR, c[1].queuePair().state());
            } finally {
                c[0].close();
                c[1].close();
            }
        }
    }
}
