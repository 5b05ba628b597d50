package org.jwarp.memory;

/**
 * StagAccess rights of a registered memory region, RFC 5040 §8.1.1 and RFC 5041 §8.2: remote read is
 * what an RDMA Read Request may source, remote write what an RDMA Write may target, local write
 * what an RDMA Read Response (the local Data Sink) may place into.
 */
public final class StagAccess {
    private StagAccess() {
    }

    /** Peer may read through this STag (RDMA Read Request data source). */
    public static final int REMOTE_READ = 1;
    /** Peer may write through this STag (RDMA Write data sink). */
    public static final int REMOTE_WRITE = 1 << 1;
    /** The local endpoint may place into this STag (RDMA Read Response data sink). */
    public static final int LOCAL_WRITE = 1 << 2;
    /** All rights known to this model. */
    public static final int ALL = REMOTE_READ | REMOTE_WRITE | LOCAL_WRITE;

    /** True when {@code granted} includes every right in {@code required}. */
    public static boolean grants(int granted, int required) {
        return (granted & required) == required;
    }
}
