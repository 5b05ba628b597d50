package org.jwarp.verbs;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The device a provider contract suite ({@link ProviderContractTest}, {@link MiddlewareContractTest})
 * runs on, with the provider that serves it: where it lives, how to find an address that never
 * answers connection setup (RFC 5044 §7.1.2: a TCP connect or MPA Request without a reply), and
 * the check that the device exists. A device that is missing fails the suite in {@link #open};
 * nothing is skipped.
 *
 * <ul>
 * <li>{@link #soft()}: the embedded soft provider over 127.0.0.1 (host, default run). The silent
 * address is a TCP socket that is never accepted from: the kernel completes the handshake and the
 * MPA Request never gets a Reply. (The host's sandbox answers every outbound TCP connection, so no
 * remote address is reliably silent there.)
 * <li>{@link #siw()}: the DiSNI provider over the kernel's soft-iWARP device siw0 (10.77.0.1 in
 * the guest of {@code scripts/siw-guest}; override with {@code -Djwarp.it.siw=ADDR}): RFC 5044 MPA
 * with the RFC 6581 setup done by the kernel.
 * <li>{@link #rxe()}: the DiSNI provider over the kernel's soft-RoCE device rxe0 (10.78.0.1 in the
 * guest; override with {@code -Djwarp.it.rxe=ADDR}): no MPA, the RFC 6581 §9 negotiation travels
 * in the IB CM private data.
 * </ul>
 * On siw0 and rxe0 the silent address is host .99 of the device's /24: the guest puts each device
 * on a dummy interface (dummy0, dummy1), which drops every packet.
 */
public final class DeviceUnderTest implements AutoCloseable {
    private final String providerName;
    /** The kernel RDMA device (/sys/class/infiniband/NAME), or null for the soft provider. */
    private final String kernelDevice;
    private final String host;
    private RdmaProvider provider;
    private ServerSocket silent;

    private DeviceUnderTest(String providerName, String kernelDevice, String host) {
        this.providerName = providerName;
        this.kernelDevice = kernelDevice;
        this.host = host;
    }

    static DeviceUnderTest soft() {
        return new DeviceUnderTest("soft", null, "127.0.0.1");
    }

    static DeviceUnderTest siw() {
        return new DeviceUnderTest("disni", System.getenv().getOrDefault("JWARP_SIW_DEV", "siw0"),
                System.getProperty("jwarp.it.siw", "10.77.0.1"));
    }

    /** {@code provider} over the kernel's siw0 (the suites of another module's provider, e.g. ffm). */
    public static DeviceUnderTest siw(String provider) {
        return new DeviceUnderTest(provider, System.getenv().getOrDefault("JWARP_SIW_DEV", "siw0"),
                System.getProperty("jwarp.it.siw", "10.77.0.1"));
    }

    /** {@code provider} over the kernel's rxe0. */
    public static DeviceUnderTest rxe(String provider) {
        return new DeviceUnderTest(provider, System.getenv().getOrDefault("JWARP_RXE_DEV", "rxe0"),
                System.getProperty("jwarp.it.rxe", "10.78.0.1"));
    }

    static DeviceUnderTest rxe() {
        return new DeviceUnderTest("disni", System.getenv().getOrDefault("JWARP_RXE_DEV", "rxe0"),
                System.getProperty("jwarp.it.rxe", "10.78.0.1"));
    }

    /** The provider name given to {@link Rdma#open(String)}. */
    String providerName() {
        return providerName;
    }

    /** The local address both ends bind to. */
    InetAddress address() throws UnknownHostException {
        return InetAddress.getByName(host);
    }

    /**
     * Fails unless the kernel device is present, then opens the provider and the device at
     * {@link #address()} once (its info goes to stdout for the report).
     *
     * @param suite the test class, named in the failure and the report line
     */
    RdmaProvider open(Class<?> suite) throws Exception {
        if (kernelDevice != null && !Files.isDirectory(Path.of("/sys/class/infiniband", kernelDevice))) {
            fail("RDMA device " + kernelDevice + " is missing (/sys/class/infiniband/" + kernelDevice + "): "
                    + suite.getSimpleName() + " runs on the kernel's " + kernelDevice + " inside scripts/siw-guest"
                    + ("1".equals(System.getenv("JWARP_GUEST")) ? " (JWARP_GUEST=1: the guest did not bring it up)"
                            : " (JWARP_GUEST is not set)")
                    + "; run scripts/guest-tests --select " + suite.getName());
        }
        provider = Rdma.open(providerName);
        try (Device d = provider.open(address())) {
            System.out.println(suite.getSimpleName() + ": " + providerName + " on " + host + " -> " + d.info());
        }
        return provider;
    }

    /**
     * An address where connection setup gets no answer at all, so only the caller's timeout or a
     * cancel can end it.
     *
     * @param port a port nobody uses (the soft provider's silent socket picks its own)
     */
    InetSocketAddress silentAddress(int port) throws IOException {
        if (kernelDevice == null) {
            if (silent == null) {
                silent = new ServerSocket(0, 8, address());
            }
            return new InetSocketAddress(address(), silent.getLocalPort());
        }
        byte[] a = address().getAddress();
        a[3] = 99;
        return new InetSocketAddress(InetAddress.getByAddress(a), port);
    }

    /** Closes the provider and the silent socket. */
    @Override
    public void close() throws IOException {
        if (provider != null) {
            provider.close();
            provider = null;
        }
        if (silent != null) {
            silent.close();
            silent = null;
        }
    }
}
