package org.jwarp.verbs;

import org.junit.jupiter.api.Tag;

/**
 * {@link ZeroAllocationTest} on the DiSNI provider over the kernel's rxe0 ({@link DeviceUnderTest#rxe()}).
 * Guest only; fails when the device is missing.
 */
@Tag("device")
class ZeroAllocationTestOnRxeTest extends ZeroAllocationTest {
    ZeroAllocationTestOnRxeTest() {
        super(DeviceUnderTest.rxe());
    }
}
