package org.jwarp.verbs;

/**
 * {@link MiddlewareContractTest} on the embedded soft provider over 127.0.0.1
 * ({@link DeviceUnderTest#soft()}; host, default run). A CQ overrun sends the QPs on the CQ to ERR.
 */
class MiddlewareContractTestOnSoftTest extends MiddlewareContractTest {
    MiddlewareContractTestOnSoftTest() {
        super(DeviceUnderTest.soft());
    }

    @Override
    protected boolean overrunFailsQueuePairs() {
        return true;
    }
}
