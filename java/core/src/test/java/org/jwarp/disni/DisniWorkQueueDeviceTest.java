package org.jwarp.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import org.jwarp.disni.GuestDevices.Side;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.QueuePair;
import org.jwarp.verbs.Rdma;
import org.jwarp.verbs.RdmaProvider;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WcStatus;
import org.jwarp.verbs.WorkCompletion;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Work-queue slot accounting of the DiSNI provider on real devices (siw0 and rxe0 in the guest,
 * override with {@code -Djwarp.it.devices=addr,addr}): many more WRs than the queues hold, with one
 * wrId for all of them and most send WRs unsignalled, must never run a queue full, and every
 * completion reports the caller's wrId. Guest only; fails when a device is missing.
 */
@Tag("device")
class DisniWorkQueueDeviceTest {
    static final int DEPTH = 16;
    private static final AtomicInteger PORT = new AtomicInteger(23000 + (int) (ProcessHandle.current().pid() % 500) * 8);
    static RdmaProvider provider;

    @BeforeAll
    static void open() throws Exception {
        provider = Rdma.open("disni");
    }

    @AfterAll
    static void close() {
        if (provider != null) {
            provider.close();
        }
    }

    @ParameterizedTest
    @MethodSource("org.jwarp.disni.GuestDevices#addresses")
    @DisplayName("RFC 5040 §5.5: unsignalled WRs and one repeated wrId never leak send or receive queue slots")
    void repeatedWrIdsAndUnsignalledWrsNeverFillTheQueues_5040_5_5(String addr) throws Exception {
        try (Side server = new Side(provider, addr); Side client = new Side(provider, addr)) {
            InetSocketAddress at = new InetSocketAddress(InetAddress.getByName(addr), PORT.incrementAndGet());
            Connection[] c = GuestDevices.connect(server, client, at, DEPTH);
            Connection cc = c[0];
            Connection sc = c[1];
            try {
                ByteBuffer peer = ByteBuffer.wrap(cc.info().peerPrivateData());
                long raddr = peer.getLong(0);
                int rkey = peer.getInt(8);
                QueuePair qp = cc.queuePair();
                int rounds = 4 * DEPTH; // 4 WRs a round: 16 times the send queue's depth
                SendRequest wr = new SendRequest();
                for (int round = 0; round < rounds; round++) {
                    for (int k = 0; k < 4; k++) {
                        wr.write(7, client.mr, k * 64, 64, raddr + k * 64, rkey);
                        wr.signaled = k == 3;
                        qp.postSend(wr); // a leaked slot shows as "send queue ... is full"
                    }
                    WorkCompletion w = client.next();
                    assertEquals(WcStatus.SUCCESS, w.status, w.toString());
                    assertEquals(7, w.wrId, "the caller's wrId, not the device token");
                    assertEquals(WcOpcode.RDMA_WRITE, w.opcode);
                }
                // Receives: all wrId 9, twice the receive queue's depth in total.
                for (int round = 0; round < 2 * DEPTH; round++) {
                    sc.queuePair().postRecv(9, server.mr, 4096, 64);
                    wr.send(8, client.mr, 0, 1 + round % 32);
                    wr.signaled = true;
                    qp.postSend(wr);
                    WorkCompletion r = server.next();
                    assertEquals(WcStatus.SUCCESS, r.status, r.toString());
                    assertEquals(9, r.wrId);
                    assertEquals(WcOpcode.RECV, r.opcode);
                    assertEquals(1 + round % 32, r.byteLength);
                    WorkCompletion s = client.next();
                    assertEquals(8, s.wrId);
                    assertEquals(WcOpcode.SEND, s.opcode);
                }
            } finally {
                cc.close();
                sc.close();
            }
        }
    }
}
