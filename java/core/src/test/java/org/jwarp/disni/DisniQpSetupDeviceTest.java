package org.jwarp.disni;

import java.util.function.BiConsumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Queue-pair creation of the DiSNI provider when it fails part-way (RFC 5040 §8: the RNIC's QP
 * resources), on real devices (siw0 and rxe0 in the guest, override with
 * {@code -Djwarp.it.devices=addr,addr}); the cases run inside the DiSNI loader
 * ({@code org.jwarp.disni.impl.QpSetupProbe}). Guest only; fails when a device is missing.
 */
@Tag("device")
class DisniQpSetupDeviceTest {
    static Stream<String> addresses() {
        return Stream.of(System.getProperty("jwarp.it.devices", "10.77.0.1,10.78.0.1").split(","));
    }

    @SuppressWarnings("unchecked")
    static void run(String which, String address) {
        ((BiConsumer<String, String>) DisniRuntime.get().newInstance("org.jwarp.disni.impl.QpSetupProbe",
                BiConsumer.class)).accept(which, address);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("addresses")
    @DisplayName("RFC 5040 §8: a QP whose Java side fails after rdma_create_qp is destroyed; its CQ is free again")
    void qpDestroyedWhenSetupFailsAfterCreation_5040_8(String address) {
        run("leak", address);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("addresses")
    @DisplayName("RFC 5040 §8: an SGE request whose createQP threw before reaching the device does not apply to the "
            + "thread's next rdma_create_qp")
    void sgeRequestClearedWhenCreateQpThrowsEarly_5040_8(String address) {
        run("stale", address);
    }
}
