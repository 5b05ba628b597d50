package org.jwarp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class DdpCommandTest {

    record Result(int code, String out, String err) {
    }

    static Result run(String... args) {
        PrintStream oldOut = System.out;
        PrintStream oldErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            int code = JwarpCli.run(args);
            return new Result(code, out.toString(StandardCharsets.UTF_8).trim(), err.toString(StandardCharsets.UTF_8)
                    .trim());
        } finally {
            System.setOut(oldOut);
            System.setErr(oldErr);
        }
    }

    @Test
    @DisplayName("RFC 5041 §5.2 example via CLI: untagged 2048 @ MULPDU 1500")
    void untaggedExample_5041_5_2() {
        Result r = run("ddp", "segment", "--qn", "0", "--msn", "1", "--length", "2048", "--mulpdu", "1500");
        assertEquals(0, r.code(), r.err());
        assertEquals("{\"tagged\":false,\"mulpdu\":1500,\"headerLength\":18,\"length\":2048,\"qn\":0,\"msn\":1,"
                + "\"count\":2,\"segments\":[{\"offset\":0,\"length\":1482,\"last\":false,\"mo\":0},"
                + "{\"offset\":1482,\"length\":566,\"last\":true,\"mo\":1482}]}", r.out());
    }

    @Test
    @DisplayName("RFC 5041 §5.2 example via CLI: tagged 2048 at TO 16384 @ MULPDU 1500")
    void taggedExample_5041_5_2() {
        Result r = run("ddp", "segment", "--stag", "0x1234", "--to", "16384", "--length", "2048", "--mulpdu", "1500");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("\"segments\":[{\"offset\":0,\"length\":1486,\"last\":false,\"to\":16384},"
                + "{\"offset\":1486,\"length\":562,\"last\":true,\"to\":17870}]"), r.out());
        assertTrue(r.out().contains("\"stag\":4660"));
    }

    @Test
    @DisplayName("RFC 5041 §5.2: zero-length message is one segment; MO offset applies")
    void zeroLengthAndMo_5041_5_2() {
        Result r = run("ddp", "segment", "--qn", "1", "--msn", "7", "--length", "0", "--mulpdu", "100");
        assertEquals(0, r.code());
        assertTrue(r.out().contains("\"count\":1,\"segments\":[{\"offset\":0,\"length\":0,\"last\":true,\"mo\":0}]"),
                r.out());
        Result m = run("ddp", "segment", "--qn", "0", "--msn", "1", "--mo", "100", "--length", "100", "--mulpdu", "68");
        assertTrue(m.out().contains("{\"offset\":50,\"length\":50,\"last\":true,\"mo\":150}"), m.out());
    }

    @Test
    @DisplayName("Malformed CLI input exits 2 with one stderr line naming the rule")
    void malformedInputExits2() {
        Result mixed = run("ddp", "segment", "--qn", "0", "--msn", "1", "--stag", "1", "--to", "0", "--length", "1",
                "--mulpdu", "100");
        assertEquals(2, mixed.code());
        assertTrue(mixed.err().contains("exclusive"), mixed.err());
        Result small = run("ddp", "segment", "--qn", "0", "--msn", "1", "--length", "1", "--mulpdu", "18");
        assertEquals(2, small.code());
        assertTrue(small.err().contains("RFC 5041 §5.2"), small.err());
        Result wrap = run("ddp", "segment", "--stag", "1", "--to", "0xffffffffffffffff", "--length", "2",
                "--mulpdu", "100");
        assertEquals(2, wrap.code());
        assertTrue(wrap.err().contains("wraps"), wrap.err());
        Result bad = run("ddp", "segment", "--qn", "x", "--msn", "1", "--length", "1", "--mulpdu", "100");
        assertEquals(2, bad.code());
        assertEquals(1, bad.err().lines().count());
    }
}
