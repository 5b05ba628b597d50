package org.jwarp.verbs;

import java.util.Objects;

/** What a queue pair is created with (ibv_qp_init_attr): its PD, CQs and queue depths. */
public record QueuePairConfig(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq,
                              int maxSendWr, int maxRecvWr) {
    public QueuePairConfig {
        Objects.requireNonNull(pd, "pd");
        Objects.requireNonNull(sendCq, "sendCq");
        Objects.requireNonNull(recvCq, "recvCq");
        if (maxSendWr < 1 || maxRecvWr < 1) {
            throw new IllegalArgumentException("queue depths must be >= 1: send=" + maxSendWr + " recv=" + maxRecvWr);
        }
    }

    public static QueuePairConfig of(ProtectionDomain pd, CompletionQueue cq, int depth) {
        return new QueuePairConfig(pd, cq, cq, depth, depth);
    }
}
