package org.jwarp.rdmap;

import java.nio.ByteBuffer;

import org.jwarp.ddp.DdpHeader;
import org.jwarp.ground.TermCode;
import org.jwarp.mpa.FpduEncoder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Error handling of one {@link RdmapEndpoint} (RFC 5040 §7, RFC 5041 §7.1): the first local error
 * moves the stream to {@link RdmapEndpoint.State#TERMINATE}, stops inbound processing and queues
 * exactly one more outgoing message, the Terminate (RFC 5040 §4.8: DDP untagged queue 2, MSN 1,
 * MO 0, as siw sends it), carrying the DDP and, for a Read Request, RDMAP header of the offending
 * segment when there is one.
 */
final class StreamTerminator {
    private static final Logger LOG = LoggerFactory.getLogger(RdmapEndpoint.class);

    private final RdmapEndpoint ep;
    private final FpduEncoder encoder;
    private final DdpHeader txHdr = new DdpHeader();
    private final DdpHeader rxHdr = new DdpHeader();
    private final ByteBuffer headers = ByteBuffer.allocateDirect(TerminateCodec.MAX_PAYLOAD_LENGTH);
    TermCode code;
    private int segLen;
    private int ddpLen;
    private int rdmaLen;
    private boolean segLenValid;

    StreamTerminator(RdmapEndpoint ep, FpduEncoder encoder) {
        this.ep = ep;
        this.encoder = encoder;
    }

    /** Reports a local error once; with {@code withSegment}, the segment being received is quoted. */
    void raise(TermCode c, String detail, boolean withSegment) {
        if (ep.state() != RdmapEndpoint.State.RTS) {
            return;
        }
        ep.enter(RdmapEndpoint.State.TERMINATE);
        ep.ddp.fail();
        code = c;
        segLen = 0;
        ddpLen = 0;
        rdmaLen = 0;
        segLenValid = false;
        ByteBuffer seg = ep.curSeg;
        int idx = ep.curIdx;
        int len = ep.curLen;
        if (withSegment && seg != null && len > 0) {
            segLen = len;
            segLenValid = true;
            rxHdr.wrap(seg, idx);
            int hl = rxHdr.headerLength();
            if (len >= hl) {
                headers.put(0, seg, idx, hl);
                ddpLen = hl;
                boolean readRequest = !rxHdr.tagged() && rxHdr.qn() == RdmapOpcode.QN_READ_REQUEST
                        && RdmapOpcode.opcode(rxHdr.rsvdUlp()) == RdmapOpcode.READ_REQUEST;
                if (c.layer() == TermCode.LAYER_RDMAP && readRequest && len >= hl + ReadRequestHeader.LENGTH) {
                    headers.put(hl, seg, idx + hl, ReadRequestHeader.LENGTH);
                    rdmaLen = ReadRequestHeader.LENGTH;
                }
            }
        }
        LOG.warn("RDMAP stream error {}: {}", c, detail);
        ep.listener.onLocalError(c, detail);
    }

    /** The Terminate message, if it fits. */
    boolean emit(ByteBuffer dst) {
        int payloadMax = TerminateCodec.MAX_PAYLOAD_LENGTH;
        if (dst.remaining() < encoder.wireLength(DdpHeader.UNTAGGED_HEADER_LENGTH + payloadMax)) {
            return false;
        }
        int u = encoder.ulpduIndex(dst);
        txHdr.wrap(dst, u).putUntagged(true, RdmapOpcode.control(RdmapOpcode.TERMINATE), 0,
                RdmapOpcode.QN_TERMINATE, 1, 0);
        int p = TerminateCodec.encode(dst, u + DdpHeader.UNTAGGED_HEADER_LENGTH, code, segLen, headers, 0, ddpLen,
                rdmaLen, segLenValid);
        encoder.finish(dst, DdpHeader.UNTAGGED_HEADER_LENGTH + p);
        return true;
    }
}
