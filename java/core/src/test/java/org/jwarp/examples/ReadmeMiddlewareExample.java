package org.jwarp.examples;

// README.md shows this file from README-BEGIN to README-END as a java block, character for
// character (ReadmeMiddlewareExampleTest compares them and runs example() on the soft provider;
// scripts/readme-check compiles the README block as pasted).
// README-BEGIN
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.CompletionChannel;
import org.jwarp.verbs.CompletionQueue;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.ConnectionRequest;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.ProtectionDomain;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.Rdma;
import org.jwarp.verbs.RdmaProvider;
import org.jwarp.verbs.RecvRequest;
import org.jwarp.verbs.SendRequest;
import org.jwarp.verbs.SharedReceiveQueue;
import org.jwarp.verbs.WorkCompletion;

/**
 * A server whose receive buffers (two SGEs each, RFC 5041 §5.3) wait in a shared receive queue
 * (RFC 5041 §5.1) and whose CQ signals a completion channel; a client that connects
 * asynchronously, learns the server's buffer address and STag from the Reply's private data
 * (RFC 5044 §7.1, RFC 6581 §9), and posts an RDMA Write and a gathered Send with Solicited Event
 * as one chain (RFC 5040 §5.1, §5.3, §6.9).
 */
public final class ReadmeMiddlewareExample {
    private ReadmeMiddlewareExample() {
    }

    /** Runs server and client in this JVM; {@code host}/{@code port} are where the server listens. */
    public static void example(String host, int port) throws Exception {
        try (RdmaProvider provider = Rdma.openDefault();
             Device server = provider.open(InetAddress.getByName(host));
             Device client = provider.open(InetAddress.getByName(host))) {
            // server: 64 receive buffers of header (16 B) + body (1008 B) in one shared receive queue
            ProtectionDomain spd = server.allocateProtectionDomain();
            CompletionChannel channel = server.createCompletionChannel();
            CompletionQueue scq = server.createCompletionQueue(256, channel);
            SharedReceiveQueue srq = spd.createSharedReceiveQueue(64, 2);
            MemoryRegion inbox = spd.register(ByteBuffer.allocateDirect(64 * 1024),
                    EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
            RecvRequest rr = new RecvRequest();
            for (int i = 0; i < 64; i++) {
                rr.set(i, inbox, i * 1024L, 16).sgl.add(inbox, i * 1024L + 16, 1008);
                srq.postRecv(rr);
            }
            Listener listener = server.connectionManager().listen(new InetSocketAddress(host, port), 8);

            // client: connect without blocking; the server's Reply carries its inbox address and STag
            ProtectionDomain cpd = client.allocateProtectionDomain();
            CompletionQueue ccq = client.createCompletionQueue(256);
            MemoryRegion hdr = cpd.register(ByteBuffer.allocateDirect(16), EnumSet.of(Access.LOCAL_WRITE));
            MemoryRegion body = cpd.register(ByteBuffer.allocateDirect(4096), EnumSet.of(Access.LOCAL_WRITE));
            CompletableFuture<Connection> pending = client.connectionManager().connectAsync(listener.localAddress(),
                    QueuePairConfig.of(cpd, ccq, 64).withSge(2, 1), ConnectionParameters.builder().build(),
                    Duration.ofSeconds(10));
            ConnectionRequest req = listener.next(Duration.ofSeconds(10));
            byte[] key = ByteBuffer.allocate(12).putLong(inbox.address()).putInt(inbox.rkey()).array();
            Connection sconn = req.accept(new QueuePairConfig(spd, scq, scq, 64, 1).withSrq(srq),
                    ConnectionParameters.builder().privateData(key).build());
            Connection conn = pending.get(10, TimeUnit.SECONDS);
            ByteBuffer peer = ByteBuffer.wrap(conn.info().peerPrivateData());
            long addr = peer.getLong();
            int rkey = peer.getInt();

            // client: one chain, one post call: an unsignalled Write into the server's last 1 KiB,
            // then a Send gathered from header + body with Solicited Event
            hdr.buffer().putInt(0, 0xCAFE);
            SendRequest write = new SendRequest().write(1, body, 0, 512, addr + 63 * 1024, rkey);
            SendRequest send = new SendRequest().send(2, hdr, 0, 16);
            send.sgl.add(body, 0, 512);
            send.solicited = true;
            write.signaled = false;
            write.next = send;
            conn.queuePair().postSend(write);

            // server: sleep on the channel; poll after every arming, so no completion is missed
            WorkCompletion[] wc = {new WorkCompletion()};
            scq.requestNotify(true);
            while (scq.poll(wc, 1) == 0) {
                if (channel.next(10, TimeUnit.SECONDS) == null) {
                    throw new IllegalStateException("no completion within 10 s");
                }
                scq.requestNotify(true);
            }
            if (!wc[0].isSuccess() || wc[0].byteLength != 16 + 512 || inbox.buffer().getInt(0) != 0xCAFE) {
                throw new IllegalStateException("unexpected " + wc[0]);
            }
            ccq.await(wc, 1, 10, TimeUnit.SECONDS); // the client's Send completed
            conn.close();
            sconn.close();
        }
    }
}
// README-END
