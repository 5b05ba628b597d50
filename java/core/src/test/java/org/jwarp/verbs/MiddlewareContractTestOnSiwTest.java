package org.jwarp.verbs;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Tag;

/**
 * {@link MiddlewareContractTest} on the DiSNI provider over the kernel's siw0 (10.77.0.1 in the
 * guest, override with {@code -Djwarp.it.siw=ADDR}): SRQs, completion channels and async events through
 * jwarp's libdisni. Guest only; fails when the device is missing. The silent address is a host on
 * siw0's dummy network (dummy0 drops every packet). A CQ overrun raises IBV_EVENT_CQ_ERR, and siw
 * ends the stream whose receive found the CQ full (seen in the guest); the provider moves no QP.
 */
@Tag("device")
class MiddlewareContractTestOnSiwTest extends MiddlewareContractTest {
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

    @Override
    protected boolean overrunFailsQueuePairs() {
        return false;
    }

    @Override
    protected boolean solicitedOnlyHonoured() {
        return false; // siw_rqe_complete notifies without the Solicited Event flag
    }

    @Override
    protected int contentionMessages() {
        return 300; // the guest runs under emulation
    }
}
