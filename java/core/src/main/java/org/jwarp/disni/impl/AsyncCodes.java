package org.jwarp.disni.impl;

import org.jwarp.disni.natives.JwarpNative;

/** The {@code ibv_event_type} values the DiSNI provider maps, as the native library reports them. */
final class AsyncCodes {
    static final int QP_FATAL = JwarpNative.asyncEventCode(JwarpNative.AEC_QP_FATAL);
    static final int QP_REQ_ERR = JwarpNative.asyncEventCode(JwarpNative.AEC_QP_REQ_ERR);
    static final int QP_ACCESS_ERR = JwarpNative.asyncEventCode(JwarpNative.AEC_QP_ACCESS_ERR);
    static final int CQ_ERR = JwarpNative.asyncEventCode(JwarpNative.AEC_CQ_ERR);
    static final int SRQ_LIMIT_REACHED = JwarpNative.asyncEventCode(JwarpNative.AEC_SRQ_LIMIT_REACHED);

    private AsyncCodes() {
    }
}
