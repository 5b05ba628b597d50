package org.jwarp.verbs;

import org.junit.jupiter.api.Tag;

/**
 * {@link MiddlewareContractTest} on the DiSNI provider over the kernel's rxe0
 * ({@link DeviceUnderTest#rxe()}): SRQs, completion channels and async events through jwarp's
 * libdisni. Guest only; fails when the device is missing. A CQ overrun raises IBV_EVENT_CQ_ERR; the
 * provider moves no QP.
 */
@Tag("device")
class MiddlewareContractTestOnRxeTest extends MiddlewareContractTest {
    MiddlewareContractTestOnRxeTest() {
        super(DeviceUnderTest.rxe());
    }

    @Override
    protected boolean overrunFailsQueuePairs() {
        return false;
    }

    @Override
    protected int contentionMessages() {
        return 300; // the guest runs under emulation
    }

    @Override
    protected boolean shortReceiveRaisesQpFatal() {
        return false; // as ProviderContractTestOnRxeTest: rxe raises no QP event
    }

    @Override
    protected QueuePair.QpState shortReceiveQpState() {
        return QueuePair.QpState.RTS; // as ProviderContractTestOnRxeTest: nothing tells the provider
    }
}
