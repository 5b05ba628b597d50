package org.jwarp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class MpaCommandTest {
    private static final String REQ_KEY = "4d504120494420526571204672616d65";
    private static final String REP_KEY = "4d504120494420526570204672616d65";

    @Test
    void decodeEnhancedRequestPrintsContractKeys_6581_9() {
        CliRun r = CliRun.of("mpa", "decode", REQ_KEY + "50020006" + "8010c008" + "abcd");
        assertEquals(0, r.exit(), r.err());
        assertEquals("{\"frame\":\"request\",\"marker\":false,\"crc\":true,\"reject\":false,\"enhanced\":true,"
                + "\"revision\":2,\"privateDataLength\":6,\"enhancedData\":{\"peerToPeer\":true,\"sendRtr\":false,"
                + "\"writeRtr\":true,\"readRtr\":true,\"ird\":16,\"ord\":8},\"ulpPrivateData\":\"abcd\"}", r.out().trim());
    }

    @Test
    void decodeRev3RequestWithSIsEnhanced_6581_6() {
        CliRun r = CliRun.of("mpa", "decode", REQ_KEY + "50030006" + "8010c008" + "abcd");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("\"enhanced\":true,\"revision\":3,\"privateDataLength\":6,\"enhancedData\":"
                + "{\"peerToPeer\":true,\"sendRtr\":false,\"writeRtr\":true,\"readRtr\":true,\"ird\":16,\"ord\":8},"
                + "\"ulpPrivateData\":\"abcd\""), r.out());
        CliRun rev1 = CliRun.of("mpa", "decode", REQ_KEY + "50010006" + "8010c008" + "abcd");
        assertTrue(rev1.out().contains("\"enhanced\":false,\"revision\":1"), "Rev 1: S is Res: " + rev1.out());
    }

    @Test
    void decodeAcceptsSpacedAndSplitHex() {
        CliRun r = CliRun.of("mpa", "decode", "4d:50:41:20:49:44:20:52:65:71:20:46:72:61:6d:65", "0x0001", "00 00");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("\"frame\":\"request\""), r.out());
    }

    @Test
    void decodeUnenhancedReplyHasNullEnhancedData_5044_7_1_1() {
        CliRun r = CliRun.of("mpa", "decode", REP_KEY + "a0010001" + "ff");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("\"frame\":\"reply\",\"marker\":true,\"crc\":false,\"reject\":true,\"enhanced\":false,"
                + "\"revision\":1,\"privateDataLength\":1,\"enhancedData\":null,\"ulpPrivateData\":\"ff\""), r.out());
    }

    @Test
    void decodeMalformedExitsTwoWithOneLineNamingFieldAndSection_5044_7_1_1() {
        assertMalformed(CliRun.of("mpa", "decode", "4d50"), "MPA frame", "RFC 5044 §7.1.1");
        assertMalformed(CliRun.of("mpa", "decode", REQ_KEY.replace("4d50", "4d51") + "00010000"), "MPA Key", "RFC 5044 §7.1.1");
        assertMalformed(CliRun.of("mpa", "decode", REQ_KEY + "00010201"), "MPA PD_Length", "RFC 5044 §7.1.1");
        assertMalformed(CliRun.of("mpa", "decode", REQ_KEY + "10020002" + "0000"), "MPA PD_Length", "RFC 6581 §9");
        assertMalformed(CliRun.of("mpa", "decode", REQ_KEY + "00010000" + "00"), "MPA frame", "RFC 5044 §7.1.2");
        assertMalformed(CliRun.of("mpa", "decode", "zz"), "HEX", "RFC 5044 §7.1.1");
        assertMalformed(CliRun.of("mpa", "decode", "--max-private-data", "256", REQ_KEY + "00010101" + "00".repeat(257)),
                "MPA PD_Length", "RFC 5044 §7.1.1");
    }

    @Test
    void encodeRoundTripsThroughDecode_6581_9() {
        CliRun e = CliRun.of("mpa", "encode", "--reply", "--crc", "--enhanced", "--p2p", "--read-rtr", "--ird", "16383",
                "--ord", "1", "--private-data", "01:02");
        assertEquals(0, e.exit(), e.err());
        assertEquals(REP_KEY + "50020006" + "bfff4001" + "0102", e.out().trim());
        CliRun d = CliRun.of("mpa", "decode", e.out().trim());
        assertTrue(d.out().contains("\"ird\":16383,\"ord\":1"), d.out());
    }

    @Test
    void encodeDefaultsToRev1RequestWithoutEnhancedData_5044_7_1_1() {
        CliRun e = CliRun.of("mpa", "encode");
        assertEquals(REQ_KEY + "00010000", e.out().trim());
        assertEquals(REQ_KEY + "c0030000", CliRun.of("mpa", "encode", "--marker", "--crc", "--rev", "3").out().trim());
    }

    @Test
    void encodeRejectsRuleViolations_6581_9_2() {
        assertMalformed(CliRun.of("mpa", "encode", "--enhanced", "--write-rtr"), "B/C/D", "RFC 6581 §9.2");
        assertMalformed(CliRun.of("mpa", "encode", "--reject"), "MPA R", "RFC 5044 §7.1.1");
        assertMalformed(CliRun.of("mpa", "encode", "--ird", "3"), "Enhanced data", "RFC 6581 §9");
        assertMalformed(CliRun.of("mpa", "encode", "--enhanced", "--rev", "1"), "MPA S", "RFC 6581 §6");
        assertMalformed(CliRun.of("mpa", "encode", "--enhanced", "--ird", "16384"), "IRD", "RFC 6581 §9");
        assertMalformed(CliRun.of("mpa", "encode", "--enhanced", "--private-data", "00".repeat(509)), "MPA Private Data",
                "RFC 5044 §7.1.1");
    }

    static void assertMalformed(CliRun r, String field, String section) {
        assertEquals(2, r.exit(), r.out() + r.err());
        String[] lines = r.errLines();
        assertEquals(1, lines.length, r.err());
        assertTrue(lines[0].contains(field) && lines[0].contains(section), lines[0]);
        assertEquals("", r.out());
    }
}
