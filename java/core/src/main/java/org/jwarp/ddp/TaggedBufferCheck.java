package org.jwarp.ddp;

import org.jwarp.ground.TermCode;
import org.jwarp.memory.StagDomain;
import org.jwarp.memory.StagRegion;
import org.jwarp.memory.StagTable;

/**
 * The RFC 5041 §7.1 tagged-buffer checks of one DDP stream, in their order, and the TERM code each
 * failure is reported with (§7.2; the access right is RFC 5040's 0/1/2 code). The ULP checks first
 * (RDMAP version and opcode, {@link DdpReceiveHandler#checkTagged}); then a non-empty segment is
 * checked against the window the ULP expects, if it names one (a Read Response fills only the sink
 * of its Read Request, RFC 5040 §5.2); then against the STag's region: valid (1/0), associated
 * with this stream's protection domain and stream (1/2, §8.2), access right, base and bounds
 * (1/1), 64-bit wrap (1/3), in {@link RemoteStagCheck}'s order. The STag table answers what the
 * region is; the codes are decided here.
 * Zero-length segments are not checked against the STag (§5.2). Allocates nothing.
 */
final class TaggedBufferCheck {

    private final StagDomain pd;
    private final StagTable stags;
    private final DdpReceiveHandler handler;
    private final TaggedWindow window = new TaggedWindow();
    private StagRegion region;

    TaggedBufferCheck(StagDomain pd, StagTable stags, DdpReceiveHandler handler) {
        this.pd = pd;
        this.stags = stags;
        this.handler = handler;
    }

    /**
     * The one entry point: null when the segment may be placed (a non-empty one's region is then
     * in {@link #takeRegion}), else the code to report.
     */
    TermCode check(int rsvd, int stag, long to, int payload, Object stream) {
        region = null;
        TermCode ulp = handler.checkTagged(rsvd, stag, to, payload);
        if (ulp != null || payload == 0) {
            return ulp;
        }
        if (handler.expectedWindow(rsvd, window)) {
            if (stag != window.stag) {
                return TermCode.DDP_TAGGED_INVALID_STAG;
            }
            long rel = to - window.to;
            if (Long.compareUnsigned(rel, window.length) > 0 || rel + payload > window.length) {
                return TermCode.DDP_TAGGED_BASE_BOUNDS;
            }
        }
        StagRegion mr = stags.lookup(stag);
        int r = RemoteStagCheck.check(mr, pd, stream, to, payload, handler.taggedAccess(rsvd));
        if (r != StagTable.OK) {
            return code(r);
        }
        region = mr;
        return null;
    }

    /** The region the last successful {@link #check} of a non-empty segment found; forgotten here. */
    StagRegion takeRegion() {
        StagRegion mr = region;
        region = null;
        return mr;
    }

    /** A region that passed {@link #check} was revoked before placement (RFC 5041 §8.3.1 (6)): invalid STag. */
    static TermCode revoked() {
        return TermCode.DDP_TAGGED_INVALID_STAG;
    }

    private static TermCode code(int r) {
        switch (r) {
            case StagTable.INVALID_STAG:
                return TermCode.DDP_TAGGED_INVALID_STAG;
            case StagTable.NOT_ASSOCIATED:
                return TermCode.DDP_TAGGED_STAG_NOT_ASSOCIATED;
            case StagTable.ACCESS_VIOLATION:
                return TermCode.RDMAP_ACCESS_VIOLATION;
            case StagTable.TO_WRAP:
                return TermCode.DDP_TAGGED_TO_WRAP;
            default:
                return TermCode.DDP_TAGGED_BASE_BOUNDS;
        }
    }
}
