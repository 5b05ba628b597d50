package org.jwarp.bench;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jwarp.soft.SoftConfig;
import org.jwarp.soft.SoftProvider;
import org.jwarp.verbs.Access;
import org.jwarp.verbs.CompletionQueue;
import org.jwarp.verbs.Connection;
import org.jwarp.verbs.ConnectionParameters;
import org.jwarp.verbs.Device;
import org.jwarp.verbs.Listener;
import org.jwarp.verbs.MemoryRegion;
import org.jwarp.verbs.ProtectionDomain;
import org.jwarp.verbs.QueuePairConfig;
import org.jwarp.verbs.RdmaException;
import org.jwarp.ground.RtrType;

/**
 * One loopback connection of the embedded provider with both ends in this JVM (RFC 6581 §9.2
 * peer-to-peer setup, Write RTR), plus a registered buffer on each side; for the Soft* benchmarks.
 */
final class SoftPair implements AutoCloseable {
    final SoftProvider provider;
    final Device device;
    final ProtectionDomain pdA;
    final ProtectionDomain pdB;
    final CompletionQueue cqA;
    final CompletionQueue cqB;
    final Listener listener;
    final Connection initiator;
    final Connection responder;
    final MemoryRegion bufA;
    final MemoryRegion bufB;

    SoftPair(SoftConfig config, int bufferSize, int depth) throws Exception {
        provider = new SoftProvider(config);
        device = provider.open(InetAddress.getLoopbackAddress());
        pdA = device.allocateProtectionDomain();
        pdB = device.allocateProtectionDomain();
        cqA = device.createCompletionQueue(4 * depth + 8);
        cqB = device.createCompletionQueue(4 * depth + 8);
        listener = device.connectionManager().listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 8);
        ConnectionParameters p = ConnectionParameters.builder().peerToPeer(true).rtrTypes(RtrType.WRITE).build();
        CompletableFuture<Connection> acc = CompletableFuture.supplyAsync(() -> {
            try {
                return listener.next(Duration.ofSeconds(10)).accept(QueuePairConfig.of(pdB, cqB, depth), p);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        initiator = device.connectionManager().connect(listener.localAddress(), QueuePairConfig.of(pdA, cqA, depth), p,
                Duration.ofSeconds(10));
        responder = acc.get(10, TimeUnit.SECONDS);
        EnumSet<Access> all = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);
        bufA = pdA.register(ByteBuffer.allocateDirect(bufferSize), all);
        bufB = pdB.register(ByteBuffer.allocateDirect(bufferSize), all);
    }

    static void check(boolean ok, String what) throws RdmaException {
        if (!ok) {
            throw new RdmaException(what);
        }
    }

    @Override
    public void close() {
        initiator.close();
        responder.close();
        provider.close();
    }
}
