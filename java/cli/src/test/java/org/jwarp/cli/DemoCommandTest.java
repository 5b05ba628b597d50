package org.jwarp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** {@code jwarp demo}: P2P setup over loopback, both frames decoded, latency and bandwidth per op. */
class DemoCommandTest {

    @Test
    @DisplayName("demo --json: both MPA frames, the chosen RTR, IRD/ORD of both sides and a result per op")
    void demoJson() {
        CliCapture c = CliCapture.run("demo", "--iters", "200", "--bw-iters", "40", "--bw-size", "16384", "--json");
        assertEquals(0, c.exit(), c.err());
        assertEquals(List.of("request", "reply"), c.strings("frame"));
        assertEquals(List.of("write", "write"), c.strings("rtr"), "initiator and responder agree on the RTR");
        assertEquals(List.of("send", "write", "read"), c.strings("op"));
        assertEquals(3, c.numbers("p50Us").size());
        assertEquals(3, c.numbers("p999Us").size());
        for (double bw : c.numbers("bandwidthMBps")) {
            assertTrue(bw > 0, "bandwidth " + bw);
        }
        for (double p : c.numbers("p50Us")) {
            assertTrue(p > 0, "latency " + p);
        }
        assertTrue(c.out().contains("\"peerToPeer\":true"), c.out());
        assertEquals(200.0 + 40, c.numbers("responderMessages").get(0), "responder answered every Send");
    }

    @Test
    @DisplayName("demo text output: frames, RTR, IRD/ORD lines and one row per op; progress goes to stderr")
    void demoText() {
        CliCapture c = CliCapture.run("demo", "--iters", "100", "--bw-iters", "20", "--bw-size", "8192",
                "--rtr", "read", "--ird", "4", "--ord", "2");
        assertEquals(0, c.exit(), c.err());
        String o = c.out();
        assertTrue(o.contains("MPA Request  (initiator -> responder): {\"frame\":\"request\""), o);
        assertTrue(o.contains("MPA Reply    (responder -> initiator): {\"frame\":\"reply\""), o);
        assertTrue(o.contains("RTR: read"), o);
        assertTrue(o.contains("initiator: ird 4 ord 2"), o);
        assertTrue(o.contains("responder: ird 2 ord 2"), "responder IRD = initiator ORD, ORD <= initiator IRD: " + o);
        for (String op : new String[] {"send", "write", "read"}) {
            assertTrue(o.lines().anyMatch(l -> l.startsWith(op + " ")), op + " row in " + o);
        }
        assertTrue(c.err().contains("latency"), "progress on stderr: " + c.err());
        assertTrue(o.contains("connection closed cleanly"), o);
    }

    @Test
    @DisplayName("demo --rtr send negotiates the zero-length Send RTR (RFC 6581 §9.2 B)")
    void demoSendRtr() {
        CliCapture c = CliCapture.run("demo", "--iters", "50", "--bw-iters", "10", "--bw-size", "4096", "--rtr",
                "send", "--json", "--ops", "send");
        assertEquals(0, c.exit(), c.err());
        assertEquals(List.of("send", "send"), c.strings("rtr"));
    }

    @Test
    @DisplayName("demo with a bad --rtr is a usage error (exit 2, one line naming the option)")
    void demoBadRtr() {
        CliCapture c = CliCapture.run("demo", "--rtr", "carrier-pigeon");
        assertEquals(2, c.exit());
        assertTrue(c.err().contains("--rtr"), c.err());
    }
}
