package org.jwarp.rdmap;

import org.jwarp.ground.TermCode;
import java.util.Arrays;

/**
 * A decoded RDMAP Terminate message, RFC 5040 §4.8: the error (layer, etype, code), the Hdrct
 * bits M (DDP segment length valid), D (DDP header included), R (RDMAP header included), and the
 * offending segment's length and headers when present (empty arrays otherwise).
 */
public record TerminateMessage(TermCode code, boolean m, boolean d, boolean r, int ddpSegmentLength,
        byte[] ddpHeader, byte[] rdmapHeader) {

    public TerminateMessage {
        ddpHeader = ddpHeader.clone();
        rdmapHeader = rdmapHeader.clone();
    }

    @Override
    public byte[] ddpHeader() {
        return ddpHeader.clone();
    }

    @Override
    public byte[] rdmapHeader() {
        return rdmapHeader.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TerminateMessage t && code.equals(t.code) && m == t.m && d == t.d && r == t.r
                && ddpSegmentLength == t.ddpSegmentLength && Arrays.equals(ddpHeader, t.ddpHeader)
                && Arrays.equals(rdmapHeader, t.rdmapHeader);
    }

    @Override
    public int hashCode() {
        return code.hashCode() * 31 + Arrays.hashCode(ddpHeader) + Arrays.hashCode(rdmapHeader) + ddpSegmentLength;
    }

    @Override
    public String toString() {
        return "TERM[" + code + (m ? " M" : "") + (d ? " D" : "") + (r ? " R" : "") + " seglen=" + ddpSegmentLength
                + "]";
    }
}
