package org.jwarp.verbs;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Tag;

/**
 * {@link ProviderContractTest} on the DiSNI provider over the kernel's soft-iWARP device siw0
 * (10.77.0.1 in the guest, override with {@code -Djwarp.it.siw=ADDR}): RFC 5044 MPA with the
 * RFC 6581 setup done by the kernel. Guest only; fails when the device is missing. The silent
 * address is a host on siw0's dummy network: dummy0 drops every packet.
 */
@Tag("device")
class ProviderContractTestOnSiwTest extends ProviderContractTest {
    @Override
    protected String providerName() {
        return "disni";
    }

    @Override
    protected InetAddress bindAddress() throws Exception {
        return InetAddress.getByName(System.getProperty("jwarp.it.siw", "10.77.0.1"));
    }

    @Override
    protected InetSocketAddress silentAddress() throws Exception {
        byte[] a = bindAddress().getAddress();
        a[3] = 99;
        return new InetSocketAddress(InetAddress.getByAddress(a), nextPort());
    }
}
