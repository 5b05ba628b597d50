package org.jwarp.verbs;

import org.junit.jupiter.api.Tag;

/**
 * {@link ProviderContractTest} on the DiSNI provider over the kernel's rxe0 ({@link DeviceUnderTest#rxe()}):
 * no MPA, the RFC 6581 §9 negotiation travels in the IB CM private data. Guest only; fails when the
 * device is missing. A receive too short for its Send completes LOC_QP_OP_ERR here (seen in the
 * guest), not LOC_LEN_ERR as on siw and soft.
 */
@Tag("device")
class ProviderContractTestOnRxeTest extends ProviderContractTest {
    ProviderContractTestOnRxeTest() {
        super(DeviceUnderTest.rxe());
    }

    /** rxe (6.1) completes the short receive with IBV_WC_LOC_QP_OP_ERR (seen in the guest). */
    @Override
    protected WcStatus shortReceiveStatus() {
        return WcStatus.LOC_QP_OP_ERR;
    }
}
