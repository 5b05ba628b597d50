package org.jwarp.verbs;

/**
 * {@link ProviderContractTest} on the embedded soft provider over 127.0.0.1
 * ({@link DeviceUnderTest#soft()}; host, default run).
 */
class ProviderContractTestOnSoftTest extends ProviderContractTest {
    ProviderContractTestOnSoftTest() {
        super(DeviceUnderTest.soft());
    }
}
