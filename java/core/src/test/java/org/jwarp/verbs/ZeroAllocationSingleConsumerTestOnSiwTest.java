package org.jwarp.verbs;

import org.junit.jupiter.api.Tag;

/**
 * {@link ZeroAllocationTest} with single-consumer CQs and QPs on the DiSNI provider over the kernel's
 * siw0 ({@link DeviceUnderTest#siw()}): posts and polls without a monitor, every post a re-post.
 * Guest only; fails when the device is missing.
 */
@Tag("device")
class ZeroAllocationSingleConsumerTestOnSiwTest extends ZeroAllocationTest {
    ZeroAllocationSingleConsumerTestOnSiwTest() {
        super(DeviceUnderTest.siw(), true);
    }
}
