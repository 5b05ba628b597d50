package org.jwarp.verbs;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Tag;

/**
 * {@link ProviderContractTest} on the DiSNI provider over the kernel's soft-RoCE device rxe0
 * (10.78.0.1 in the guest, override with {@code -Djwarp.it.rxe=ADDR}): no MPA, the RFC 6581 §9
 * negotiation travels in the IB CM private data. Guest only; fails when the device is missing. The silent
 * address is a host on rxe0's dummy network: dummy1 drops every packet.
 */
@Tag("device")
class ProviderContractTestOnRxeTest extends ProviderContractTest {
    @Override
    protected String providerName() {
        return "disni";
    }

    @Override
    protected InetAddress bindAddress() throws Exception {
        return InetAddress.getByName(System.getProperty("jwarp.it.rxe", "10.78.0.1"));
    }

    @Override
    protected InetSocketAddress silentAddress() throws Exception {
        byte[] a = bindAddress().getAddress();
        a[3] = 99;
        return new InetSocketAddress(InetAddress.getByAddress(a), nextPort());
    }
}
