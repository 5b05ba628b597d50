package org.jwarp.verbs;

import org.junit.jupiter.api.Tag;

/**
 * {@link ZeroAllocationTest} with single-consumer CQs and QPs on the DiSNI provider over the kernel's
 * rxe0 ({@link DeviceUnderTest#rxe()}): posts and polls without a monitor, every post a re-post.
 * Guest only; fails when the device is missing.
 */
@Tag("device")
class ZeroAllocationSingleConsumerTestOnRxeTest extends ZeroAllocationTest {
    ZeroAllocationSingleConsumerTestOnRxeTest() {
        super(DeviceUnderTest.rxe(), true);
    }
}
