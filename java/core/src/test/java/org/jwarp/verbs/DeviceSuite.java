package org.jwarp.verbs;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * What the provider contract suites ({@link ProviderContractTest}, {@link MiddlewareContractTest})
 * share: the {@link DeviceUnderTest} named by the concrete class, its provider opened once for the
 * class (a device that is missing fails the suite there; nothing is skipped) and closed after it,
 * and a fresh port per listener, so no case meets another's listener or TIME_WAIT.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class DeviceSuite {
    private static final AtomicInteger PORT = new AtomicInteger(21000 + (int) (ProcessHandle.current().pid() % 500) * 20);

    /** The device this suite runs on, and its provider. */
    protected final DeviceUnderTest device;
    protected RdmaProvider provider;

    protected DeviceSuite(DeviceUnderTest device) {
        this.device = device;
    }

    /** The provider name given to {@link Rdma#open(String)}. */
    protected String providerName() {
        return device.providerName();
    }

    /** The local address both ends bind to (the device serves it). */
    protected InetAddress bindAddress() throws Exception {
        return device.address();
    }

    /**
     * An address where connection setup gets no answer at all, so only the caller's timeout or a
     * cancel can end it.
     */
    protected InetSocketAddress silentAddress() throws Exception {
        return device.silentAddress(nextPort());
    }

    protected int nextPort() {
        return PORT.incrementAndGet();
    }

    @BeforeAll
    void openProvider() throws Exception {
        provider = device.open(getClass());
    }

    @AfterAll
    void closeProvider() throws Exception {
        device.close();
    }
}
