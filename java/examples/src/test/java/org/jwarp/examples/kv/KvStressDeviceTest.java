package org.jwarp.examples.kv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The key-value store's stress through the DiSNI provider on kernel devices: siw0 (iWARP) and rxe0
 * (RoCE) on the guest's 10.77.0.1 and 10.78.0.1 ({@code -Djwarp.it.devices=addr,addr} overrides),
 * 8 connections, 2 server threads, 2 CPU hogs, every byte verified: 10,000 operations per
 * connection by default, as on the host ({@code -Djwarp.kv.ops} sets them). A missing device or
 * provider fails the case; nothing is skipped.
 */
@Tag("device")
class KvStressDeviceTest {
    static Stream<String> addresses() {
        return Stream.of(System.getProperty("jwarp.it.devices", "10.77.0.1,10.78.0.1").split(","));
    }

    @ParameterizedTest
    @MethodSource("addresses")
    @Timeout(value = 900, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void eightConnectionsUnderTwoHogsOnDisni(String address) throws Exception {
        int ops = Integer.getInteger("jwarp.kv.ops", 10_000);
        KvStress.Options o = KvStress.Options.defaults().with("disni", address)
                .withLoad(8, ops, 2, 2).withTimeout(Duration.ofSeconds(720));
        KvStress.Report r = KvStress.run(o);
        System.out.println("kv stress, disni on " + address + ": " + r);
        assertEquals(8L * ops, r.ops());
        assertTrue(r.gets() > 0 && r.puts() > 0 && r.readBytes() > 0, r.toString());
    }
}
