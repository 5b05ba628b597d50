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

    /**
     * rxe (6.1) moves its QP to ERR on the short receive without an async event and without ending
     * the connection (seen in the guest: no event within 3 s, the later receive flushed, the sender's
     * Send REM_OP_ERR), so the DiSNI provider learns of nothing: no QP_FATAL.
     */
    @Override
    protected boolean shortReceiveRaisesQpFatal() {
        return false;
    }

    /**
     * The state the DiSNI provider tracks (from QP events and connection events) stays RTS on rxe:
     * the device's own QP is in ERR (the later receive flushes), but no event tells the provider
     * (seen in the guest; the sender's QP reads RTS too though its receive flushed).
     */
    @Override
    protected QueuePair.QpState shortReceiveQpState() {
        return QueuePair.QpState.RTS;
    }

    /** DiSNI's wildcard listener never answers a request (see {@link ProviderContractTest#wildcardListenerAnswers}). */
    @Override
    protected boolean wildcardListenerAnswers() {
        return false;
    }
}
