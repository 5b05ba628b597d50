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
        if (!Files.isExecutable(peerBinary())) {
            fail("the C peer " + peerBinary() + " is not built: run `make -C native/interop` (scripts/guest-tests does)");
        }
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
