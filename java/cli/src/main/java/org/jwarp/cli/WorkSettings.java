package org.jwarp.cli;

import java.util.Map;

/**
 * How the {@code client}/{@code server} workload builds its work requests: SGEs per message
 * (RFC 5041 §5.3: a message gathered from, or scattered into, several local buffers), WRs per post
 * call (a chain), the inline threshold, and whether payload bytes are checked end to end.
 *
 * @param sge        SGEs each message is split into (≥ 1)
 * @param postList   WRs posted per call in the bandwidth run (≥ 1)
 * @param inlineSize inline bytes asked for; messages up to it are posted inline (0: none)
 * @param verify     check the payload bytes and fail on the first mismatch
 * @param srq        receive buffers come from a shared receive queue (RFC 5041 §5.1 buffers shared
 *                   by the QP through {@code ibv_srq}) instead of the QP's own receive queue
 * @param events     wait for completions by sleeping on a completion channel (poll, arm, poll,
 *                   sleep) instead of the CQ's own await
 */
record WorkSettings(int sge, int postList, int inlineSize, boolean verify, boolean srq, boolean events) {
    static final WorkSettings DEFAULT = new WorkSettings(1, 1, 0, false);

    WorkSettings(int sge, int postList, int inlineSize, boolean verify) {
        this(sge, postList, inlineSize, verify, false, false);
    }

    WorkSettings {
        if (sge < 1 || postList < 1 || inlineSize < 0) {
            throw new IllegalArgumentException("--sge >= 1, --post-list >= 1 and --inline-size >= 0 required");
        }
    }

    /** The server buffer's pattern a Read checks (byte i). */
    static byte targetByte(int i) {
        return (byte) (i * 7 + 3);
    }

    void putJson(Map<String, Object> m) {
        m.put("sge", sge);
        m.put("postList", postList);
        m.put("inlineSize", inlineSize);
        m.put("verify", verify);
        m.put("srq", srq);
        m.put("events", events);
    }
}
