package org.jwarp.ffm.contract;

import org.jwarp.verbs.DeviceUnderTest;
import org.jwarp.verbs.MiddlewareContractTest;
import org.junit.jupiter.api.Tag;

/**
 * Core's {@link MiddlewareContractTest} on the ffm provider over the kernel's siw0 (guest only,
 * JDK 25; fails when the device is missing): completion channels, asynchronous setup and events
 * through libibverbs and librdmacm bound with {@code java.lang.foreign}. Differences from the
 * other providers are the device's, as in the DiSNI provider's siw suite.
 */
@Tag("device")
class FfmMiddlewareContractOnSiwTest extends MiddlewareContractTest {
    FfmMiddlewareContractOnSiwTest() {
        super(DeviceUnderTest.siw("ffm"));
    }

    /** siw ends the stream whose receive found the CQ full; the provider moves no QP (as DiSNI's siw suite). */
    @Override
    protected boolean overrunFailsQueuePairs() {
        return false;
    }

    /** siw_rqe_complete notifies without the Solicited Event flag: the arm covers every completion. */
    @Override
    protected boolean solicitedOnlyHonoured() {
        return false;
    }

    @Override
    protected int contentionMessages() {
        return 300; // the guest runs under emulation
    }
}
