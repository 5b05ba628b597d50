package org.jwarp.verbs;

import org.junit.jupiter.api.Tag;

/**
 * {@link ZeroAllocationTest} on the DiSNI provider over the kernel's siw0 ({@link DeviceUnderTest#siw()}).
 * Guest only; fails when the device is missing.
 */
@Tag("device")
class ZeroAllocationTestOnSiwTest extends ZeroAllocationTest {
    ZeroAllocationTestOnSiwTest() {
        super(DeviceUnderTest.siw());
    }
}
