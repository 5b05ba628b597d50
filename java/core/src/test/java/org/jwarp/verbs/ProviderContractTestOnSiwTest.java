package org.jwarp.verbs;

import org.junit.jupiter.api.Tag;

/**
 * {@link ProviderContractTest} on the DiSNI provider over the kernel's siw0 ({@link DeviceUnderTest#siw()}):
 * RFC 5044 MPA with the RFC 6581 setup done by the kernel. Guest only; fails when the device is missing.
 */
@Tag("device")
class ProviderContractTestOnSiwTest extends ProviderContractTest {
    ProviderContractTestOnSiwTest() {
        super(DeviceUnderTest.siw());
    }

    /**
     * siw completes a Send when it has been transmitted and a Read when its response arrives: the
     * Send after a Read pipeline may complete before the last (at most ORD) Reads; seen in 2 of 4
     * guest runs of readsBeyondOrdQueueAndCompleteInOrder.
     */
    @Override
    protected boolean sendCompletesAfterEarlierReads() {
        return false;
    }

    /** Kernel siw 6.1's page-crossing copy of Read Responses of at most 32 bytes (see the base method). */
    @Override
    protected boolean shortReadAcrossPageIntact() {
        return false;
    }

    /** DiSNI's wildcard listener never answers a request (see {@link ProviderContractTest#wildcardListenerAnswers}). */
    @Override
    protected boolean wildcardListenerAnswers() {
        return false;
    }
}
