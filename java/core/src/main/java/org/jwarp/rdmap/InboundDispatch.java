package org.jwarp.rdmap;

import java.nio.ByteBuffer;

import org.jwarp.ddp.DdpReceiveHandler;
import org.jwarp.ddp.DdpReceiver;
import org.jwarp.ddp.TaggedWindow;
import org.jwarp.ground.TermCode;
import org.jwarp.memory.StagAccess;
import org.jwarp.memory.StagTable;
import org.jwarp.mpa.FpduDecoder;
import org.jwarp.mpa.FpduHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The receive side of one {@link RdmapEndpoint}: the MPA and DDP upcalls (RFC 5044 FPDUs, RFC 5041
 * §7.1 checks, placement) turned into RDMAP actions (RFC 5040 §5, §7): the RDMAP version and opcode
 * checks of every message, Read Responses matched against the Read Requests sent (§5.2), Sends
 * delivered with Send with Invalidate applied (§5.3), Read Requests handed to the
 * {@link ReadResponder}, a peer's Terminate (§4.8) ending the stream. Kept off the endpoint's
 * public surface.
 */
final class InboundDispatch implements FpduHandler, DdpReceiveHandler {
    private static final Logger LOG = LoggerFactory.getLogger(RdmapEndpoint.class);

    private final RdmapEndpoint ep;

    InboundDispatch(RdmapEndpoint ep) {
        this.ep = ep;
    }

    private boolean live() {
        return ep.state() == RdmapEndpoint.State.RTS;
    }

    private void firstFpdu() {
        if (ep.firstFpdu) {
            ep.firstFpdu = false;
            ep.listener.onFirstFpdu();
        }
    }

    @Override
    public void onUlpdu(ByteBuffer buffer, int index, int length) {
        if (!live()) {
            return;
        }
        firstFpdu();
        ep.curSeg = buffer;
        ep.curIdx = index;
        ep.curLen = length;
        try {
            ep.ddp.receive(buffer, index, length);
        } finally {
            ep.curSeg = null;
        }
    }

    @Override
    public void onFpduError(TermCode code, String detail) {
        ep.curSeg = null;
        ep.term.raise(code, detail, false);
    }

    @Override
    public int directHeaderLength(int firstByte) {
        return DdpReceiver.headerLength(firstByte);
    }

    /**
     * A large segment split across reads: its DDP header is validated now (RFC 5041 §7.1) and its
     * payload placed as it arrives; on a CRC mismatch at its end the stream terminates (2/0/2)
     * with the bytes placed (see {@link FpduDecoder}). A header that fails a check is not taken:
     * the segment is gathered and reported as usual once its CRC is verified.
     */
    @Override
    public boolean beginDirect(ByteBuffer buffer, int index, int headerLength, int length) {
        if (!live() || !ep.ddp.beginDirect(buffer, index, length)) {
            return false;
        }
        firstFpdu();
        ep.curSeg = buffer; // the header, for a TERM raised while the payload is placed
        ep.curIdx = index;
        ep.curLen = length;
        return true;
    }

    @Override
    public boolean placeDirect(ByteBuffer buffer, int index, int n) {
        if (!live() || !ep.ddp.placeDirect(buffer, index, n)) {
            ep.curSeg = null;
            return false;
        }
        return true;
    }

    @Override
    public ByteBuffer directTarget(int max) {
        ByteBuffer t = live() ? ep.ddp.directTarget(max) : null;
        if (t == null && !live()) {
            ep.curSeg = null;
        }
        return t;
    }

    @Override
    public void directFilled(int n) {
        ep.ddp.directFilled(n);
    }

    @Override
    public void onUntaggedBufferTooShort(int qn, long cookie) {
        if (qn == RdmapOpcode.QN_SEND) {
            ep.listener.onReceiveTooShort(cookie);
        }
    }

    @Override
    public void onUntaggedBufferRevoked(int qn, long cookie) {
        if (qn == RdmapOpcode.QN_SEND) {
            ep.listener.onReceiveRevoked(cookie);
        }
    }

    @Override
    public void endDirect() {
        try {
            if (live()) {
                ep.ddp.endDirect();
            }
        } finally {
            ep.curSeg = null;
        }
    }

    private static TermCode versionCheck(int control) {
        return RdmapOpcode.version(control) != RdmapOpcode.RDMAP_VERSION ? TermCode.RDMAP_INVALID_VERSION : null;
    }

    @Override
    public TermCode checkTagged(int rsvdUlp, int stag, long to, int payloadLength) {
        TermCode v = versionCheck(rsvdUlp);
        if (v != null) {
            return v;
        }
        switch (RdmapOpcode.opcode(rsvdUlp)) {
            case RdmapOpcode.WRITE:
                return null;
            case RdmapOpcode.READ_RESPONSE:
                return ep.out.checkReadResponse();
            default:
                return TermCode.RDMAP_UNEXPECTED_OPCODE;
        }
    }

    @Override
    public boolean expectedWindow(int rsvdUlp, TaggedWindow window) {
        return RdmapOpcode.opcode(rsvdUlp) == RdmapOpcode.READ_RESPONSE && ep.out.readResponseWindow(window);
    }

    @Override
    public int taggedAccess(int rsvdUlp) {
        return RdmapOpcode.opcode(rsvdUlp) == RdmapOpcode.READ_RESPONSE ? StagAccess.LOCAL_WRITE : StagAccess.REMOTE_WRITE;
    }

    @Override
    public TermCode checkUntagged(int qn, int rsvdUlp, int msn, int payloadLength) {
        TermCode v = versionCheck(rsvdUlp);
        if (v != null) {
            return v;
        }
        int op = RdmapOpcode.opcode(rsvdUlp);
        switch (qn) {
            case RdmapOpcode.QN_SEND:
                if (!RdmapOpcode.isSend(op)) {
                    return TermCode.RDMAP_UNEXPECTED_OPCODE;
                }
                if (ep.ddp.postedCount(RdmapOpcode.QN_SEND) == 0) {
                    ep.listener.onReceiveNeeded(); // a shared receive queue supplies the buffer now
                }
                return null;
            case RdmapOpcode.QN_READ_REQUEST:
                if (op != RdmapOpcode.READ_REQUEST) {
                    return TermCode.RDMAP_UNEXPECTED_OPCODE;
                }
                return ep.irq.pending() >= ep.settings.ird() ? TermCode.RDMAP_CATASTROPHIC_STREAM : null;
            default:
                return op == RdmapOpcode.TERMINATE ? null : TermCode.RDMAP_UNEXPECTED_OPCODE;
        }
    }

    @Override
    public void onTaggedMessage(int rsvdUlp, int stag, int length) {
        if (RdmapOpcode.opcode(rsvdUlp) == RdmapOpcode.READ_RESPONSE) {
            ep.out.readResponseDone(length);
        } // an RDMA Write: placement is the whole effect (RFC 5040 §5.1)
    }

    @Override
    public void onUntaggedMessage(int qn, int msn, int rsvdUlp, int rsvdUlp32, long cookie, ByteBuffer buffer,
            int offset, int length) {
        switch (qn) {
            case RdmapOpcode.QN_SEND:
                deliverSend(RdmapOpcode.opcode(rsvdUlp), rsvdUlp32, cookie, length);
                break;
            case RdmapOpcode.QN_READ_REQUEST:
                ep.irq.accept(buffer, offset, length, (int) cookie, ep.stags, ep.ddp.streamKey());
                break;
            default:
                acceptTerminate(buffer, offset, length);
                break;
        }
    }

    private void deliverSend(int op, int invalidateStag, long wrId, int length) {
        int invalidated = 0;
        if (RdmapOpcode.isInvalidate(op)) {
            // only what the peer could use remotely; one TERM code for every refusal, so the reply
            // tells a prober nothing about other streams' STags (java/CONFORMANCE.md, "Remote invalidation")
            int refused = ep.stags.invalidateRemote(invalidateStag, ep.pd, ep.ddp.streamKey());
            if (refused != StagTable.OK) {
                ep.listener.onReceiveCompletion(wrId, op, length, 0);
                ep.term.raise(TermCode.RDMAP_CANNOT_INVALIDATE, "Send with Invalidate names STag 0x"
                        + Integer.toHexString(invalidateStag) + " that this peer may not invalidate ("
                        + refusalName(refused) + "; RFC 5040 §5.3)", true);
                return;
            }
            invalidated = invalidateStag;
        }
        ep.listener.onReceiveCompletion(wrId, op, length, invalidated);
    }

    private static String refusalName(int code) {
        return switch (code) {
            case StagTable.INVALID_STAG -> "not a live STag";
            case StagTable.NOT_ASSOCIATED -> "not of this stream's protection domain or stream";
            default -> "a local-only region, no remote access right";
        };
    }

    private void acceptTerminate(ByteBuffer b, int off, int length) {
        TerminateMessage term;
        try {
            term = TerminateCodec.decode(b, off, length);
        } catch (RdmapFormatException e) {
            TermCode code = length >= TerminateCodec.CONTROL_LENGTH ? TermCode.fromControlWord(b.getInt(off))
                    : TermCode.RDMAP_CATASTROPHIC_STREAM;
            term = new TerminateMessage(code, false, false, false, 0, new byte[0], new byte[0]);
            LOG.debug("malformed Terminate from peer: {}", e.getMessage());
        }
        ep.enter(RdmapEndpoint.State.ERROR);
        ep.ddp.fail();
        LOG.info("peer terminated the RDMAP stream: {}", term);
        ep.listener.onPeerTerminate(term);
    }

    @Override
    public void onError(TermCode code, ByteBuffer segment, int index, int length) {
        ep.term.raise(code, "DDP segment rejected: " + code, true);
    }
}
