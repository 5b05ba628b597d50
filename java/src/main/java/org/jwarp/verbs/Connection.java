package org.jwarp.verbs;

/**
 * An established RDMA connection with its queue pair. Closing it disconnects (graceful close of
 * the LLP stream, RFC 5040 §5.3) and flushes every outstanding work request.
 */
public interface Connection extends AutoCloseable {
    QueuePair queuePair();

    /** What was negotiated, including the peer's IRD, ORD and private data (RFC 6581 §9.1). */
    ConnectionInfo info();

    boolean isOpen();

    @Override
    void close();
}
