package org.jwarp.ffm.contract;

import org.jwarp.verbs.DeviceUnderTest;
import org.jwarp.verbs.ProviderContractTest;
import org.jwarp.verbs.QueuePair;
import org.jwarp.verbs.WcStatus;
import org.junit.jupiter.api.Tag;

/**
 * Core's {@link ProviderContractTest} on the ffm provider over the kernel's rxe0 (guest only, JDK 25;
 * fails when the device is missing): no MPA, the RFC 6581 §9 negotiation travels in the IB CM
 * private data, as {@code CmNegotiation} builds it for both device providers.
 */
@Tag("device")
class FfmContractOnRxeTest extends ProviderContractTest {
    FfmContractOnRxeTest() {
        super(DeviceUnderTest.rxe("ffm"));
    }

    /** rxe (6.1) completes the short receive with IBV_WC_LOC_QP_OP_ERR (as DiSNI's rxe suite). */
    @Override
    protected WcStatus shortReceiveStatus() {
        return WcStatus.LOC_QP_OP_ERR;
    }

    /** rxe (6.1) moves its QP to ERR on the short receive without an async event (as DiSNI's rxe suite). */
    @Override
    protected boolean shortReceiveRaisesQpFatal() {
        return false;
    }

    /** No event tells the provider of the device's ERR, so the state it tracks stays RTS (as DiSNI's rxe suite). */
    @Override
    protected QueuePair.QpState shortReceiveQpState() {
        return QueuePair.QpState.RTS;
    }
}
