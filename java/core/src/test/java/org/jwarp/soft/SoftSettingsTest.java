package org.jwarp.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import org.jwarp.verbs.Rdma;
import org.jwarp.verbs.RdmaProvider;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Settings handed to {@code Rdma.open("soft", settings)}: the jwarp.soft.* names of README's table. */
class SoftSettingsTest {
    @Test
    @DisplayName("Rdma.open(\"soft\", settings) configures the provider by the system-property names")
    void openWithSettings() throws Exception {
        try (RdmaProvider p = Rdma.open("soft", Map.of("jwarp.soft.pollSpinMicros", "0", "jwarp.soft.reactors", "2",
                "jwarp.soft.fpduStallTimeoutMs", "2500", "jwarp.disni.something", "x"))) {
            SoftConfig c = assertInstanceOf(SoftProvider.class, p).config();
            assertEquals(0, c.pollSpinMicros());
            assertEquals(2, c.reactors());
            assertEquals(Duration.ofMillis(2500), c.fpduStallTimeout());
            assertEquals(SoftConfig.defaults().pollLeaseMicros(), c.pollLeaseMicros(), "the rest keeps its default");
        }
    }

    @Test
    @DisplayName("An unknown jwarp.soft.* name or a value that is no number is rejected, naming it")
    void rejectsUnknownNamesAndBadValues() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Rdma.open("soft", Map.of("jwarp.soft.pollSpinMicro", "0")));
        assertTrue(e.getMessage().contains("jwarp.soft.pollSpinMicro"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> SoftConfig.fromSettings(Map.of("jwarp.soft.reactors", "two")));
        assertTrue(e.getMessage().contains("jwarp.soft.reactors"), e.getMessage());
    }

    @Test
    @DisplayName("Every name of SoftConfig's table reads back through fromSettings")
    void everyNameIsRead() {
        assertEquals(SoftConfig.class.getRecordComponents().length, SoftConfig.NAMES.size(),
                "one name per record component");
        assertEquals(SoftConfig.defaults(), SoftConfig.fromSettings(Map.of()));
    }

    @Test
    @DisplayName("The await strategy and the reactor busy-poll window are settings too, and a CQ takes the provider's default")
    void awaitSettings() throws Exception {
        SoftConfig c = SoftConfig.fromSettings(Map.of("jwarp.soft.pollSpinMicros", "7", "jwarp.soft.pollYields", "50",
                "jwarp.soft.reactorBusyPollMicros", "30"));
        assertEquals(50, c.pollYields());
        assertEquals(30, c.reactorBusyPollMicros());
        assertEquals(org.jwarp.verbs.AwaitStrategy.of(7, 50), c.awaitStrategy());
        try (SoftProvider p = new SoftProvider(c); SoftDevice d = p.open(SoftFixture.LOOPBACK)) {
            assertEquals(c.awaitStrategy(), d.createCompletionQueue(4).awaitStrategy());
            org.jwarp.verbs.AwaitStrategy mine = org.jwarp.verbs.AwaitStrategy.block();
            assertEquals(mine, d.createCompletionQueue(4, null, false, mine).awaitStrategy());
        }
        assertThrows(IllegalArgumentException.class, () -> SoftConfig.fromSettings(Map.of("jwarp.soft.pollYields", "-1")));
        assertThrows(IllegalArgumentException.class,
                () -> SoftConfig.fromSettings(Map.of("jwarp.soft.reactorBusyPollMicros", "1000001")));
    }

    @ParameterizedTest(name = "pollSpinMicros {0}, pollYields {1} -> spin {2} µs, {3} yields")
    @CsvSource({",, 2, 20", "0,, 0, 0", "0, 5, 0, 5", "0, 20, 0, 20", "7,, 7, 20", ", 0, 2, 0", "7, 50, 7, 50"})
    @DisplayName("The CQs' default await strategy per setting: pollSpinMicros=0 without pollYields blocks at once, a pollYields given always applies")
    void awaitStrategyPerSetting(String spin, String yields, long spinMicros, int expectedYields) {
        Map<String, String> settings = new HashMap<>();
        if (spin != null) {
            settings.put("jwarp.soft.pollSpinMicros", spin);
        }
        if (yields != null) {
            settings.put("jwarp.soft.pollYields", yields);
        }
        assertEquals(org.jwarp.verbs.AwaitStrategy.of(spinMicros, expectedYields),
                SoftConfig.fromSettings(settings).awaitStrategy(), settings::toString);
    }

    @Test
    @DisplayName("A constructor without pollYields applies the same rule: spin 0 blocks at once, another spin yields 20 times")
    void constructorWithoutYieldsBlocksAtSpinZero() {
        SoftConfig d = SoftConfig.defaults();
        SoftConfig off = new SoftConfig(d.initiatorTimeout(), d.responderTimeout(), d.decisionTimeout(), d.maxFpdu(),
                d.txBufferSize(), d.reactors(), 0, d.pollMaxStreams(), d.pollLeaseMicros(), d.fpduStallTimeout(),
                d.txStagingAreas());
        assertEquals(org.jwarp.verbs.AwaitStrategy.block(), off.awaitStrategy());
        assertEquals(org.jwarp.verbs.AwaitStrategy.of(2, 20), d.awaitStrategy());
    }
}
