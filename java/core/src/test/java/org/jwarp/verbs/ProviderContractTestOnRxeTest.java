package org.jwarp.verbs;

import org.junit.jupiter.api.Tag;

/**
 * {@link ProviderContractTest} on the DiSNI provider over the kernel's rxe0 ({@link DeviceUnderTest#rxe()}):
 * no MPA, the RFC 6581 §9 negotiation travels in the IB CM private data. Guest only; fails when the
 * device is missing.
 */
@Tag("device")
class ProviderContractTestOnRxeTest extends ProviderContractTest {
    ProviderContractTestOnRxeTest() {
        super(DeviceUnderTest.rxe());
    }
}
