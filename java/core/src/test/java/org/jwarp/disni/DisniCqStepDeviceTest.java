package org.jwarp.disni;

import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The DiSNI provider's CQ while a thread awaits it in native steps ({@code cqAwait} under the CQ's
 * monitor, up to 100 ms each; RFC 5040 §5.5 completion notification): a step is held by the test
 * ({@code org.jwarp.disni.impl.CqStepProbe}, inside the DiSNI loader), and meanwhile a QP is made
 * and closed on the CQ, and a poll from another thread gets in before the await's next step. On
 * real devices (siw0 and rxe0 in the guest, override with {@code -Djwarp.it.devices=addr,addr});
 * guest only, fails when a device is missing.
 */
@Tag("device")
class DisniCqStepDeviceTest {
    static Stream<String> addresses() {
        return Stream.of(System.getProperty("jwarp.it.devices", "10.77.0.1,10.78.0.1").split(","));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("addresses")
    @DisplayName("RFC 5040 §5.5: QPs come and go and a poll goes before the next step while another thread awaits the CQ")
    @SuppressWarnings("unchecked")
    void queuePairsComeAndGoAndPollsGetInWhileAnotherThreadAwaitsTheCq_5040_5_5(String address) {
        ((Consumer<String>) DisniRuntime.get().newInstance("org.jwarp.disni.impl.CqStepProbe", Consumer.class))
                .accept(address);
    }
}
