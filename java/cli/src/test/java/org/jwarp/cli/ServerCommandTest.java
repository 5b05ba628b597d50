package org.jwarp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ServerSocket;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code jwarp server} answering {@code jwarp client} over loopback for each op and model. */
class ServerCommandTest {

    static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @ParameterizedTest(name = "server/client --op {0} {1}")
    @CsvSource({"send,''", "write,''", "read,''", "send,--p2p", "write,--p2p", "read,--p2p"})
    void serverServesClient(String op, String p2p) throws Exception {
        int port = freePort();
        CompletableFuture<Integer> server = CompletableFuture.supplyAsync(() -> JwarpCli.run("server", "--bind",
                "127.0.0.1", "--port", String.valueOf(port), "--count", "1", "--p2p"));
        CliCapture c = null;
        for (int attempt = 0; attempt < 50; attempt++) {
            String[] args = p2p.isEmpty()
                    ? new String[] {"client", "127.0.0.1", "--port", String.valueOf(port), "--op", op, "--iters", "200",
                            "--size", "1024", "--json"}
                    : new String[] {"client", "127.0.0.1", "--port", String.valueOf(port), "--op", op, "--iters", "200",
                            "--size", "1024", "--json", "--p2p", "--rtr", "read"};
            c = CliCapture.run(args);
            if (c.exit() == 0 || !c.err().contains("refused")) {
                break;
            }
            Thread.sleep(100); // server still binding
        }
        assertEquals(0, c.exit(), c.out() + c.err());
        assertEquals(List.of(op), c.strings("op"));
        assertEquals(1024.0, c.numbers("bytes").get(0));
        assertTrue(c.numbers("p99Us").get(0) > 0);
        assertTrue(c.numbers("bandwidthMBps").get(0) > 0);
        assertEquals(p2p.isEmpty() ? List.<String>of() : List.of("read"), c.strings("rtr"));
        assertEquals(0, server.get(20, TimeUnit.SECONDS));
    }
}
