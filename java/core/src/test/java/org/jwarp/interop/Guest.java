package org.jwarp.interop;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Where the guest-tagged interop tests run: inside {@code scripts/siw-guest}, which sets
 * {@code JWARP_GUEST=1} and creates the kernel soft-iWARP device {@code siw0} on 10.77.0.1.
 * Outside it these tests fail loudly instead of skipping, so a CI run without a device is red.
 * They are tagged {@code guest} and also {@code device}, which the java module's surefire
 * profiles already exclude from the host build.
 */
final class Guest {
    private static final AtomicInteger NEXT_PORT = new AtomicInteger(7500);

    private Guest() {
    }

    /** Fails the test unless it runs in the siw guest with device {@code siw0} present. */
    static void require() {
        if (!"1".equals(System.getenv("JWARP_GUEST"))) {
            fail("JWARP_GUEST is not set: the @Tag(\"guest\") interop tests need the kernel siw device and run only "
                    + "inside scripts/siw-guest (run scripts/guest-tests); they are excluded from the default build");
        }
        String dev = System.getenv().getOrDefault("JWARP_SIW_DEV", "siw0");
        if (!Files.isDirectory(Path.of("/sys/class/infiniband", dev))) {
            fail("RDMA device " + dev + " is missing (/sys/class/infiniband/" + dev + "): the guest did not bring up siw");
        }
        warmUp();
        if (!Files.isExecutable(peerBinary())) {
            fail("the C peer " + peerBinary() + " is not built: run `make -C native/interop` (scripts/guest-tests does)");
        }
    }

    private static boolean warm;

    /**
     * Loads and runs the MPA and RDMAP code once in memory. siw gives an initiator 5 s to send its
     * MPA Request after TCP is up and a responder 10 s to reply; a cold JVM under TCG can need
     * longer than that just to load the classes of the first connection.
     */
    static synchronized void warmUp() {
        if (warm) {
            return;
        }
        warm = true;
        var ini = new org.jwarp.negotiation.InitiatorNegotiator(org.jwarp.negotiation.InitiatorConfig.builder().build());
        var res = new org.jwarp.negotiation.ResponderNegotiator(org.jwarp.negotiation.ResponderConfig.builder().build());
        try {
            var req = org.jwarp.mpa.MpaFrame.decode(ini.createRequest().toBytes(), org.jwarp.mpa.MpaFrameLimits.RFC);
            var d = res.respond(req);
            ini.onReply(org.jwarp.mpa.MpaFrame.decode(d.frameBytes(), org.jwarp.mpa.MpaFrameLimits.RFC));
        } catch (org.jwarp.mpa.MpaDecodeException e) {
            throw new AssertionError("MPA warm-up failed", e);
        }
        var pd = new org.jwarp.memory.StagDomain();
        var stags = new org.jwarp.memory.StagTable(8);
        var s = org.jwarp.rdmap.RdmapSettings.forMss(1460, true, false, 4, 4, 8, 8);
        var none = new org.jwarp.rdmap.RdmapListener() {
            @Override
            public void onSendCompletion(long wrId, int opcode, int byteLength) {
            }

            @Override
            public void onReceiveCompletion(long wrId, int opcode, int byteLength, int invalidatedStag) {
            }

            @Override
            public void onLocalError(org.jwarp.ground.TermCode code, String detail) {
            }

            @Override
            public void onPeerTerminate(org.jwarp.rdmap.TerminateMessage term) {
            }
        };
        var a = new org.jwarp.rdmap.RdmapEndpoint(s, pd, stags, none);
        var b = new org.jwarp.rdmap.RdmapEndpoint(s, pd, stags, none);
        java.nio.ByteBuffer data = java.nio.ByteBuffer.allocateDirect(64);
        java.nio.ByteBuffer wire = java.nio.ByteBuffer.allocateDirect(1 << 16);
        b.postReceive(1, java.nio.ByteBuffer.allocateDirect(64), 0, 64);
        a.postSend(1, org.jwarp.rdmap.RdmapOpcode.SEND, data, 0, 64, 0, true);
        a.transmit(wire);
        wire.flip();
        b.receive(wire);
    }

    static String siwIp() {
        return System.getenv().getOrDefault("JWARP_SIW_IP", "10.77.0.1");
    }

    /** A fresh TCP port per connection, so no case meets another's TIME_WAIT or listener. */
    static int port() {
        return NEXT_PORT.getAndIncrement();
    }

    static InetSocketAddress siwAddress(int port) {
        return new InetSocketAddress(siwIp(), port);
    }

    /** The project's rdma_cm peer, {@code native/interop/build/siw_peer}. */
    static Path peerBinary() {
        String p = System.getProperty("jwarp.siwPeer", System.getenv("JWARP_SIW_PEER"));
        if (p != null) {
            return Path.of(p);
        }
        Path dir = Path.of("").toAbsolutePath();
        for (Path d = dir; d != null; d = d.getParent()) {
            Path c = d.resolve("native/interop/build/siw_peer");
            if (Files.exists(c)) {
                return c;
            }
        }
        return dir.resolve("native/interop/build/siw_peer");
    }

    /** Kernel and siw facts for the report. */
    static String kernel() {
        try {
            return Files.readString(Path.of("/proc/version")).trim();
        } catch (IOException e) {
            return "unknown (" + e + ")";
        }
    }
}
