package org.jwarp.ffm.contract;

import org.jwarp.verbs.DeviceUnderTest;
import org.jwarp.verbs.ZeroAllocationTest;
import org.junit.jupiter.api.Tag;

/**
 * Core's {@link ZeroAllocationTest} with single-consumer CQs and QPs on the ffm provider over the
 * kernel's siw0 (guest only, JDK 25; fails when the device is missing): posts and polls without a
 * monitor, every post a re-post of the slot's shape, and nothing allocated.
 */
@Tag("device")
class FfmZeroAllocationSingleConsumerOnSiwTest extends ZeroAllocationTest {
    FfmZeroAllocationSingleConsumerOnSiwTest() {
        super(DeviceUnderTest.siw("ffm"), true);
    }
}
