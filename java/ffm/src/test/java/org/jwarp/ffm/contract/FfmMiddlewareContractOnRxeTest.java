package org.jwarp.ffm.contract;

import org.jwarp.verbs.DeviceUnderTest;
import org.jwarp.verbs.MiddlewareContractTest;
import org.jwarp.verbs.QueuePair;
import org.junit.jupiter.api.Tag;

/**
 * Core's {@link MiddlewareContractTest} on the ffm provider over the kernel's rxe0 (guest only,
 * JDK 25; fails when the device is missing). Differences from the other providers are the
 * device's, as in the DiSNI provider's rxe suite.
 */
@Tag("device")
class FfmMiddlewareContractOnRxeTest extends MiddlewareContractTest {
    FfmMiddlewareContractOnRxeTest() {
        super(DeviceUnderTest.rxe("ffm"));
    }

    /** rxe raises IBV_EVENT_CQ_ERR; the provider moves no QP (as DiSNI's rxe suite). */
    @Override
    protected boolean overrunFailsQueuePairs() {
        return false;
    }

    @Override
    protected int contentionMessages() {
        return 300; // the guest runs under emulation
    }

    /** rxe (6.1) raises no QP event for a receive too short for its Send (as DiSNI's rxe suite). */
    @Override
    protected boolean shortReceiveRaisesQpFatal() {
        return false;
    }

    /** No event tells the provider of the device's ERR, so the state it tracks stays RTS. */
    @Override
    protected QueuePair.QpState shortReceiveQpState() {
        return QueuePair.QpState.RTS;
    }
}
