package org.jwarp.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.function.Supplier;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The device-free contract of the native await (JwarpNative.cqAwait, extension version 9, RFC 5040
 * §5.5 completion notification): bad handles give -EINVAL without touching memory, and the wake
 * eventfd that lets close() end a wait is made, signalled (any number of times) and closed with
 * every failure reported as its errno. The wait itself needs a device: ProviderContractTest and
 * ZeroAllocationTest drive it on siw0 and rxe0 in the guest.
 */
class CqAwaitNativeTest {
    private static final int EBADF = 9;

    @Test
    @Tag("native")
    @DisplayName("cqAwait/cqAckEvents refuse null handles; the wake fd's signal and close report errno")
    @SuppressWarnings("unchecked")
    void argumentsAndWakeFd_5040_5_5() {
        Object[] r = ((Supplier<Object[]>) DisniRuntime.get().newInstance("org.jwarp.disni.impl.CqAwaitProbe",
                Supplier.class)).get();
        int einval = (Integer) r[0];
        assertEquals(-einval, r[1], "cqAwait without a CQ or channel");
        assertEquals(-einval, r[2], "cqAwait with nothing valid");
        assertEquals(-einval, r[3], "cqAckEvents without a CQ");
        assertTrue((Integer) r[4] >= 0, "wakeCreate gave fd " + r[4]);
        assertEquals(0, r[5], "first wakeSignal");
        assertEquals(0, r[6], "second wakeSignal (the fd stays readable)");
        assertEquals(0, r[7], "wakeClose");
        assertEquals(EBADF, r[8], "wakeClose of a closed fd reports EBADF (Linux)");
        assertEquals(einval, r[9], "wakeSignal(-1)");
    }
}
