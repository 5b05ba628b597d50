package org.jwarp.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class NegotiateCommandTest {

    @Test
    void establishedP2pPrintsContractKeys_6581_9_2() {
        CliRun r = CliRun.of("negotiate", "--initiator", "ird=4,ord=2,p2p=true,rtr=write+read,enhanced=true",
                "--responder", "maxIrd=8,ord=3,requiredOrd=1,rtr=read,enhanced=true");
        assertEquals(0, r.exit(), r.err());
        String o = r.out().trim();
        assertTrue(o.startsWith("{\"request\":{\"frame\":\"request\""), o);
        assertTrue(o.contains(",\"reply\":{\"frame\":\"reply\""), o);
        assertTrue(o.contains("\"outcome\":\"established\",\"rtr\":\"read\""), o);
        assertTrue(o.contains("\"initiator\":{\"ird\":4,\"ord\":2,\"peerIrd\":2,\"peerOrd\":3}"), o);
        assertTrue(o.contains("\"responder\":{\"ird\":2,\"ord\":3,\"peerIrd\":4,\"peerOrd\":2}"), o);
        assertTrue(o.contains("\"term\":null"), o);
    }

    @Test
    void rejectionReportsTermCode6AndRequiredOrd_6581_9_1() {
        CliRun r = CliRun.of("negotiate", "--initiator", "ird=1", "--responder", "ord=8,requiredOrd=4");
        String o = r.out().trim();
        assertTrue(o.contains("\"outcome\":\"rejected\",\"rtr\":null"), o);
        assertTrue(o.contains("\"term\":{\"layer\":2,\"etype\":0,\"ecode\":6}"), o);
        assertTrue(o.contains("\"reject\":true"), o);
        assertTrue(o.contains("\"initiator\":{\"ird\":1,\"ord\":16,\"peerIrd\":16,\"peerOrd\":4}"), o);
    }

    @Test
    void noCommonRtrTerminatesWithCode7_6581_8() {
        CliRun r = CliRun.of("negotiate", "--initiator", "rtr=send", "--responder", "rtr=write");
        assertTrue(r.out().contains("\"outcome\":\"terminated\""), r.out());
        assertTrue(r.out().contains("\"term\":{\"layer\":2,\"etype\":0,\"ecode\":7}"), r.out());
    }

    @Test
    void unenhancedResponderClosesAndNoRetryByDefault_6581_10() {
        CliRun r = CliRun.of("negotiate", "--initiator", "ird=4,ord=4,maxIrd=4,p2p=true,rtr=write,enhanced=true",
                "--responder", "maxIrd=4,ord=4,requiredOrd=0,rtr=write,enhanced=false");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("\"reply\":null,\"outcome\":\"closed\""), r.out());
        assertTrue(r.out().contains("\"attempts\":1"), r.out());
        CliRun lax = CliRun.of("negotiate", "--responder", "enhanced=false,rev2=reply");
        assertTrue(lax.out().contains("\"outcome\":\"terminated\""), lax.out());
        assertTrue(lax.out().contains("\"term\":{\"layer\":2,\"etype\":0,\"ecode\":4}"), lax.out());
    }

    @Test
    void unenhancedResponderThatClosesCausesRev1RetryWhenAskedFor_6581_10() {
        CliRun r = CliRun.of("negotiate", "--initiator", "fallback=true", "--responder", "enhanced=false,rev2=close");
        String o = r.out();
        assertTrue(o.contains("\"outcome\":\"established\""), o);
        assertTrue(o.contains("\"attempts\":2"), o);
        assertTrue(o.contains("\"request\":{\"frame\":\"request\",\"marker\":false,\"crc\":true,\"reject\":false,"
                + "\"enhanced\":false,\"revision\":1"), o);
        CliRun closed = CliRun.of("negotiate", "--initiator", "fallback=false", "--responder", "enhanced=false,rev2=close");
        assertTrue(closed.out().contains("\"reply\":null,\"outcome\":\"closed\""), closed.out());
    }

    @Test
    void badKeysAndValuesExitTwoWithOneLine() {
        MpaCommandTest.assertMalformed(CliRun.of("negotiate", "--initiator", "bogus=1"), "unknown key 'bogus'", "RFC 6581");
        MpaCommandTest.assertMalformed(CliRun.of("negotiate", "--initiator", "ird=99999"), "ird", "RFC 6581 §9");
        MpaCommandTest.assertMalformed(CliRun.of("negotiate", "--responder", "rtr=carrier-pigeon"), "rtr", "RFC 6581 §9.2");
        MpaCommandTest.assertMalformed(CliRun.of("negotiate", "--initiator", "p2p=true,rtr=none"), "rtr", "RFC 6581 §9.2");
        MpaCommandTest.assertMalformed(CliRun.of("negotiate", "--responder", "ord=2,requiredOrd=3"), "requiredOrd",
                "RFC 6581 §9.1");
        MpaCommandTest.assertMalformed(CliRun.of("negotiate", "--initiator", "ird=x"), "ird", "RFC 6581 §9");
    }
}
