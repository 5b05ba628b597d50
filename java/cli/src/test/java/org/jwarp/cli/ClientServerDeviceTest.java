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
 * {@code jwarp client} against {@code jwarp server} on the DiSNI provider over the kernel's
 * siw0 (iWARP, RFC 5040/5041 over MPA) and rxe0 (RoCE) in the qemu guest, with scatter-gather
 * lists, WR chains, inline data and end-to-end payload verification (RFC 5041 §5.3: one message
 * gathered from / scattered into several SGEs), and the client's device chosen by the kernel's
 * route when no {@code --bind} is given. Both ends run in this JVM. Guest only (the addresses
 * exist only there); fails when a device is missing. The soft provider's loopback run of the
 * same options is {@link ServerCommandTest#scatterGatherChainsInlineVerified_5041_5_3}.
 */
@Tag("guest")
@Tag("device")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClientServerDeviceTest {
    @BeforeAll
    void guestAndWarmUp() throws Exception {
        GuestCli.requireGuest(ClientServerDeviceTest.class);
        GuestCli.warmUp(() -> run("siw0", "send", true, 5));
    }

    /** Runs a server and a client with {@code clientOpts}; returns the client's capture (exit 0 asserted). */
    static CliCapture run(String dev, String op, boolean bind, int iters, String... clientOpts) throws Exception {
        List<String> opts = new ArrayList<>();
        if (bind) {
            opts.addAll(List.of("--bind", GuestCli.ip(dev)));
        }
        opts.addAll(List.of(clientOpts));
        GuestCli.Run r = GuestCli.run(dev, List.of("--sge", "4", "--inline-size", "64", "--verify"), op, iters, opts);
        CliCapture c = r.client();
        assertTrue(c.out().contains("\"verify\":true"), r.why());
        assertEquals(List.of(GuestCli.ip(dev)), c.strings("bind"), r.why());
        System.out.println("client/server disni " + dev + " --op " + op + " " + String.join(" ", clientOpts) + ": "
                + c.out().strip());
        return c;
    }

    @ParameterizedTest(name = "jwarp client --provider disni --bind {1} --op {0} {2} --verify")
    @CsvSource({
            "send,siw0,'--sge,4,--post-list,8,--inline-size,64'",
            "write,siw0,'--sge,4,--post-list,8,--inline-size,64'",
            "read,siw0,'--sge,1,--post-list,8'",
            "send,rxe0,'--sge,4,--post-list,8,--inline-size,64'",
            "write,rxe0,'--sge,4,--post-list,8,--inline-size,64'",
            "read,rxe0,'--sge,1,--post-list,8'"})
    @DisplayName("SGL, chains and inline on siw0/rxe0, payload verified end to end (RFC 5041 §5.3)")
    void scatterGatherChainsInlineVerifiedOnDevice_5041_5_3(String op, String dev, String opts) throws Exception {
        CliCapture c = run(dev, op, true, 100, opts.split(","));
        assertEquals(List.of(op), c.strings("op"));
        assertEquals(op.equals("read") ? 1.0 : 4.0, c.numbers("sge").get(0));
        assertEquals(8.0, c.numbers("postList").get(0));
        assertEquals(op.equals("read") ? 0.0 : 64.0, c.numbers("inlineSize").get(0));
    }

    @ParameterizedTest(name = "jwarp client {0}-address --provider disni (no --bind) opens {0} by the route")
    @CsvSource({"siw0", "rxe0"})
    @DisplayName("Without --bind the client opens the device the kernel routes from to the server, not 127.0.0.1")
    void clientPicksDeviceByRoute(String dev) throws Exception {
        run(dev, "send", false, 100);
    }
}
