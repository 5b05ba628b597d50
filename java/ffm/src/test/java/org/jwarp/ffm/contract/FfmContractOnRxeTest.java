package org.jwarp.ffm.contract;

import org.jwarp.verbs.DeviceUnderTest;
import org.jwarp.verbs.ProviderContractTest;
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
}
