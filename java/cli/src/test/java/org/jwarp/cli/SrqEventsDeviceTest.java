package org.jwarp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code jwarp server --srq --events} against {@code jwarp client --srq --events --verify} on the
 * DiSNI provider over siw0 and rxe0 in the qemu guest: receive buffers from {@code ibv_srq}
 * (RFC 5041 §5.1 untagged buffers) and every wait a sleep on an {@code ibv_comp_channel}. Guest
 * only; fails when a device is missing. The soft loopback run is {@link SrqEventsCommandTest}.
 */
@Tag("guest")
@Tag("device")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SrqEventsDeviceTest {
    @BeforeAll
    void guestAndWarmUp() throws Exception {
        GuestCli.requireGuest(SrqEventsDeviceTest.class);
        GuestCli.warmUp(() -> run("siw0", "send", 5, "--sge", "1"));
    }

    static CliCapture run(String dev, String op, int iters, String... clientOpts) throws Exception {
        List<String> opts = new ArrayList<>(List.of("--bind", GuestCli.ip(dev), "--srq", "--events"));
        opts.addAll(List.of(clientOpts));
        GuestCli.Run r = GuestCli.run(dev, List.of("--sge", "2", "--verify", "--srq", "--events"), op, iters, opts);
        CliCapture c = r.client();
        assertTrue(c.out().contains("\"srq\":true") && c.out().contains("\"events\":true"), r.why());
        System.out.println("client/server disni " + dev + " --op " + op + " --srq --events: " + c.out().strip());
        return c;
    }

    @ParameterizedTest(name = "jwarp client --provider disni --op {0} on {1} --srq --events --verify {2}")
    @CsvSource({"send,siw0,'--sge,2'", "write,siw0,'--sge,2'", "read,siw0,'--sge,1'",
            "send,rxe0,'--sge,2'", "write,rxe0,'--sge,2'", "read,rxe0,'--sge,1'"})
    @DisplayName("--srq and --events on siw0/rxe0, payload verified (RFC 5041 §5.1)")
    void srqAndEventsOnDevice_5041_5_1(String op, String dev, String opts) throws Exception {
        CliCapture c = run(dev, op, 100, opts.split(","));
        assertEquals(List.of(op), c.strings("op"));
    }
}
