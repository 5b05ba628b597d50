package org.jwarp.verbs;

import org.junit.jupiter.api.Tag;

/**
 * {@link MiddlewareContractTest} on the DiSNI provider over the kernel's siw0
 * ({@link DeviceUnderTest#siw()}): SRQs, completion channels and async events through jwarp's
 * libdisni. Guest only; fails when the device is missing. A CQ overrun raises IBV_EVENT_CQ_ERR, and
 * siw ends the stream whose receive found the CQ full (seen in the guest); the provider moves no QP.
 */
@Tag("device")
class MiddlewareContractTestOnSiwTest extends MiddlewareContractTest {
    MiddlewareContractTestOnSiwTest() {
        super(DeviceUnderTest.siw());
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
