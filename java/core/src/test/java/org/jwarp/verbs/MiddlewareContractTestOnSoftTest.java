package org.jwarp.verbs;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.AfterAll;

/**
 * {@link MiddlewareContractTest} on the embedded soft provider over 127.0.0.1 (host, default run).
 * The silent address is a TCP socket never accepted from: the MPA Request gets no Reply.
 */
class MiddlewareContractTestOnSoftTest extends MiddlewareContractTest {
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

    @Override
    protected boolean overrunFailsQueuePairs() {
        return true;
    }

    @AfterAll
    void closeSilent() throws Exception {
        if (silent != null) {
            silent.close();
        }
    }
}
