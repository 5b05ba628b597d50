package org.jwarp.verbs;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.AfterAll;

/**
 * {@link ProviderContractTest} on the embedded soft provider over 127.0.0.1 (host, default run).
 * The silent address is a TCP socket that is never accepted from: the kernel completes the
 * handshake and the MPA Request (RFC 5044 §7.1.2) never gets a Reply. (This machine's sandbox
 * answers every outbound TCP connection, so no remote address is reliably silent here.)
 */
class ProviderContractTestOnSoftTest extends ProviderContractTest {
    private ServerSocket silent;

    @Override
    protected String providerName() {
        return "soft";
    }

    @Override
    protected InetAddress bindAddress() throws Exception {
        return InetAddress.getByName("127.0.0.1");
    }

    @Override
    protected InetSocketAddress silentAddress() throws Exception {
        if (silent == null) {
            silent = new ServerSocket(0, 8, bindAddress());
        }
        return new InetSocketAddress(bindAddress(), silent.getLocalPort());
    }

    @AfterAll
    void closeSilent() throws Exception {
        if (silent != null) {
            silent.close();
        }
    }
}
