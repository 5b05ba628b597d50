package org.jwarp.verbs;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Tag;

/**
 * {@link MiddlewareContractTest} on the DiSNI provider over the kernel's rxe0 (10.78.0.1 in the
 * guest, override with {@code -Djwarp.it.rxe=ADDR}): SRQs, completion channels and async events through
 * jwarp's libdisni. Guest only; fails when the device is missing. The silent address is a host on
 * rxe0's dummy network (dummy1 drops every packet). A CQ overrun raises IBV_EVENT_CQ_ERR; the
 * provider moves no QP.
 */
@Tag("device")
class MiddlewareContractTestOnRxeTest extends MiddlewareContractTest {
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

    @Override
    protected boolean overrunFailsQueuePairs() {
        return false;
    }

    @Override
    protected int contentionMessages() {
        return 300; // the guest runs under emulation
    }
}
