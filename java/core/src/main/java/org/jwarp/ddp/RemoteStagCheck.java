package org.jwarp.ddp;

import org.jwarp.memory.StagDomain;
import org.jwarp.memory.StagRegion;
import org.jwarp.memory.StagTable;

/**
 * The order of the questions about a remote access to a tagged region (RFC 5041 §7.1, §8.2): is
 * the STag valid; is its region associated with this stream's protection domain and, if bound to
 * one, with this stream (§8.3.1 (2)); then the region's own answer on access right, base, wrap and
 * bound. The memory answers each question; the order is decided here, and each caller maps the
 * first failing answer to its TERM code (DDP's for a tagged segment, {@link TaggedBufferCheck};
 * RDMAP's for a Read Request's source, RFC 5040 §5.2). Allocates nothing.
 */
public final class RemoteStagCheck {
    private RemoteStagCheck() {
    }

    /**
     * {@link StagTable#OK} or the first failing answer ({@link StagTable#INVALID_STAG},
     * {@link StagTable#NOT_ASSOCIATED}, then {@link StagTable#checkRange}'s) for an access arriving on
     * DDP stream {@code stream} to the looked-up region {@code mr} (null: no such STag).
     */
    public static int check(StagRegion mr, StagDomain pd, Object stream, long to, int length, int requiredAccess) {
        if (mr == null || !mr.isValid()) {
            return StagTable.INVALID_STAG;
        }
        Object bound = mr.stream();
        if (mr.pd() != pd || (bound != null && bound != stream)) {
            return StagTable.NOT_ASSOCIATED;
        }
        return StagTable.checkRange(mr, to, length, requiredAccess);
    }
}
