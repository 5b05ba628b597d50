package org.jwarp.ffm.contract;

import org.jwarp.verbs.DeviceUnderTest;
import org.jwarp.verbs.ZeroAllocationTest;
import org.junit.jupiter.api.Tag;

/**
 * Core's {@link ZeroAllocationTest} on the ffm provider over the kernel's rxe0 (guest only, JDK 25;
 * fails when the device is missing): Send, Write and Read round trips allocate nothing, by spin,
 * poll and await.
 */
@Tag("device")
class FfmZeroAllocationOnRxeTest extends ZeroAllocationTest {
    FfmZeroAllocationOnRxeTest() {
        super(DeviceUnderTest.rxe("ffm"));
    }
}
