package org.jwarp.soft.verbs;

import org.jwarp.verbs.WcOpcode;
import org.jwarp.verbs.WcStatus;

/** The soft completion queue as its queue pairs fill it (the only implementation is {@code SoftCompletionQueue}). */
public interface CompletionSink {
    /**
     * Adds a completion (reactor thread, or a closing thread when flushing). {@code qpContext} is
     * the QP's user context, stored by reference (no allocation).
     */
    void complete(long wrId, WcStatus status, WcOpcode opcode, int byteLength, int qpNum, Object qpContext,
                  int vendorError, int invalidatedRkey, boolean withInvalidate, boolean solicited);
}
