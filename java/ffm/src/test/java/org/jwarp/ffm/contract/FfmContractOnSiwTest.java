package org.jwarp.ffm.contract;

import org.jwarp.verbs.DeviceUnderTest;
import org.jwarp.verbs.ProviderContractTest;
import org.junit.jupiter.api.Tag;

/**
 * Core's {@link ProviderContractTest} on the ffm provider over the kernel's siw0 (guest only, JDK 25;
 * fails when the device is missing). Differences from the other providers are the device's, as in
 * the DiSNI provider's siw suite.
 */
@Tag("device")
class FfmContractOnSiwTest extends ProviderContractTest {
    FfmContractOnSiwTest() {
        super(DeviceUnderTest.siw("ffm"));
    }

    /** siw completes a Send when transmitted and a Read when its response arrives (as DiSNI's siw suite). */
    @Override
    protected boolean sendCompletesAfterEarlierReads() {
        return false;
    }

    /** Kernel siw 6.1's page-crossing copy of Read Responses of at most 32 bytes (as DiSNI's siw suite). */
    @Override
    protected boolean shortReadAcrossPageIntact() {
        return false;
    }
}
