package org.jwarp.verbs;

/** An opened device (ibv_context): allocates protection domains and completion queues, and connects. */
public interface Device extends AutoCloseable {
    DeviceInfo info();

    ProtectionDomain allocateProtectionDomain() throws RdmaException;

    /** A completion queue with room for {@code entries} completions. */
    CompletionQueue createCompletionQueue(int entries) throws RdmaException;

    /** rdma_cm on this device: listen/accept/reject and connect. */
    ConnectionManager connectionManager();

    @Override
    void close();
}
