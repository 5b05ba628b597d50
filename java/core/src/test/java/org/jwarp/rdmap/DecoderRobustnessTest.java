package org.jwarp.rdmap;

import org.jwarp.ground.TermCode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.Arrays;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.jwarp.ddp.DdpHeader;

/**
 * Truncated and mutated valid input into the RDMAP-level decoders raises only the typed outcome:
 * {@link RdmapFormatException} from {@link TerminateCodec}, a TERM (never an exception) for a bad
 * Read Request (RFC 5040 §4.4, §4.8).
 */
class DecoderRobustnessTest {
    private static final TermCode[] CODES = {TermCode.RDMAP_INVALID_STAG, TermCode.RDMAP_CATASTROPHIC_STREAM,
        TermCode.DDP_TAGGED_BASE_BOUNDS, TermCode.DDP_UNTAGGED_MSN_RANGE, TermCode.MPA_CRC_ERROR};

    @Property(tries = 2000)
    void truncatedTerminatesOnlyTypedError_5040_4_8(@ForAll @IntRange(min = 0, max = 4) int codeIx,
            @ForAll @IntRange(min = 0, max = 2) int ddpKind, @ForAll boolean rdma, @ForAll @Size(46) byte[] headers,
            @ForAll @IntRange(min = 0, max = 60) int cut, @ForAll @IntRange(min = 0, max = 60) int pos,
            @ForAll byte value, @ForAll boolean mutate) {
        int ddpLen = ddpKind == 0 ? 0 : ddpKind == 1 ? DdpHeader.TAGGED_HEADER_LENGTH : DdpHeader.UNTAGGED_HEADER_LENGTH;
        int rdmaLen = rdma && ddpLen > 0 ? ReadRequestHeader.LENGTH : 0;
        // A well-formed offending header: its T bit agrees with its length.
        headers[0] = (byte) (ddpKind == 1 ? headers[0] | DdpHeader.T_FLAG : headers[0] & ~DdpHeader.T_FLAG);
        ByteBuffer dst = ByteBuffer.allocate(TerminateCodec.MAX_PAYLOAD_LENGTH);
        int n = TerminateCodec.encode(dst, 0, CODES[codeIx], 100, ByteBuffer.wrap(headers), 0, ddpLen, rdmaLen, true);
        TerminateMessage whole = TerminateCodec.decode(dst, 0, n);
        assertEquals(CODES[codeIx], whole.code());
        byte[] b = Arrays.copyOf(dst.array(), n);
        if (mutate) {
            b[pos % n] = value;
        }
        int len = Math.max(0, n - cut);
        try {
            TerminateMessage t = TerminateCodec.decode(ByteBuffer.wrap(b), 0, len);
            int h = t.ddpHeader().length;
            assertTrue(h == 0 || h == DdpHeader.TAGGED_HEADER_LENGTH || h == DdpHeader.UNTAGGED_HEADER_LENGTH);
            assertTrue(t.rdmapHeader().length == 0 || t.rdmapHeader().length == ReadRequestHeader.LENGTH);
        } catch (RdmapFormatException expected) {
            assertTrue(expected.getMessage().contains("RFC 5040"), expected.getMessage());
        }
    }

    @Property(tries = 500)
    void malformedReadRequestsOnlyTerm_5040_4_4(@ForAll @IntRange(min = 0, max = 60) int payload,
            @ForAll @Size(60) byte[] noise, @ForAll @IntRange(min = 0, max = 40) int mo, @ForAll boolean crc) {
        RdmapPair p = new RdmapPair(RdmapPair.settings(1000, crc, 4, 4));
        ByteBuffer seg = ByteBuffer.allocateDirect(DdpHeader.UNTAGGED_HEADER_LENGTH + payload);
        int offset = mo % 3 == 0 ? 0 : mo;
        new DdpHeader().wrap(seg, 0).putUntagged(true, RdmapOpcode.control(RdmapOpcode.READ_REQUEST), 0,
                RdmapOpcode.QN_READ_REQUEST, 1, offset);
        seg.put(DdpHeader.UNTAGGED_HEADER_LENGTH, noise, 0, payload);
        RdmapEndpointTest.inject(p, seg, crc);
        // With MO > 0 a short L segment may still await its earlier bytes (RFC 5041 §5.2): no verdict yet.
        if (offset == 0 && payload != ReadRequestHeader.LENGTH) {
            assertEquals(1, p.evB.localErrors.size(), "a Read Request of " + payload + " bytes is a protocol error");
            assertTrue(p.b.state() != RdmapEndpoint.State.RTS, "the stream stopped");
        }
        assertTrue(p.evB.localErrors.size() <= 1);
        p.pump(); // B's TERM (or Read Response) reaches A and is decoded there
        if (!p.evB.localErrors.isEmpty()) {
            assertEquals(1, p.evA.peerTerms.size());
            assertEquals(p.evB.localErrors.get(0), p.evA.peerTerms.get(0).code());
        }
    }
}
